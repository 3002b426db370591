#include "tools/latency_stats.hpp"

#include <algorithm>
#include <numeric>

#include <troupe/exception.hpp>

#include "tools/log.hpp"

namespace troupe::cli {

latency_stats compute_latency(std::vector<double> l, uint64_t percentile, std::string data_shape) {
  if (l.empty()) throw Exception("no latencies to compute figures from: no inference ran");
  std::sort(l.begin(), l.end());
  latency_stats s;
  s.percentile = percentile;
  s.data_shape = std::move(data_shape);
  s.min = l.front();
  s.max = l.back();
  s.avg = std::accumulate(l.begin(), l.end(), 0.0) / static_cast<double>(l.size());
  auto at = static_cast<std::size_t>(static_cast<double>(l.size()) / 100.0 * static_cast<double>(percentile));
  s.percentile_value = l[std::min(at, l.size() - 1)];
  return s;
}

void print_latency(const latency_stats& s) {
  if (!s.data_shape.empty()) info("\tData shape: %s", s.data_shape.c_str());
  if (s.percentile == 50) info("\tMedian:     %s ms", ms2(s.percentile_value).c_str());
  else info("\t%llu percentile:    %s ms", static_cast<unsigned long long>(s.percentile), ms2(s.percentile_value).c_str());
  info("\tAverage:    %s ms", ms2(s.avg).c_str());
  info("\tMin:        %s ms", ms2(s.min).c_str());
  info("\tMax:        %s ms", ms2(s.max).c_str());
}

} // namespace troupe::cli
