#pragma once
/// The properties a device accepts, their validation (errors name property, device, value and
/// the allowed values) and their resolution into streams/threads with OpenVINO's semantics.
/// Each device kind has its own set: a GPU has no INFERENCE_NUM_THREADS, a CPU no SUBGROUP_SIZE.
#include <string>
#include <vector>

#include <troupe/any.hpp>

#include "kernels/device.hpp"

namespace troupe {

/// What kind of device a kernels::device is (by its name: "CPU", "GPU.N", "REFERENCE").
enum class device_kind { cpu, gpu, reference };
device_kind kind_of(const kernels::device& dev);

/// Bits of property_spec::kinds.
inline constexpr unsigned on_cpu = 1, on_gpu = 2, on_reference = 4, on_all = on_cpu | on_gpu | on_reference;
unsigned kind_bit(device_kind k);

/// One property of one or more device kinds: the single list the runtime validates, lists and
/// defaults from, and that docs/gen prints as docs/properties.md. A name may have one row per
/// kind where its values or meaning differ.
struct property_spec {
  const char* name;
  bool writable;
  unsigned kinds; ///< on_cpu | on_gpu | on_reference
  /// Writable: the allowed values, as errors state them. Read-only: what the value looks like.
  const char* values;
  /// Writable: what get_property answers before any set_property; read-only: "".
  const char* default_value;
  /// The default depends on the device (then default_value describes it): GPU_F16_ARITHMETIC.
  bool computed_default;
  const char* meaning;
};
/// Read-only rows first; the common read-only rows (on_all) in the order devices list them.
const std::vector<property_spec>& property_table();
/// The row of `name` for `kind`, or nullptr.
const property_spec* find_property(device_kind kind, const std::string& name);

/// Properties a CompiledModel answers (CompiledModel::get_property).
struct compiled_property_spec {
  const char* name;
  const char* on; ///< "all", "GPU.N", "HETERO" or "MULTI": which compiled models answer it
  const char* meaning;
};
const std::vector<compiled_property_spec>& compiled_model_property_table();

/// Read-write properties of this device, validated by `validate_property`.
const std::vector<std::string>& writable_properties(const kernels::device& dev);
/// Read-only facts answered by Core::get_property: the common ones plus the device's info() keys.
std::vector<std::string> readonly_properties(const kernels::device& dev);

/// Throws naming the property and the device when `name` is unknown or read-only, and the
/// value and allowed values when the value is bad.
/// CACHE_DIR's check: empty, or a writable folder (created when missing). Throws naming `what`
/// ("property CACHE_DIR of device GPU"), the folder and the reason.
void check_cache_dir(const std::string& dir, const std::string& what);

void validate_property(const std::string& device_name, const kernels::device& dev, const std::string& name,
                       const Any& value);

/// What a compiled model runs with.
struct resolved_config {
  std::string hint = "LATENCY";
  int streams = 1;
  int threads_per_stream = 1; ///< resolved: never 0
  bool profiling = false;
  element_type precision = element_type::f32;
  kernels::compile_config compile;
  std::string excluded_ops; ///< EXCLUDED_OPS as given, or absent (then the environment's)
  bool excluded_ops_given = false;
  int64_t fail_every = 0; ///< FAIL_EVERY as given, when fail_every_given (else the environment's)
  bool fail_every_given = false;
  std::size_t runtime_cache_capacity = 128; ///< RUNTIME_CACHE_CAPACITY (0: no bound)
};

/// `props` already validated (device defaults merged with the call's own) for `dev`.
resolved_config resolve_config(const AnyMap& props, const kernels::device& dev);

/// GPU_F16_ARITHMETIC's default: YES on a GPU with float16 support whose DEVICE_TYPE is not
/// cpu (there f16 math is native), NO elsewhere.
bool default_f16_arithmetic(const kernels::device& dev);

/// Hardware threads this process may use.
int core_count();

} // namespace troupe
