#pragma once
/// benchmark_app's -load_config / -dump_config files: one JSON object per device, every
/// value a string, e.g. {"CPU": {"NUM_STREAMS": "2", "PERF_COUNT": "NO"}, "GPU": {...}}.
#include <map>
#include <string>

#include <troupe/troupe.hpp>

namespace troupe::cli {

using device_configs = std::map<std::string, AnyMap>;

/// Reads and checks the file's shape and device names; errors name the file, the key and why.
device_configs load_config(const std::string& path);

/// Writes `configs` in the same format (nlohmann-json, indented).
void dump_config(const std::string& path, const device_configs& configs);

/// "GPU.1" -> "GPU": a section for a device type applies to each device of that type.
std::string device_type(const std::string& device);

/// Checks each property of `props` with the runtime (Core::set_property validates names and
/// values) so that a bad one names the file and key (`section`.NAME, `section` being the
/// file's key for the device); the values also become `device`'s defaults.
void check_config(Core& core, const std::string& device, const AnyMap& props, const std::string& path,
                  const std::string& section);

} // namespace troupe::cli
