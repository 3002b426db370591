#include "tools/bench_options.hpp"

#include <algorithm>

#include "tools/bench_device_config.hpp"
#include "tools/io_types.hpp"

namespace troupe::cli {

namespace {

/// Flags of benchmark_app that troupe knows but cannot honour, and why.
const std::vector<std::pair<std::string, std::string>>& refused() {
  static const std::vector<std::pair<std::string, std::string>> r = {
      {"-pin", "troupe's devices have no thread pinning property (ENABLE_CPU_PINNING)"},
      {"-extensions", "troupe has no extension (custom op library) mechanism"},
      {"-c", "troupe has no GPU custom kernel (clDNN config) mechanism"},
      {"-use_device_mem", "troupe's API has no remote (device memory) tensors"},
  };
  return r;
}

void check_one_of(const args& a, const std::string& flag, const std::string& value,
                  const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) a.bad_value(flag, value);
}

} // namespace

const std::vector<flag_spec>& bench_flags() {
  static const std::vector<flag_spec> f = {
      {"-h", ""},
      {"-help", ""},
      {"-m", "a model file (.onnx)"},
      {"-i", "input files: [NAME:]FILE|FOLDER[,FILE...] (also NAME=FILE)", true},
      {"-d", "a device: CPU, GPU or GPU.<n>"},
      {"-hint", "throughput (tput), cumulative_throughput (ctput), latency or none"},
      {"-niter", "an integer >= 0 (0: compile only)"},
      {"-t", "seconds, a number >= 0"},
      {"-max_irate", "inferences per second, a number >= 0"},
      {"-b", "a batch size, an integer >= 0"},
      {"-shape", "shapes: NAME[1,3,48,192],NAME2[...] or [1,3,48,192] ('?' or -1 for a dynamic dim)"},
      {"-data_shape", "data shapes: NAME[1,3,48,192][1,3,48,320],NAME2[...] or [1,3,48,192]"},
      {"-layout", "layouts: NAME[NCHW],NAME2[NC] or [NCHW]"},
      {"-cache_dir", "a folder"},
      {"-load_from_file", ""},
      {"-api", "sync or async"},
      {"-nireq", "an integer >= 0 (0: the device's optimal number)"},
      {"-nstreams", "a number of streams or AUTO, or per device: CPU:2,GPU:1"},
      {"-inference_only", ""},
      {"-infer_precision", "f32, bf16 or f16, or per device: CPU:bf16,GPU:f16"},
      {"-no_warmup", ""},
      {"-ip", "an element type (u8, f16, f32, i64, ...)"},
      {"-op", "an element type (u8, f16, f32, i64, ...)"},
      {"-iop", "NAME:TYPE entries separated by ',', e.g. \"x:f16, y:f32\""},
      {"-mean_values", "values per channel: [v1,v2,v3] or NAME[v1,v2,v3],..."},
      {"-scale_values", "values per channel: [v1,v2,v3] or NAME[v1,v2,v3],..."},
      {"-nthreads", "an integer >= 0"},
      {"-pin", "YES or NO"},
      {"-extensions", "a library"},
      {"-c", "a file"},
      {"-use_device_mem", ""},
      {"-latency_percentile", "an integer from 1 to 100"},
      {"-report_type", "no_counters, average_counters, detailed_counters or sort_detailed_counters"},
      {"-report_folder", "a folder"},
      {"-json_stats", ""},
      {"-pc", ""},
      {"-pcsort", "sort, no_sort or simple_sort"},
      {"-pcseq", ""},
      {"-exec_graph_path", "a file"},
      {"-dump_config", "a JSON file to write"},
      {"-load_config", "a JSON file to read"},
  };
  return f;
}

std::string value_for_device(const std::string& flag, const std::string& text, const std::string& device) {
  std::string r;
  for (const auto& item : comma_items(text)) {
    auto colon = item.find(':');
    if (colon == std::string::npos) {
      r = item;
    } else {
      auto dev = item.substr(0, colon);
      if (dev != device && dev != device.substr(0, device.find('.')))
        throw usage_error(flag + " '" + text + "' sets a value for device '" + dev +
                          "', which is not the target device '" + device + "' (-d)");
      r = item.substr(colon + 1);
    }
  }
  if (r.empty()) throw usage_error(flag + " takes a value or DEVICE:VALUE entries, got '" + text + "'");
  return r;
}

