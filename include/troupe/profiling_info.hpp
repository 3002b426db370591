#pragma once
#include <chrono>
#include <string>

namespace troupe {

/// One performance counter, as ov::ProfilingInfo.
struct ProfilingInfo {
  enum class Status { NOT_RUN, OPTIMIZED_OUT, EXECUTED };
  Status status = Status::NOT_RUN;
  std::chrono::microseconds real_time{0};
  std::chrono::microseconds cpu_time{0};
  std::string node_name;
  std::string exec_type;
  std::string node_type;
};

} // namespace troupe
