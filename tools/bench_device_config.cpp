#include "tools/bench_device_config.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "tools/log.hpp"

namespace troupe::cli {

bool has_device_list(const std::string& device) {
  for (const std::string v : {"HETERO:", "MULTI:", "AUTO:"})
    if (device.rfind(v, 0) == 0) return true;
  return false;
}

bool spreads_requests(const std::string& device) {
  for (const std::string v : {"MULTI", "AUTO"})
    if (device == v || device.rfind(v + ":", 0) == 0) return true;
  return false;
}

device_setup configure_device(Core& core, const bench_options& o, device_configs file) {
  const std::string& dev = o.device;
  // A section for the device type ("GPU") applies to a device of that type ("GPU.0"); one for
  // a virtual device ("HETERO") to it with any list ("HETERO:GPU,CPU").
  std::string section = dev;
  const std::string type = has_device_list(dev) ? dev.substr(0, dev.find(':')) : device_type(dev);
  if (!file.count(dev) && file.count(type)) {
    section = type;
    file[dev] = file[section];
    file.erase(section);
  }
  const AnyMap from_file = file.count(dev) ? file[dev] : AnyMap{};
  const auto supported = core.get_property(dev, "SUPPORTED_PROPERTIES").as<std::vector<std::string>>();
  auto supports = [&](const std::string& p) { return std::find(supported.begin(), supported.end(), p) != supported.end(); };

  AnyMap cli;                  // what the command line sets
  std::set<std::string> erase; // what the command line removes
  // The hint. benchmark_app's default is THROUGHPUT (LATENCY with -api sync); a hint from the
  // config file stands unless -hint is given.
  if (o.hint == "none") {
    erase.insert("PERFORMANCE_HINT");
  } else if (!o.hint.empty()) {
    std::string v = o.hint == "latency" ? "LATENCY" : "THROUGHPUT";
    if (o.hint == "cumulative_throughput" && spreads_requests(dev)) v = "CUMULATIVE_THROUGHPUT";
    else if (o.hint == "cumulative_throughput")
      warn("-hint cumulative_throughput: %s is one device, where it means THROUGHPUT (as it does for a single "
           "device in OpenVINO); its PERFORMANCE_HINT is set to THROUGHPUT.", dev.c_str());
    cli["PERFORMANCE_HINT"] = v;
  } else if (!from_file.count("PERFORMANCE_HINT")) {
    const char* v = o.api == "sync" ? "LATENCY" : "THROUGHPUT";
    warn("Performance hint was not explicitly specified in command line. Device(%s) performance hint will be set "
         "to %s.", dev.c_str(), v);
    cli["PERFORMANCE_HINT"] = v;
  }
  if (o.nireq != 0) cli["PERFORMANCE_HINT_NUM_REQUESTS"] = static_cast<int64_t>(o.nireq);

  // Performance counters: -pc, else the file, else on when a report, graph or sort needs them.
  auto file_pc = from_file.find("PERF_COUNT");
  bool file_pc_on = false;
  if (file_pc != from_file.end()) {
    try {
      file_pc_on = file_pc->second.as<bool>();
    } catch (const Exception& e) {
      throw Exception("-load_config '" + o.load_config + "': key '" + section + ".PERF_COUNT': " + e.what());
    }
  }
  bool pc = o.pc;
  if (o.pc_given) {
    pc = o.pc;
  } else if (file_pc_on) {
    warn("Performance counters for %s device is turned on. To print results use -pc option.", dev.c_str());
    pc = true;
  } else if (o.report_type == "average_counters" || o.report_type == "detailed_counters" ||
             o.report_type == "sort_detailed_counters") {
    warn("Turn on performance counters for %s device since report type is %s.", dev.c_str(), o.report_type.c_str());
    pc = true;
  } else if (!o.exec_graph_path.empty()) {
    warn("Turn on performance counters for %s device due to execution graph dumping.", dev.c_str());
    pc = true;
  } else if (!o.pcsort.empty()) {
    warn("Turn on sorted performance counters for %s device since pcsort value is %s.", dev.c_str(), o.pcsort.c_str());
    pc = true;
  }
  if (!file_pc_on || o.pc_given) cli["PERF_COUNT"] = pc;

  if (o.nthreads_given) {
    if (supports("INFERENCE_NUM_THREADS")) cli["INFERENCE_NUM_THREADS"] = static_cast<int64_t>(o.nthreads);
    else warn("-nthreads: device %s has no INFERENCE_NUM_THREADS (its work runs in shaders); ignored.", dev.c_str());
  }
  // HETERO:A,B or MULTI:A,B with DEVICE:VALUE entries (-nstreams CPU:2,GPU:1): each value goes
  // to its own device of the list, as benchmark_app does; a plain value goes to every device.
  const bool hetero = has_device_list(dev);
  std::map<std::string, AnyMap> per_device;
  auto per_device_value = [&](const char* flag, const std::string& text, const char* property) {
    if (!hetero || text.find(':') == std::string::npos) return false;
    auto members = comma_items(dev.substr(dev.find(':') + 1)); // as written
    for (auto& m : members) m = m.substr(0, m.find('('));          // MULTI's GPU(4)
    auto names = [](const std::string& member, const std::string& d) { return d == member || d == device_type(member); };
    const auto entries = comma_items(text);
    for (const auto& item : entries) {
      const auto d = item.substr(0, item.find(':'));
      if (std::none_of(members.begin(), members.end(), [&](const std::string& m) { return names(m, d); }))
        throw usage_error(std::string(flag) + " '" + text + "' sets a value for device '" + d +
                          "', which is not in the list of '" + dev + "' (-d)");
    }
    for (const auto& member : members) {
      std::string only; // the entries for this member
      for (const auto& item : entries)
        if (names(member, item.substr(0, item.find(':')))) only += (only.empty() ? "" : ",") + item;
      if (!only.empty()) per_device[member][property] = value_for_device(flag, only, member);
    }
    return true;
  };
  if (!o.nstreams.empty() && !per_device_value("-nstreams", o.nstreams, "NUM_STREAMS")) {
    if (!supports("NUM_STREAMS"))
      throw usage_error("-nstreams: device " + dev + " has no NUM_STREAMS property");
    cli["NUM_STREAMS"] = value_for_device("-nstreams", o.nstreams, dev);
  }
  if (!o.infer_precision.empty() && !per_device_value("-infer_precision", o.infer_precision, "INFERENCE_PRECISION_HINT")) {
    if (!supports("INFERENCE_PRECISION_HINT"))
      throw usage_error("-infer_precision: device " + dev + " has no INFERENCE_PRECISION_HINT property");
    cli["INFERENCE_PRECISION_HINT"] = value_for_device("-infer_precision", o.infer_precision, dev);
  }
  for (const auto& [member, props] : per_device) cli.insert(device_properties(member, props));

  // The file's own values for this device, where the command line leaves them, are checked now
  // so that an error names the file and the key.
  AnyMap kept;
  for (const auto& [k, v] : from_file)
    if (!cli.count(k) && !erase.count(k)) kept[k] = v;
  check_config(core, dev, kept, o.load_config, section);

  device_setup r;
  r.compile = kept;
  for (const auto& [k, v] : cli) r.compile[k] = v;
  r.perf_counts = r.compile.count("PERF_COUNT") && r.compile.at("PERF_COUNT").as<bool>();
  r.config = std::move(file);
  r.config[dev] = r.compile;
  return r;
}

} // namespace troupe::cli
