#pragma once
/// -pc and -pcsort: each request's per-op counters printed after the measurement, in the
/// columns benchmark_app prints them (names are not cut short).
#include <chrono>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

namespace troupe::cli {

/// NOT_RUN, OPTIMIZED_OUT or EXECUTED, as benchmark_app's reports and the exec graph name them.
const char* status_name(ProfilingInfo::Status s);
/// Milliseconds, as the counters are printed and reported.
double ms(std::chrono::microseconds us);

/// `sort`: "" (-pc: model order, every op), "no_sort" (model order), "sort" (slowest first),
/// "simple_sort" (slowest first, executed ops only); the sorted forms add each op's share.
void print_counters(const std::vector<ProfilingInfo>& pc, const std::string& full_device_name,
                    const std::string& sort);

} // namespace troupe::cli
