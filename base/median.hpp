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

} // namespace troupe
