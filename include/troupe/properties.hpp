#pragma once
/// Property names, spelled as OpenVINO spells them.
#include <string>
#include <utility>
#include <vector>

#include <troupe/any.hpp>

namespace troupe {

enum class performance_mode { latency, throughput, cumulative_throughput };

// Read-write, per device.
inline constexpr Property<int> inference_num_threads{"INFERENCE_NUM_THREADS"};
inline constexpr Property<int> num_streams{"NUM_STREAMS"};
inline constexpr Property<element_type> inference_precision{"INFERENCE_PRECISION_HINT"};
inline constexpr Property<bool> enable_profiling{"PERF_COUNT"};
/// "LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT"
inline constexpr Property<std::string> performance_hint{"PERFORMANCE_HINT"};
inline constexpr Property<int> num_requests{"PERFORMANCE_HINT_NUM_REQUESTS"};

// Read-only.
inline constexpr Property<std::string> available_devices{"AVAILABLE_DEVICES"};
inline constexpr Property<std::string> full_device_name{"FULL_DEVICE_NAME"};
inline constexpr Property<std::string> supported_properties{"SUPPORTED_PROPERTIES"};
inline constexpr Property<std::string> optimization_capabilities{"OPTIMIZATION_CAPABILITIES"};
inline constexpr Property<int> optimal_number_of_infer_requests{"OPTIMAL_NUMBER_OF_INFER_REQUESTS"};
inline constexpr Property<std::string> execution_devices{"EXECUTION_DEVICES"};
inline constexpr Property<std::string> cache_dir{"CACHE_DIR"};
inline constexpr Property<bool> loaded_from_cache{"LOADED_FROM_CACHE"};

// Virtual devices (HETERO).
/// "GPU,CPU": the devices of HETERO, highest priority first (when the device string has no list).
inline constexpr Property<std::string> device_priorities{"DEVICE_PRIORITIES"};
/// OpenVINO's ov::device::properties("CPU", ...): properties for one device of a virtual
/// device only, e.g. `troupe::device_properties("CPU", {troupe::num_streams(2)})`.
inline std::pair<const std::string, Any> device_properties(const std::string& device, const AnyMap& props) {
  std::string text = "{";
  for (const auto& [k, v] : props) {
    const std::string& s = v.as_string();
    // A value with a separator in it (a list of op types) travels in double quotes.
    const bool quote = s.find_first_of(",:{}") != std::string::npos;
    text += (text.size() > 1 ? "," : "") + k + ":" + (quote ? "\"" + s + "\"" : s);
  }
  return {device, Any(text + "}")};
}

} // namespace troupe
