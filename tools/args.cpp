#include "tools/args.hpp"

#include <algorithm>

namespace troupe::cli {

std::string args::get(const std::string& flag, const std::string& def) const {
  auto it = values_.find(flag);
  return it == values_.end() || it->second.empty() ? def : it->second.back();
}

std::vector<std::string> args::all(const std::string& flag) const {
  auto it = values_.find(flag);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

bool args::on(const std::string& flag) const { return get(flag, "false") == "true"; }

void args::bad_value(const std::string& flag, const std::string& got) const {
  auto it = takes_.find(flag);
  throw usage_error(flag + " takes " + (it == takes_.end() ? std::string("a value") : it->second) + ", got '" + got +
                    "'");
}

uint64_t args::get_uint(const std::string& flag, uint64_t def) const {
  if (!has(flag)) return def;
  auto s = get(flag);
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    if (!s.empty() && s[0] != '-') v = std::stoull(s, &used);
  } catch (...) {
    used = 0;
  }
  if (s.empty() || used != s.size()) bad_value(flag, s);
  return v;
}

double args::get_double(const std::string& flag, double def) const {
  if (!has(flag)) return def;
  auto s = get(flag);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    used = 0;
  }
  if (s.empty() || used != s.size() || v < 0) bad_value(flag, s);
  return v;
}

args parse_args(int argc, char** argv, int first, const std::vector<flag_spec>& flags) {
  args a;
  auto find = [&](const std::string& name) -> const flag_spec* {
    for (const auto& f : flags)
      if (f.name == name) return &f;
    return nullptr;
  };
  for (const auto& f : flags) a.takes_[f.name] = f.takes;
  // "--flag" is "-flag"; "-flag=value" carries its value.
  auto split = [&](std::string arg) {
    if (arg.size() > 2 && arg[0] == '-' && arg[1] == '-') arg.erase(0, 1);
    std::pair<std::string, std::string> r{arg, ""};
    auto eq = arg.find('=');
    if (arg.size() > 1 && arg[0] == '-' && eq != std::string::npos) r = {arg.substr(0, eq), arg.substr(eq + 1)};
    return std::make_pair(r, eq != std::string::npos);
  };
  // Another known flag where a value should be: the value is missing, not "-d".
  auto is_flag = [&](const std::string& arg) {
    if (arg.size() < 2 || arg[0] != '-') return false;
    return find(split(arg).first.first) != nullptr;
  };
  auto record = [&](const std::string& name, const std::string& value) {
    a.values_[name].push_back(value);
    auto it = std::find_if(a.given_.begin(), a.given_.end(), [&](const auto& p) { return p.first == name; });
    if (it == a.given_.end()) a.given_.emplace_back(name, value);
    else if (!find(name)->multi) it->second = value;
    else it->second += " " + value;
  };
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-')
      throw usage_error("unexpected argument '" + arg + "' (flags start with '-'; each takes at most one value)");
    auto [name_value, has_eq] = split(arg);
    const auto& [name, inline_value] = name_value;
    const flag_spec* spec = find(name);
    if (!spec) throw usage_error("unknown flag '" + name + "'");
    if (spec->takes.empty()) {
      // A switch: gflags' booleans also read -pc=true / -pc=false.
      if (has_eq && inline_value != "true" && inline_value != "false")
        throw usage_error(name + " is a switch (it takes no value, or =true / =false), got '" + arg + "'");
      record(name, has_eq ? inline_value : "true");
      continue;
    }
    if (has_eq) {
      if (inline_value.empty()) throw usage_error(name + " needs a value: " + spec->takes);
      record(name, inline_value);
      continue;
    }
    if (i + 1 >= argc || is_flag(argv[i + 1])) throw usage_error(name + " needs a value: " + spec->takes);
    record(name, argv[++i]);
    if (spec->multi)
      while (i + 1 < argc && std::string(argv[i + 1]).rfind('-', 0) != 0) record(name, argv[++i]);
  }
  return a;
}

std::vector<std::string> comma_items(const std::string& text) {
  std::vector<std::string> r;
  for (std::size_t pos = 0;;) {
    auto comma = text.find(',', pos);
    r.push_back(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) return r;
    pos = comma + 1;
  }
}

} // namespace troupe::cli
