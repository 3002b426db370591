#pragma once
/// OpenVINO's typed properties. Each key carries troupe's property name (OpenVINO's, except
/// ov::device::priorities, which is troupe's DEVICE_PRIORITIES) and makes the same
/// {name, text} pair troupe's own keys make: ov::hint::performance_mode(LATENCY) is
/// {"PERFORMANCE_HINT", "LATENCY"}. Which device takes which property is troupe's business
/// (docs/properties.md): a property a device does not have is an error naming both.
#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <troupe/properties.hpp>
#include <troupe/openvino/any.hpp>
#include <troupe/openvino/element_type.hpp>

namespace ov {

enum class PropertyMutability { RW, RO, WO };

/// A key whose value is a T; read-only keys make no {name, value} pair.
template <class T, PropertyMutability M = PropertyMutability::RW> class Property {
public:
  using value_type = T;
  constexpr explicit Property(const char* name) : name_(name) {}
  constexpr const char* name() const { return name_; }
  constexpr PropertyMutability mutability() const { return M; }
  template <class... Args>
    requires(M != PropertyMutability::RO)
  std::pair<std::string, Any> operator()(Args&&... args) const {
    return {name_, Any(T(std::forward<Args>(args)...))};
  }

private:
  const char* name_;
};

/// A property's name and whether set_property takes it (SUPPORTED_PROPERTIES' entries).
class PropertyName : public std::string {
public:
  PropertyName(const std::string& name = {}, PropertyMutability m = PropertyMutability::RW)
      : std::string(name), mutability_(m) {}
  PropertyName(const char* name, PropertyMutability m = PropertyMutability::RW) : PropertyName(std::string(name), m) {}
  bool is_mutable() const { return mutability_ != PropertyMutability::RO; }

private:
  PropertyMutability mutability_;
};

inline constexpr Property<std::vector<PropertyName>, PropertyMutability::RO> supported_properties{"SUPPORTED_PROPERTIES"};
inline constexpr Property<std::vector<std::string>, PropertyMutability::RO> available_devices{"AVAILABLE_DEVICES"};
inline constexpr Property<uint32_t, PropertyMutability::RO> optimal_number_of_infer_requests{
    "OPTIMAL_NUMBER_OF_INFER_REQUESTS"};
inline constexpr Property<std::vector<std::string>, PropertyMutability::RO> execution_devices{"EXECUTION_DEVICES"};
inline constexpr Property<bool, PropertyMutability::RO> loaded_from_cache{"LOADED_FROM_CACHE"};
inline constexpr Property<std::string> cache_dir{"CACHE_DIR"};
inline constexpr Property<bool> enable_profiling{"PERF_COUNT"};
inline constexpr Property<int32_t> inference_num_threads{"INFERENCE_NUM_THREADS"};

namespace streams {
/// A number of streams, or AUTO / NUMA (text "AUTO", "NUMA").
struct Num {
  constexpr Num() = default;
  constexpr Num(int32_t n) : num(n) {}
  constexpr operator int32_t() const { return num; }
  int32_t num = 0;
};
inline constexpr Num AUTO{-1};
inline constexpr Num NUMA{-2};
inline std::ostream& operator<<(std::ostream& os, const Num& n) {
  if (n.num == AUTO.num) return os << "AUTO";
  if (n.num == NUMA.num) return os << "NUMA";
  return os << n.num;
}
inline std::istream& operator>>(std::istream& is, Num& n) {
  std::string s;
  is >> s;
  if (s == "AUTO") n = AUTO;
  else if (s == "NUMA") n = NUMA;
  else n = Num(troupe::Any(s).as<int>());
  return is;
}
inline constexpr Property<Num> num{"NUM_STREAMS"};
} // namespace streams
inline constexpr Property<streams::Num> num_streams{"NUM_STREAMS"};

namespace detail {
/// OpenVINO's enum text: operator<< writes the name, operator>> reads it or names the value
/// and the names allowed.
template <class E, std::size_t N> struct enum_names {
  std::pair<E, const char*> names[N];
  std::ostream& write(std::ostream& os, E e) const {
    for (const auto& [v, n] : names)
      if (v == e) return os << n;
    return os << static_cast<int>(e);
  }
  std::istream& read(std::istream& is, E& e) const {
    std::string s, all;
    is >> s;
    for (const auto& [v, n] : names) {
      if (s == n) {
        e = v;
        return is;
      }
      if (!all.empty()) all.append(", ");
      all.append(n);
    }
    OPENVINO_THROW("'", s, "' is none of ", all);
  }
};
} // namespace detail

namespace hint {
enum class PerformanceMode { LATENCY = 1, THROUGHPUT = 2, CUMULATIVE_THROUGHPUT = 3 };
inline constexpr detail::enum_names<PerformanceMode, 3> performance_mode_names{
    {{PerformanceMode::LATENCY, "LATENCY"},
     {PerformanceMode::THROUGHPUT, "THROUGHPUT"},
     {PerformanceMode::CUMULATIVE_THROUGHPUT, "CUMULATIVE_THROUGHPUT"}}};
inline std::ostream& operator<<(std::ostream& os, PerformanceMode m) { return performance_mode_names.write(os, m); }
inline std::istream& operator>>(std::istream& is, PerformanceMode& m) { return performance_mode_names.read(is, m); }

enum class Priority { LOW = 0, MEDIUM = 1, HIGH = 2, DEFAULT = MEDIUM };
inline constexpr detail::enum_names<Priority, 3> priority_names{
    {{Priority::LOW, "LOW"}, {Priority::MEDIUM, "MEDIUM"}, {Priority::HIGH, "HIGH"}}};
inline std::ostream& operator<<(std::ostream& os, Priority p) { return priority_names.write(os, p); }
inline std::istream& operator>>(std::istream& is, Priority& p) { return priority_names.read(is, p); }

enum class ExecutionMode { PERFORMANCE = 1, ACCURACY = 2 };
inline constexpr detail::enum_names<ExecutionMode, 2> execution_mode_names{
    {{ExecutionMode::PERFORMANCE, "PERFORMANCE"}, {ExecutionMode::ACCURACY, "ACCURACY"}}};
inline std::ostream& operator<<(std::ostream& os, ExecutionMode m) { return execution_mode_names.write(os, m); }
inline std::istream& operator>>(std::istream& is, ExecutionMode& m) { return execution_mode_names.read(is, m); }

inline constexpr Property<PerformanceMode> performance_mode{"PERFORMANCE_HINT"};
inline constexpr Property<element::Type> inference_precision{"INFERENCE_PRECISION_HINT"};
inline constexpr Property<uint32_t> num_requests{"PERFORMANCE_HINT_NUM_REQUESTS"};
/// troupe has no model priorities: compile_model refuses the property, naming it.
inline constexpr Property<Priority> model_priority{"MODEL_PRIORITY"};
/// troupe has no execution modes: refused the same way.
inline constexpr Property<ExecutionMode> execution_mode{"EXECUTION_MODE_HINT"};
} // namespace hint

namespace device {
/// The devices of MULTI, AUTO and HETERO in priority order: priorities("GPU", "CPU") is
/// {"DEVICE_PRIORITIES", "GPU,CPU"}; also writable on a MULTI compiled model.
struct Priorities : Property<std::string> {
  using Property<std::string>::Property;
  template <class... Args> std::pair<std::string, Any> operator()(Args&&... devices) const {
    std::string list;
    const auto add = [&list](const std::string& device) {
      if (!list.empty()) list.push_back(',');
      list.append(device);
    };
    (add(std::string(std::forward<Args>(devices))), ...);
    return {name(), Any(list)};
  }
};
inline constexpr Priorities priorities{"DEVICE_PRIORITIES"};

/// Properties for one device of a virtual device: properties("CPU", ov::num_streams(2)).
struct Properties : Property<std::string> {
  using Property<std::string>::Property;
  template <class... Props> std::pair<std::string, Any> operator()(const std::string& device, Props&&... props) const {
    auto p = troupe::device_properties(device, detail::to_troupe(AnyMap{std::forward<Props>(props)...}));
    return {p.first, Any(p.second)};
  }
  std::pair<std::string, Any> operator()(const std::string& device, const AnyMap& props) const {
    auto p = troupe::device_properties(device, detail::to_troupe(props));
    return {p.first, Any(p.second)};
  }
};
inline constexpr Properties properties{"DEVICE_PROPERTIES"};

inline constexpr Property<std::string, PropertyMutability::RO> full_name{"FULL_DEVICE_NAME"};
/// "FP32", "BF16", "FP16": what OPTIMIZATION_CAPABILITIES lists.
inline constexpr Property<std::vector<std::string>, PropertyMutability::RO> capabilities{"OPTIMIZATION_CAPABILITIES"};
namespace capability {
inline constexpr const char* FP32 = "FP32";
inline constexpr const char* BF16 = "BF16";
inline constexpr const char* FP16 = "FP16";
} // namespace capability
} // namespace device

} // namespace ov
