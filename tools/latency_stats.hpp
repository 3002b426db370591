#pragma once
/// Latency figures as benchmark_app computes them.
#include <cstdint>
#include <string>
#include <vector>

namespace troupe::cli {

struct latency_stats {
  double percentile_value = 0; ///< the median when the percentile is 50
  double avg = 0, min = 0, max = 0;
  uint64_t percentile = 50;
  std::string data_shape; ///< for -pcseq groups; empty otherwise
};

/// benchmark_app's pick: the sorted latencies' element at index count * p / 100 (so the
/// "median" of an even count is the upper middle one), kept inside the list for p = 100.
latency_stats compute_latency(std::vector<double> latencies_ms, uint64_t percentile, std::string data_shape = "");

/// The `[ INFO ]` lines under "Latency:".
void print_latency(const latency_stats& s);

} // namespace troupe::cli
