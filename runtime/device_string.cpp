#include "runtime/device_string.hpp"

#include <algorithm>
#include <cctype>

#include <troupe/exception.hpp>

namespace troupe {

namespace {

const std::vector<std::string>& virtual_devices() {
  static const std::vector<std::string> v{"HETERO", "MULTI", "AUTO", "BATCH"};
  return v;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

/// The list of `owner` (a device string or a property), entry by entry.
void parse_list(const std::string& owner, const std::string& list, bool allow_exclusions, device_string& out) {
  for (auto entry : split(list, ',')) {
    entry = trim(entry);
    if (entry.empty()) throw Exception(owner + ": an empty entry in the device list '" + list + "'");
    if (entry[0] == '-') {
      if (!allow_exclusions)
        throw Exception(owner + ": '" + entry + "': only AUTO takes exclusions ('-DEVICE')");
      out.excluded.push_back(trim(entry.substr(1)));
      if (out.excluded.back().empty()) throw Exception(owner + ": '-' names no device");
      continue;
    }
    listed_device d;
    if (auto open = entry.find('('); open != std::string::npos) {
      const auto close = entry.find(')', open);
      const std::string n = close == std::string::npos ? "" : entry.substr(open + 1, close - open - 1);
      const bool digits = !n.empty() && n.size() < 6 &&
                          std::all_of(n.begin(), n.end(), [](unsigned char c) { return std::isdigit(c); });
      if (!digits || close != entry.size() - 1 || std::stoi(n) < 1)
        throw Exception(owner + ": '" + entry + "': a request count is written DEVICE(n) with n >= 1");
      d.requests = std::stoi(n);
      entry = trim(entry.substr(0, open));
    }
    for (const auto& v : virtual_devices())
      if (entry == v || entry.rfind(v + ":", 0) == 0)
        throw Exception(owner + ": '" + entry + "': a virtual device cannot be listed inside another");
    // A node's device (DEV@host:port) has its one ':' after the '@'.
    const auto at = entry.find('@');
    const std::string local = entry.substr(0, at);
    const std::string node = at == std::string::npos ? "" : entry.substr(at + 1);
    if (local.find_first_of(" :(){}@") != std::string::npos || node.find_first_of(" (){}@") != std::string::npos ||
        (at != std::string::npos && (local.empty() || node.empty())))
      throw Exception(owner + ": '" + entry + "' is not a device name");
    for (const auto& seen : out.devices)
      if (seen.name == entry) throw Exception(owner + ": device '" + entry + "' is listed twice");
    d.name = entry;
    out.devices.push_back(d);
  }
}

} // namespace

device_string parse_device_string(const std::string& s) {
  device_string r;
  const std::string owner = "device '" + s + "'";
  for (const auto& v : virtual_devices()) {
    if (s == v) {
      r.virtual_device = v;
      return r;
    }
    if (s.rfind(v + ":", 0) == 0) {
      r.virtual_device = v;
      const std::string list = s.substr(v.size() + 1);
      if (trim(list).empty()) throw Exception(owner + ": the device list after '" + v + ":' is empty");
      parse_list(owner, list, v == "AUTO", r);
      return r;
    }
  }
  if (trim(s).empty()) throw Exception("the device name is empty");
  r.device = s;
  return r;
}

std::vector<listed_device> parse_priorities(const std::string& owner, const std::string& value) {
  if (trim(value).empty()) throw Exception(owner + ": DEVICE_PRIORITIES is empty");
  device_string r;
  parse_list(owner + ": DEVICE_PRIORITIES", value, false, r);
  return r.devices;
}

namespace {

struct map_reader {
  const std::string& what;
  const std::string& s;
  std::size_t at = 0;

  [[noreturn]] void fail(const std::string& why) const {
    throw Exception(what + ": " + why + " at character " + std::to_string(at) + " of '" + s + "'");
  }
  void skip() {
    while (at < s.size() && std::isspace(static_cast<unsigned char>(s[at]))) ++at;
  }
  void expect(char c) {
    skip();
    if (at >= s.size() || s[at] != c) fail(std::string("expected '") + c + "'");
    ++at;
  }
  bool next_is(char c) {
    skip();
    return at < s.size() && s[at] == c;
  }
  std::string word() {
    skip();
    if (at < s.size() && s[at] == '"') { // a quoted value may hold , : { }
      const auto close = s.find('"', at + 1);
      if (close == std::string::npos) fail("unterminated '\"'");
      auto w = s.substr(at + 1, close - at - 1);
      at = close + 1;
      return w;
    }
    const auto b = at;
    while (at < s.size() && std::string(",:{}").find(s[at]) == std::string::npos) ++at;
    auto w = trim(s.substr(b, at - b));
    if (w.empty()) fail("expected a name or a value");
    return w;
  }
  /// "{k:v,k:v}" with `value` reading each v.
  template <class F> void object(F value) {
    expect('{');
    if (next_is('}')) {
      ++at;
      return;
    }
    while (true) {
      auto k = word();
      expect(':');
      value(k);
      if (next_is('}')) {
        ++at;
        return;
      }
      expect(',');
    }
  }
};

} // namespace

std::map<std::string, AnyMap> parse_device_properties(const std::string& what, const std::string& text) {
  std::map<std::string, AnyMap> r;
  map_reader in{what, text};
  in.object([&](const std::string& device) {
    if (r.count(device)) in.fail("device '" + device + "' appears twice");
    auto& props = r[device];
    in.object([&](const std::string& key) {
      if (props.count(key)) in.fail("property '" + key + "' of '" + device + "' appears twice");
      props[key] = in.word();
    });
  });
  in.skip();
  if (in.at != text.size()) in.fail("unexpected text after the closing '}'");
  return r;
}

std::string write_device_properties(const std::map<std::string, AnyMap>& m) {
  std::string out = "{";
  for (const auto& [dev, props] : m) {
    if (out.size() > 1) out += ",";
    out += dev + ":{";
    bool first = true;
    for (const auto& [k, v] : props) {
      const std::string& s = v.as_string();
      const bool quote = s.find_first_of(",:{}") != std::string::npos;
      out += (first ? "" : ",") + k + ":" + (quote ? "\"" + s + "\"" : s);
      first = false;
    }
    out += "}";
  }
  return out + "}";
}

std::string canonical_device_name(const std::string& name) { return name == "GPU" ? "GPU.0" : name; }

} // namespace troupe
