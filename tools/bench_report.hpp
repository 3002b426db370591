#pragma once
/// benchmark_app's statistics reports in -report_folder: benchmark_report.csv (';'-separated,
/// as benchmark_app's CsvDumper writes) or benchmark_report.json (-json_stats), and the
/// per-op counters report benchmark_<report_type>_report.csv / .json.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <troupe/troupe.hpp>

#include "tools/latency_stats.hpp"

namespace troupe::cli {

class statistics_report {
public:
  enum class section { command_line, configuration, execution_results };

  /// `csv_name` labels the CSV line, `json_name` is the JSON key (benchmark_app's names).
  void add(section s, std::string csv_name, std::string json_name, nlohmann::json value);
  /// One -pcseq group's latencies.
  void add_group(const latency_stats& s);
  /// Writes the report; returns the file written.
  std::string dump(const std::string& folder, bool json) const;

private:
  struct item {
    std::string csv_name, json_name;
    nlohmann::json value;
  };
  std::map<section, std::vector<item>> items_;
  std::vector<latency_stats> groups_;
};

/// Each op's counters averaged over requests (summed by node name, divided by the count).
std::vector<ProfilingInfo> average_counters(const std::vector<std::vector<ProfilingInfo>>& per_request);

/// Writes benchmark_<report_type>_report.csv/.json; returns the file written.
std::string dump_counters(const std::string& folder, bool json, const std::string& report_type,
                          const std::vector<std::vector<ProfilingInfo>>& per_request);

} // namespace troupe::cli
