#pragma once
/// `troupe bench`'s flags, benchmark_app's names and meanings, checked before any work.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tools/args.hpp"
#include "tools/input_shapes.hpp"

namespace troupe::cli {

struct bench_options {
  std::string model;
  std::string device = "CPU";
  /// "" (not given), "throughput", "latency", "cumulative_throughput" or "none" (tput and
  /// ctput spelled out).
  std::string hint;
  std::string api;            ///< "sync" or "async", resolved as benchmark_app resolves it
  uint64_t niter = 0;
  bool niter_given = false;   ///< -niter 0 given: compile only
  double seconds = 0;         ///< -t; 0 when not given
  shape_flags shapes;
  std::vector<std::string> input_files;
  bool load_from_file = false;
  std::string cache_dir;      ///< -cache_dir: the Core's CACHE_DIR
  uint64_t nireq = 0;         ///< 0: the compiled model's OPTIMAL_NUMBER_OF_INFER_REQUESTS
  std::string nstreams;       ///< "2" or "CPU:2,GPU:1"
  uint64_t nthreads = 0;
  bool nthreads_given = false;
  std::string infer_precision; ///< "bf16" or "CPU:bf16,GPU:f16"
  std::string ip, op, iop;
  std::string mean_values, scale_values; ///< -mean_values / -scale_values text, "" when not given
  bool inference_only = true;
  bool inference_only_given = false;
  bool no_warmup = false;
  double max_irate = 0;
  uint64_t latency_percentile = 50;
  std::string report_type;    ///< "" or no_counters / average_counters / detailed_counters / sort_detailed_counters
  std::string report_folder;
  bool json_stats = false;
  bool pc = false;
  bool pc_given = false;
  std::string pcsort;
  bool pcseq = false;
  std::string exec_graph_path, dump_config, load_config;
  /// The command line as given (flag -> value), for the report's "Command line parameters".
  std::vector<std::pair<std::string, std::string>> given;
};

/// The flags bench knows (for parse_args and the help text).
const std::vector<flag_spec>& bench_flags();

/// Parses and checks the flags; usage_error names the flag and what it takes.
bench_options parse_bench_options(int argc, char** argv);

/// "CPU:2,GPU:1" or "2" -> the value for `device` ("" when none); as benchmark_app, a device
/// named in the list that is not the target device is an error.
std::string value_for_device(const std::string& flag, const std::string& text, const std::string& device);

} // namespace troupe::cli
