#pragma once
/// -pc and -pcsort: each request's per-op counters printed after the measurement, in the
/// columns benchmark_app prints them (names are not cut short).
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

namespace troupe::cli {

/// NOT_RUN, OPTIMIZED_OUT or EXECUTED, as benchmark_app's reports and the exec graph name them.
const char* status_name(ProfilingInfo::Status s);
/// Milliseconds, as the counters are printed and reported.
double ms(std::chrono::microseconds us);

/// HETERO_PLACEMENT=COST's prediction for a compiled model: its HETERO_PREDICTED_TIMES as op
/// name -> microseconds and its HETERO_PREDICTION; empty for any other compiled model.
struct predicted_times {
  std::map<std::string, double> us;
  std::string summary;
};
predicted_times predicted_times_of(const CompiledModel& cm);

/// `sort`: "" (-pc: model order, every op), "no_sort" (model order), "sort" (slowest first),
/// "simple_sort" (slowest first, executed ops only); the sorted forms add each op's share.
/// With a prediction, each row it covers gets its predicted time beside the measured one
/// (HETERO's rows are "subgraphN: <op>"), and the summary closes the table.
void print_counters(const std::vector<ProfilingInfo>& pc, const std::string& full_device_name,
                    const std::string& sort, const predicted_times& predicted = {});

} // namespace troupe::cli
