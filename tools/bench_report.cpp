#include "tools/bench_report.hpp"

#include <algorithm>

#include "tools/file_io.hpp"
#include "tools/perf_counters.hpp"
#include "tools/log.hpp"

namespace troupe::cli {

namespace {

/// A CSV field as benchmark_app's report prints values: doubles with 6 decimals.
std::string csv_value(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return strf("%f", v.get<double>());
  return v.dump();
}

std::string path_in(const std::string& folder, const std::string& name) {
  return (folder.empty() ? std::string(".") : folder) + "/" + name;
}

bool by_time_desc(const ProfilingInfo& a, const ProfilingInfo& b) { return a.real_time > b.real_time; }

void counters_csv(std::string& out, const std::vector<ProfilingInfo>& pc, bool sorted) {
  std::chrono::microseconds total{0}, total_cpu{0};
  out += sorted ? "layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms); %;\n"
                : "layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms);\n";
  std::vector<ProfilingInfo> rows = pc;
  if (sorted) {
    for (const auto& p : pc)
      if (p.status == ProfilingInfo::Status::EXECUTED) total += p.real_time, total_cpu += p.cpu_time;
    std::stable_sort(rows.begin(), rows.end(), by_time_desc);
  }
  for (const auto& p : rows) {
    if (sorted && p.status != ProfilingInfo::Status::EXECUTED) continue;
    out += p.node_name + ";" + status_name(p.status) + ";" + p.node_type + ";" + p.exec_type + ";" +
           strf("%f;%f;", ms(p.real_time), ms(p.cpu_time));
    if (sorted) out += strf("%f;", total.count() ? 100.0 * static_cast<double>(p.real_time.count()) / static_cast<double>(total.count()) : 0.0);
    out += "\n";
    if (!sorted) total += p.real_time, total_cpu += p.cpu_time;
  }
  out += strf("Total;;;;%.3f;%.3f;", ms(total), ms(total_cpu));
  if (sorted) out += "100.000;";
  out += "\n\n";
}

nlohmann::json counters_json(const std::vector<ProfilingInfo>& pc, bool sorted) {
  std::chrono::microseconds total{0}, total_cpu{0};
  for (const auto& p : pc) total += p.real_time, total_cpu += p.cpu_time;
  std::vector<ProfilingInfo> rows = pc;
  if (sorted) std::stable_sort(rows.begin(), rows.end(), by_time_desc);
  nlohmann::json j;
  j["nodes"] = nlohmann::json::array();
  for (const auto& p : rows) {
    nlohmann::json n = {{"name", p.node_name},          {"status", status_name(p.status)},
                        {"node_type", p.node_type},     {"exec_type", p.exec_type},
                        {"real_time", ms(p.real_time)}, {"cpu_time", ms(p.cpu_time)}};
    if (sorted)
      n["%"] = total.count() ? static_cast<double>(p.real_time.count()) * 100.0 / static_cast<double>(total.count()) : 0.0;
    j["nodes"].push_back(n);
  }
  j["total_real_time"] = ms(total);
  j["total_cpu_time"] = ms(total_cpu);
  return j;
}

} // namespace

void statistics_report::add(section s, std::string csv_name, std::string json_name, nlohmann::json value) {
  items_[s].push_back({std::move(csv_name), std::move(json_name), std::move(value)});
}

void statistics_report::add_group(const latency_stats& s) { groups_.push_back(s); }

std::string statistics_report::dump(const std::string& folder, bool json) const {
  static const std::vector<std::pair<section, std::pair<const char*, const char*>>> order = {
      {section::command_line, {"Command line parameters", "cmd_options"}},
      {section::configuration, {"Configuration setup", "configuration_setup"}},
      {section::execution_results, {"Execution results", "execution_results"}}};
  std::string path, text;
  if (json) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [s, names] : order) {
      auto it = items_.find(s);
      if (it == items_.end()) continue;
      auto& obj = j[names.second] = nlohmann::json::object();
      for (const auto& i : it->second) obj[i.json_name] = i.value;
    }
    for (const auto& g : groups_)
      j["execution_results"]["group_latencies"].push_back({{"data_shape", g.data_shape},
                                                           {"latency_median", g.percentile_value},
                                                           {"latency_average", g.avg},
                                                           {"latency_min", g.min},
                                                           {"latency_max", g.max}});
    path = path_in(folder, "benchmark_report.json");
    text = j.dump(4) + "\n";
  } else {
    for (const auto& [s, names] : order) {
      auto it = items_.find(s);
      if (it == items_.end()) continue;
      text += std::string(names.first) + ";\n";
      for (const auto& i : it->second) text += i.csv_name + ";" + csv_value(i.value) + ";\n";
      text += "\n";
    }
    if (!groups_.empty()) {
      text += "Group Latencies;\nData shape;Median;Average;Min;Max;\n";
      for (const auto& g : groups_)
        text += strf("%s;%.2f;%.2f;%.2f;%.2f;\n", g.data_shape.c_str(), g.percentile_value, g.avg, g.min, g.max);
      text += "\n";
    }
    path = path_in(folder, "benchmark_report.csv");
  }
  write_file(path, text);
  return path;
}

std::vector<ProfilingInfo> average_counters(const std::vector<std::vector<ProfilingInfo>>& per_request) {
  std::vector<ProfilingInfo> avg;
  for (const auto& req : per_request)
    for (const auto& p : req) {
      auto it = std::find_if(avg.begin(), avg.end(), [&](const ProfilingInfo& a) { return a.node_name == p.node_name; });
      if (it == avg.end()) {
        avg.push_back(p);
      } else {
        it->real_time += p.real_time;
        it->cpu_time += p.cpu_time;
      }
    }
  const auto n = static_cast<long>(std::max<std::size_t>(1, per_request.size()));
  for (auto& p : avg) {
    p.real_time /= n;
    p.cpu_time /= n;
  }
  return avg;
}

std::string dump_counters(const std::string& folder, bool json, const std::string& report_type,
                          const std::vector<std::vector<ProfilingInfo>>& per_request) {
  const std::string path = path_in(folder, "benchmark_" + report_type + "_report." + (json ? "json" : "csv"));
  const bool sorted = report_type == "sort_detailed_counters";
  if (json) {
    nlohmann::json j;
    if (report_type == "average_counters") {
      j["report_type"] = "average";
      j["avg_performance"] = counters_json(average_counters(per_request), false);
    } else {
      if (!sorted) j["report_type"] = "detailed";
      j["detailed_performance"] = nlohmann::json::array();
      for (const auto& pc : per_request) j["detailed_performance"].push_back(counters_json(pc, sorted));
    }
    write_file(path, j.dump(4) + "\n");
  } else {
    std::string text;
    if (report_type == "average_counters") counters_csv(text, average_counters(per_request), false);
    else
      for (const auto& pc : per_request) counters_csv(text, pc, sorted);
    write_file(path, text);
  }
  return path;
}

} // namespace troupe::cli
