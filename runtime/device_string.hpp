#pragma once
/// OpenVINO's device strings: a plain device ("CPU", "GPU", "GPU.1") or a virtual device with
/// its list in priority order ("HETERO:GPU,CPU", "MULTI:GPU(2),CPU", "AUTO:-CPU"), and the
/// nested property maps that route properties to the devices of a virtual device.
#include <string>
#include <vector>

#include <troupe/any.hpp>

namespace troupe {

/// One entry of a virtual device's list.
struct listed_device {
  std::string name; ///< as written: "GPU", "GPU.1", "CPU"
  int requests = 0; ///< "GPU(4)": 4; 0 when not given
};

struct device_string {
  std::string virtual_device;         ///< "HETERO", "MULTI", "AUTO", "BATCH", or "" for a plain device
  std::string device;                 ///< the plain device's name, when virtual_device is ""
  std::vector<listed_device> devices; ///< the list after ':' (may be empty: then DEVICE_PRIORITIES)
  std::vector<std::string> excluded;  ///< AUTO's "-CPU" entries
};

/// Throws naming the string and what is wrong: an empty entry, a device listed twice, a
/// malformed "(n)", a virtual device inside a list, an exclusion outside AUTO.
device_string parse_device_string(const std::string& s);

/// A device's canonical name: "GPU" is "GPU.0" (as in OpenVINO, the first GPU); any other
/// name is its own. Every place that compares device names goes through this.
std::string canonical_device_name(const std::string& name);

/// A comma-separated DEVICE_PRIORITIES value as a list, checked like a device string's list.
std::vector<listed_device> parse_priorities(const std::string& owner, const std::string& value);

/// "{GPU:{PERF_COUNT:YES},CPU:{NUM_STREAMS:2}}" (OpenVINO's text form of a nested AnyMap) and
/// back. A value holding ',', ':', '{' or '}' is written in double quotes
/// ({GPU:{EXCLUDED_OPS:"Resize,Conv"}}). Throws naming `what` and the position.
std::map<std::string, AnyMap> parse_device_properties(const std::string& what, const std::string& text);
std::string write_device_properties(const std::map<std::string, AnyMap>& m);

} // namespace troupe
