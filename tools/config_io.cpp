#include "tools/config_io.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tools/file_io.hpp"

namespace troupe::cli {

namespace {

/// Device names troupe knows, present on this machine or not: a config file may carry a GPU
/// section to a machine without one.
bool known_device(const std::string& name) {
  if (name == "CPU" || name == "GPU" || name == "REFERENCE") return true;
  // GPU.<n>; std::regex would do, but GCC 12 warns (-Werror) inside it under the sanitizers.
  const auto digits = name.rfind("GPU.", 0) == 0 ? name.substr(4) : std::string();
  return !digits.empty() && std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); });
}

[[noreturn]] void bad(const std::string& path, const std::string& key, const std::string& why) {
  throw Exception("-load_config '" + path + "'" + (key.empty() ? "" : ": key '" + key + "'") + ": " + why);
}

} // namespace

std::string device_type(const std::string& device) { return device.substr(0, device.find_first_of(".(")); }

device_configs load_config(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const Exception& e) {
    throw Exception(std::string("-load_config: ") + e.what());
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    bad(path, "", std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object())
    bad(path, "", std::string("expected an object of devices, as {\"CPU\": {\"NUM_STREAMS\": \"2\"}}; got ") +
                      j.type_name());
  device_configs r;
  for (const auto& [device, props] : j.items()) {
    if (device_type(device) == "BATCH" || device.rfind("BATCH:", 0) == 0)
      bad(path, device, "troupe has no BATCH device (automatic batching); give the batch in the model's shape (-b)");
    // HETERO, MULTI and AUTO: a section for the virtual device, with or without its list
    // ("HETERO" or "HETERO:GPU,CPU"), checked against -d's device when it is used.
    const auto kind = device.substr(0, device.find(':'));
    const bool virtual_device = kind == "HETERO" || kind == "MULTI" || kind == "AUTO";
    if (!virtual_device && !known_device(device))
      bad(path, device, "unknown device; troupe's devices are CPU, GPU, GPU.<n>, HETERO, MULTI and AUTO");
    if (!props.is_object())
      bad(path, device, std::string("expected an object of properties, as {\"NUM_STREAMS\": \"2\"}; got ") +
                            props.type_name());
    auto& m = r[device];
    for (const auto& [name, value] : props.items()) {
      if (!value.is_string())
        bad(path, device + "." + name,
            std::string("expected a string, as benchmark_app writes every value (e.g. \"2\", \"YES\"); got ") +
                value.type_name() + " " + value.dump());
      m[name] = Any(value.get<std::string>());
    }
  }
  return r;
}

void dump_config(const std::string& path, const device_configs& configs) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [device, props] : configs) {
    j[device] = nlohmann::json::object();
    for (const auto& [name, value] : props) j[device][name] = value.as_string();
  }
  try {
    write_file(path, j.dump(4) + "\n");
  } catch (const Exception& e) {
    throw Exception(std::string("-dump_config: ") + e.what());
  }
}

void check_config(Core& core, const std::string& device, const AnyMap& props, const std::string& path,
                  const std::string& section) {
  for (const auto& [name, value] : props) {
    try {
      core.set_property(device, {{name, value}});
    } catch (const Exception& e) {
      bad(path, section + "." + name, e.what());
    }
  }
}

} // namespace troupe::cli