bench_options parse_bench_options(int argc, char** argv) {
  auto a = parse_args(argc, argv, 2, bench_flags());
  for (const auto& [flag, why] : refused())
    if (a.has(flag)) throw usage_error(flag + " is not supported: " + why);
  bench_options o;
  o.given = a.given();
  if (!a.has("-m")) throw usage_error("-m is required: the model file (.onnx)");
  o.model = a.get("-m");
  o.device = a.get("-d", "CPU");

  o.hint = a.get("-hint");
  if (a.has("-hint")) {
    check_one_of(a, "-hint", o.hint, {"throughput", "tput", "cumulative_throughput", "ctput", "latency", "none"});
    if (o.hint == "tput") o.hint = "throughput";
    if (o.hint == "ctput") o.hint = "cumulative_throughput";
  }
  o.api = a.get("-api", o.hint == "latency" ? "sync" : "async");
  check_one_of(a, "-api", o.api, {"sync", "async"});

  o.niter = a.get_uint("-niter", 0);
  o.niter_given = a.has("-niter");
  o.seconds = a.get_double("-t", 0);
  o.max_irate = a.get_double("-max_irate", 0);
  o.nireq = a.get_uint("-nireq", 0);
  if (o.api == "sync" && o.seconds == 0 && o.niter != 0 && o.nireq > o.niter)
    throw usage_error("-nireq " + std::to_string(o.nireq) + " exceeds -niter " + std::to_string(o.niter) +
                      ": with -api sync the number of iterations must be at least the number of requests");

  o.shapes.batch = a.get_uint("-b", 0);
  o.shapes.shape = a.get("-shape");
  o.shapes.data_shape = a.get("-data_shape");
  o.shapes.layout = a.get("-layout");
  // Syntax now, so that a malformed value is a usage error; names are checked on the model.
  if (a.has("-shape")) parse_per_input("-shape", o.shapes.shape);
  if (a.has("-data_shape")) parse_per_input("-data_shape", o.shapes.data_shape);
  if (a.has("-layout"))
    for (const auto& e : parse_per_input("-layout", o.shapes.layout))
      for (const auto& v : e.values) parse_layout("-layout", v);
  o.input_files = a.all("-i");
  o.load_from_file = a.on("-load_from_file");
  o.cache_dir = a.get("-cache_dir");
  if (o.load_from_file && (a.has("-shape") || a.has("-b")))
    throw usage_error("-load_from_file compiles the model file as it is, so -shape and -b cannot reshape it; "
                      "drop -load_from_file to reshape");

  o.nstreams = a.get("-nstreams");
  // A virtual device's list is checked when the device is configured (each entry to its own device).
  const bool hetero = has_device_list(o.device);
  if (a.has("-nstreams") && !hetero) value_for_device("-nstreams", o.nstreams, o.device);
  o.nthreads = a.get_uint("-nthreads", 0);
  o.nthreads_given = a.has("-nthreads");
  o.infer_precision = a.get("-infer_precision");
  if (a.has("-infer_precision") && !hetero) value_for_device("-infer_precision", o.infer_precision, o.device);
  o.ip = a.get("-ip");
  o.op = a.get("-op");
  o.iop = a.get("-iop");
  o.mean_values = a.get("-mean_values");
  o.scale_values = a.get("-scale_values");
  if (a.has("-ip")) parse_io_type("-ip", o.ip);
  if (a.has("-op")) parse_io_type("-op", o.op);
  if (a.has("-iop")) parse_iop(o.iop);

  o.inference_only_given = a.has("-inference_only");
  o.inference_only = o.inference_only_given ? a.on("-inference_only") : true;
  o.no_warmup = a.on("-no_warmup");

  o.latency_percentile = a.get_uint("-latency_percentile", 50);
  if (o.latency_percentile < 1 || o.latency_percentile > 100)
    a.bad_value("-latency_percentile", a.get("-latency_percentile"));
  o.report_type = a.get("-report_type");
  if (a.has("-report_type"))
    check_one_of(a, "-report_type", o.report_type,
                 {"no_counters", "average_counters", "detailed_counters", "sort_detailed_counters"});
  o.report_folder = a.get("-report_folder");
  o.json_stats = a.on("-json_stats");
  o.pc_given = a.has("-pc");
  o.pc = a.on("-pc");
  o.pcsort = a.get("-pcsort");
  if (a.has("-pcsort")) check_one_of(a, "-pcsort", o.pcsort, {"sort", "no_sort", "simple_sort"});
  o.pcseq = a.on("-pcseq");
  o.exec_graph_path = a.get("-exec_graph_path");
  o.dump_config = a.get("-dump_config");
  o.load_config = a.get("-load_config");
  return o;
}

} // namespace troupe::cli
