#pragma once
/// The median of timings (calibration, benchmarks): the middle value, or the mean of the two
/// middle ones; 0 for none.
#include <algorithm>
#include <vector>

namespace troupe {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
  const double upper = v[n / 2];
  if (n % 2) return upper;
  return 0.5 * (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2)) + upper);
}

/// The value at fraction `p` (0..1) of the sorted timings, by rank (p99: 0.99); 0 for none.
inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

} // namespace troupe
