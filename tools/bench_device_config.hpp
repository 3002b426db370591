#pragma once
/// Step 3 of bench: the target device's properties from -load_config and the command line
/// (the command line wins), as benchmark_app sets them.
#include "tools/bench_options.hpp"
#include "tools/config_io.hpp"

namespace troupe::cli {

struct device_setup {
  device_configs config; ///< every device's properties, as -dump_config writes them
  AnyMap compile;        ///< the target device's: what compile_model gets
  bool perf_counts = false;
};

/// `file`: the -load_config file's sections (empty without one). Properties the file sets for
/// the target device are checked with the runtime so that errors name the file and key.
device_setup configure_device(Core& core, const bench_options& o, device_configs file);

/// "HETERO:...", "MULTI:...", "AUTO:...": a virtual device with its list written out.
bool has_device_list(const std::string& device);
/// MULTI or AUTO: whole requests spread over devices (CUMULATIVE_THROUGHPUT applies).
bool spreads_requests(const std::string& device);

} // namespace troupe::cli
