#include "tools/perf_counters.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace troupe::cli {

const char* status_name(ProfilingInfo::Status s) {
  switch (s) {
  case ProfilingInfo::Status::NOT_RUN: return "NOT_RUN";
  case ProfilingInfo::Status::OPTIMIZED_OUT: return "OPTIMIZED_OUT";
  case ProfilingInfo::Status::EXECUTED: return "EXECUTED";
  }
  return "INVALID_STATUS";
}

double ms(std::chrono::microseconds us) { return static_cast<double>(us.count()) / 1000.0; }

predicted_times predicted_times_of(const CompiledModel& cm) {
  predicted_times p;
  try {
    p.summary = cm.get_property("HETERO_PREDICTION").as_string();
    std::istringstream lines(cm.get_property("HETERO_PREDICTED_TIMES").as_string());
    for (std::string line; std::getline(lines, line);)
      if (auto space = line.find(' '); space != std::string::npos) p.us[line.substr(space + 1)] = std::atof(line.c_str());
  } catch (const Exception&) {
    return {}; // not HETERO
  }
  return p;
}

void print_counters(const std::vector<ProfilingInfo>& pc, const std::string& full_device_name,
                    const std::string& sort, const predicted_times& predicted) {
  std::chrono::microseconds total{0}, total_cpu{0};
  for (const auto& p : pc) {
    if (p.real_time.count() > 0) total += p.real_time;
    if (p.cpu_time.count() > 0) total_cpu += p.cpu_time;
  }
  std::vector<ProfilingInfo> rows = pc;
  if (sort == "sort" || sort == "simple_sort")
    std::stable_sort(rows.begin(), rows.end(),
                     [](const ProfilingInfo& a, const ProfilingInfo& b) { return a.real_time > b.real_time; });
  std::size_t width = 20;
  for (const auto& p : rows) width = std::max(width, p.node_name.size());
  for (const auto& p : rows) {
    if (sort == "simple_sort" && p.status != ProfilingInfo::Status::EXECUTED) continue;
    std::printf("%-*s %-20s layerType: %-20s execType: %-24s realTime (ms): %-10.3f cpuTime (ms): %-10.3f",
                static_cast<int>(width), p.node_name.c_str(), status_name(p.status), p.node_type.c_str(),
                p.exec_type.c_str(), ms(p.real_time), ms(p.cpu_time));
    if (!sort.empty()) {
      const double share = total.count() ? 100.0 * static_cast<double>(p.real_time.count()) / static_cast<double>(total.count()) : 0;
      if (share >= 0.005) std::printf(" proportion: %.2f%%", share);
      else std::printf(" proportion: N/A");
    }
    if (!predicted.us.empty()) {
      std::string op = p.node_name;
      if (op.rfind("subgraph", 0) == 0)
        if (auto colon = op.find(": "); colon != std::string::npos) op = op.substr(colon + 2);
      if (auto it = predicted.us.find(op); it != predicted.us.end()) std::printf(" predicted (ms): %.3f", it->second / 1000);
    }
    std::printf("\n");
  }
  std::printf("Total time: %.3f milliseconds\n", ms(total));
  if (sort.empty()) std::printf("Total CPU time: %.3f milliseconds\n", ms(total_cpu));
  if (!predicted.summary.empty()) std::printf("Predicted (HETERO_PLACEMENT): %s\n", predicted.summary.c_str());
  std::printf("\nFull device name: %s\n\n", full_device_name.c_str());
  std::fflush(stdout);
}

} // namespace troupe::cli
