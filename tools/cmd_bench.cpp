/// `troupe bench`: benchmark_app's 11 steps over troupe's public API.
#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include <troupe/version.hpp>

#include "tools/bench_device_config.hpp"
#include "tools/bench_loop.hpp"
#include "tools/bench_options.hpp"
#include "tools/bench_report.hpp"
#include "tools/commands.hpp"
#include "tools/exec_graph.hpp"
#include "tools/file_io.hpp"
#include "tools/bench_preprocess.hpp"
#include "tools/input_data.hpp"
#include "tools/latency_stats.hpp"
#include "tools/log.hpp"
#include "tools/perf_counters.hpp"

namespace troupe::cli {

namespace {

using clock_type = std::chrono::steady_clock;
using section = statistics_report::section;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

void print_ports(const std::vector<Port>& ins, const std::vector<Port>& outs, const input_setup* setup) {
  info("Model inputs:");
  for (const auto& p : ins) {
    std::string layout;
    if (setup)
      for (const auto& in : setup->inputs)
        if (in.name == p.get_any_name()) layout = in.layout;
    info("    %s (node: %s) : %s / %s / %s", p.get_any_name().c_str(), p.get_any_name().c_str(),
         to_string(p.get_element_type()).c_str(), layout_text(layout).c_str(),
         shape_text(p.get_partial_shape()).c_str());
  }
  info("Model outputs:");
  for (const auto& p : outs)
    info("    %s (node: %s) : %s / %s / %s", p.get_any_name().c_str(), p.get_any_name().c_str(),
         to_string(p.get_element_type()).c_str(), "[...]", shape_text(p.get_partial_shape()).c_str());
}

std::string property_or(const CompiledModel& cm, const std::string& name, const std::string& def) {
  try {
    return cm.get_property(name).as_string();
  } catch (const Exception&) {
    return def;
  }
}

/// "[ CPU ]", as benchmark_app prints a list of devices.
std::string device_list(std::string comma_separated) {
  for (auto& c : comma_separated)
    if (c == ',') c = ' ';
  return "[ " + comma_separated + " ]";
}

int bench(const bench_options& o_in, std::optional<statistics_report>& stats) {
  bench_options o = o_in;
  // -report_folder / -json_stats alone: benchmark_app would write nothing; they ask for a report.
  if (o.report_type.empty() && (!o.report_folder.empty() || o.json_stats)) {
    o.report_type = "no_counters";
    info("-report_folder/-json_stats without -report_type: writing the no_counters report");
  }
  if (!o.report_type.empty()) {
    stats.emplace();
    for (const auto& [flag, value] : o.given) stats->add(section::command_line, flag.substr(1), flag.substr(1), value);
  }
  device_configs file_config;
  if (!o.load_config.empty()) file_config = load_config(o.load_config);
  const bool compile_only = o.niter_given && o.niter == 0;
  const bool async = o.api == "async";

  // ----- 2
  next_step();
  Core core;
  info("troupe:");
  info("Build ................................. %s", troupe::version());
  info("%s", "");
  info("Device info:");
  info("%s", o.device.c_str());
  info("FULL_DEVICE_NAME ...................... %s", core.get_property(o.device, "FULL_DEVICE_NAME").as_string().c_str());
  info("%s", "");

  // ----- 3
  next_step();
  if (!o.cache_dir.empty()) core.set_property({{"CACHE_DIR", o.cache_dir}}); // as benchmark_app: the Core's
  auto dev = configure_device(core, o, std::move(file_config));

  // ----- 4
  std::optional<Model> model;
  std::vector<Port> in_ports, out_ports;
  input_setup setup;
  io_types types;
  std::map<std::string, std::vector<std::string>> files;
  CompiledModel cm;
  std::string model_name;
  auto resolve = [&](const std::vector<Port>& ports) {
    files = parse_input_files(o.input_files, ports);
    for (const auto& [name, list] : files) info("For input %s %zu files were added.", name.c_str(), list.size());
    setup = resolve_inputs(ports, o.shapes, !compile_only);
  };
  if (o.load_from_file) {
    if (!o.mean_values.empty() || !o.scale_values.empty())
      throw usage_error("-mean_values and -scale_values change the model; -load_from_file compiles the file as it is");
    next_step();
    info("Skipping the step for loading model from file");
    next_step();
    info("Skipping the step for loading model from file");
    next_step();
    info("Skipping the step for loading model from file");
    next_step();
    auto t0 = clock_type::now();
    cm = core.compile_model(o.model, o.device, dev.compile);
    double ms = ms_since(t0);
    info("Compile model took %s ms", ms2(ms).c_str());
    info("Original model I/O parameters:");
    in_ports = cm.inputs();
    out_ports = cm.outputs();
    print_ports(in_ports, out_ports, nullptr);
    if (stats) stats->add(section::execution_results, "compile model time (ms)", "load_model_time", ms);
    resolve(in_ports);
    types = resolve_io_types(o.ip, o.op, o.iop, in_ports, out_ports);
    model_name = o.model.substr(o.model.find_last_of('/') + 1);
  } else {
    next_step();
    info("Loading model files");
    auto t0 = clock_type::now();
    model.emplace(core.read_model(o.model));
    double ms = ms_since(t0);
    info("Read model took %s ms", ms2(ms).c_str());
    info("Original model I/O parameters:");
    print_ports(model->inputs(), model->outputs(), nullptr);
    if (stats) stats->add(section::execution_results, "read model time (ms)", "read_model_time", ms);
    model_name = model->get_friendly_name();

    // ----- 5
    next_step();
    resolve(model->inputs());
    if (!setup.reshape.empty()) {
      std::string text;
      for (const auto& [name, shape] : setup.reshape) text += (text.empty() ? "'" : ", '") + name + "': " + shape_text(shape);
      info("Reshaping model: %s", text.c_str());
      t0 = clock_type::now();
      model->reshape(setup.reshape);
      ms = ms_since(t0);
      info("Reshape model took %s ms", ms2(ms).c_str());
      if (stats) stats->add(section::execution_results, "reshape model time (ms)", "reshape_model_time", ms);
    }

    // ----- 6
    next_step();
    in_ports = model->inputs();
    out_ports = model->outputs();
    types = resolve_io_types(o.ip, o.op, o.iop, in_ports, out_ports);
    // As benchmark_app: input types, mean and scale become steps of the model.
    if (add_bench_preprocessing(*model, setup, types.inputs, o.mean_values, o.scale_values)) {
      in_ports = model->inputs();
      types = resolve_io_types(o.ip, o.op, o.iop, in_ports, out_ports);
    }
  }
  for (const auto& [name, t] : types.inputs)
    info("Input '%s': data is made or read as %s and converted to the compiled model's type by the tool, once, "
         "before the measurement (-load_from_file: the file is compiled as it is)",
         name.c_str(), to_string(t).c_str());
  for (const auto& [name, t] : types.outputs)
    warn("Output '%s': bench measures it in the model's own type; -op/-iop %s would be a host conversion after "
         "the inference (troupe's runtime has no post-processing); troupe run applies it.",
         name.c_str(), to_string(t).c_str());
  int64_t batch = 1;
  if (!compile_only) {
    batch = setup.batch(0);
    bool has_n = false;
    for (const auto& in : setup.inputs) has_n = has_n || in.batch_index() >= 0;
    if (!has_n) warn("No batch dimension was found, assuming batch to be 1. Beware: this might affect FPS calculation.");
    info("Model batch size: %lld", static_cast<long long>(batch));
  }
  if (!o.load_from_file) {
    print_ports(in_ports, out_ports, &setup);

    // ----- 7
    next_step();
    auto t0 = clock_type::now();
    cm = core.compile_model(*model, o.device, dev.compile);
    double ms = ms_since(t0);
    info("Compile model took %s ms", ms2(ms).c_str());
    if (stats) stats->add(section::execution_results, "compile model time (ms)", "load_model_time", ms);
    if (const auto p = predicted_times_of(cm); !p.summary.empty()) info("HETERO placement by cost: %s", p.summary.c_str());
  }

  if (compile_only) {
    info("Model compiled successfully. Skipping inference due to -niter 0.");
    next_step("skipped");
    next_step("skipped");
    next_step("skipped");
    next_step();
    if (!o.dump_config.empty()) {
      dump_config(o.dump_config, dev.config);
      info("troupe configuration settings were dumped to %s", o.dump_config.c_str());
    }
    if (stats) info("Statistics report is stored to %s", stats->dump(o.report_folder, o.json_stats).c_str());
    return 0;
  }

  const bool dynamic = setup.dynamic();
  if (dynamic && setup.configurations > 1 && !async)
    throw usage_error("-api sync: benchmarking a model with dynamic shapes over several -data_shape shapes needs "
                      "-api async (use -api async -hint latency -nireq 1 to emulate sync)");
  bool inference_only = o.inference_only;
  if (dynamic) {
    if (o.inference_only_given && o.inference_only && setup.configurations > 1)
      throw usage_error("-inference_only: a dynamic model with several data shapes is measured in full mode only");
    inference_only = o.inference_only_given && o.inference_only && setup.configurations == 1;
  }

  // ----- 8
  next_step();
  info("Model:");
  info("  NETWORK_NAME: %s", model_name.c_str());
  for (const char* p : {"OPTIMAL_NUMBER_OF_INFER_REQUESTS", "NUM_STREAMS", "INFERENCE_NUM_THREADS", "PERFORMANCE_HINT",
                        "PERFORMANCE_HINT_NUM_REQUESTS", "INFERENCE_PRECISION_HINT", "PERF_COUNT", "EXECUTION_DEVICES",
                        "GPU_F16_ARITHMETIC", "LOADED_FROM_CACHE"}) {
    auto v = property_or(cm, p, "\x01");
    if (v != "\x01") info("  %s: %s", p, v.c_str());
  }
  const std::string streams = property_or(cm, "NUM_STREAMS", "1");
  uint64_t nireq = o.nireq;
  if (nireq == 0) nireq = async ? static_cast<uint64_t>(cm.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS").as<int>()) : 1;
  uint64_t niter = o.niter;
  if (niter > 0 && async) {
    const uint64_t groups = setup.configurations;
    const uint64_t step = groups > nireq ? groups : nireq;
    const uint64_t aligned = (niter + step - 1) / step * step;
    if (aligned != niter)
      warn("Number of iterations was aligned by %s number from %llu to %llu using number of %s %llu",
           groups > nireq ? "data shape groups" : "request", static_cast<unsigned long long>(niter),
           static_cast<unsigned long long>(aligned), groups > nireq ? "possible input shapes" : "requests",
           static_cast<unsigned long long>(step));
    niter = aligned;
  }
  // benchmark_app's default: 60 s on CPU and GPU when neither -t nor -niter is given.
  const double seconds = o.seconds > 0 ? o.seconds : (o.niter == 0 ? 60.0 : 0.0);
  const std::string precision = property_or(cm, "INFERENCE_PRECISION_HINT", "f32");
  if (stats) {
    stats->add(section::configuration, "benchmark mode", "benchmark_mode", inference_only ? "inference only" : "full");
    stats->add(section::configuration, "topology", "topology", model_name);
    stats->add(section::configuration, "target device", "target_device", o.device);
    stats->add(section::configuration, "API", "api", o.api);
    stats->add(section::configuration, "precision", "precision", precision);
    stats->add(section::configuration, "batch size", "batch_size", batch);
    stats->add(section::configuration, "number of iterations", "iterations_num", niter);
    stats->add(section::configuration, "number of parallel infer requests", "nireq", nireq);
    stats->add(section::configuration, "duration (ms)", "duration", static_cast<uint64_t>(seconds * 1000));
    std::string dev_key = o.device;
    for (auto& c : dev_key) c = c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    stats->add(section::configuration, "number of " + o.device + " streams", dev_key + "_streams_num", streams);
  }

  // ----- 9
  next_step();
  std::vector<InferRequest> reqs;
  for (uint64_t i = 0; i < nireq; ++i) reqs.push_back(cm.create_infer_request());
  if (files.empty())
    warn("No input files were given: all inputs will be filled with seeded random values (mulberry32, seed 12345, "
         "as scripts/reference/ort_reference.js)");
  auto sets = make_input_sets(setup, files, types);
  const std::size_t shown = std::min<std::size_t>(sets.sets.size(), 10);
  for (std::size_t s = 0; s < shown; ++s) {
    info("Test Config %zu", s);
    for (std::size_t k = 0; k < setup.inputs.size(); ++k) {
      const auto& in = setup.inputs[k];
      info("%s  (%s, %s, %s, %s):\t%s", in.name.c_str(), layout_text(in.layout).c_str(), to_string(in.type).c_str(),
           to_string(sets.sets[s][k].get_shape()).c_str(),
           in.shape.is_static() ? "static" : ("dyn:" + shape_text(in.shape)).c_str(), sets.sources[s][k].c_str());
    }
  }
  if (sets.sets.size() > shown) info("... and %zu more test configs", sets.sets.size() - shown);
  std::vector<int64_t> set_batch;
  for (std::size_t s = 0; s < sets.sets.size(); ++s) set_batch.push_back(setup.batch(sets.configuration[s]));

  // ----- 10
  std::string what = "Start inference " + o.api + "hronously";
  if (async) what += ", " + std::to_string(nireq) + " inference requests using " + streams + " streams for " + o.device;
  what += ", limits: ";
  if (seconds > 0) what += std::to_string(static_cast<uint64_t>(seconds * 1000)) + " ms duration";
  if (niter > 0) what += std::string(seconds > 0 ? ", " : "") + std::to_string(niter) + " iterations";
  next_step(what);
  info(inference_only ? "Benchmarking in inference only mode (inputs filling are not included in measurement loop)."
                      : "Benchmarking in full mode (inputs filling are included in measurement loop).");
  if (inference_only && sets.sets.size() > nireq) warn("Only %llu test configs will be used.", static_cast<unsigned long long>(nireq));
  assign_sets(reqs, sets);
  if (!o.no_warmup) {
    double first = first_inference(reqs[0], async);
    info("First inference took %s ms", ms2(first).c_str());
    if (stats) stats->add(section::execution_results, "first inference time (ms)", "first_inference_time", first);
  } else {
    info("Skipping warmup inference due to -no_warmup flag");
  }
  loop_settings ls;
  ls.async = async;
  ls.niter = niter;
  ls.seconds = seconds;
  ls.max_irate = o.max_irate;
  ls.inference_only = inference_only;
  ls.batch = set_batch;
  ls.configurations = setup.configurations;
  auto res = measure(reqs, sets, ls);
  if (res.latencies.empty()) throw Exception("no inference ran (raise -niter or -t)");
  auto lat = compute_latency(res.latencies, o.latency_percentile);
  std::vector<latency_stats> groups;
  if (o.pcseq && setup.configurations > 1)
    for (std::size_t c = 0; c < setup.configurations; ++c)
      if (!res.by_configuration[c].empty())
        groups.push_back(compute_latency(res.by_configuration[c], o.latency_percentile, setup.data_shapes_text(c)));
  const double fps = 1000.0 * static_cast<double>(res.frames) / res.duration_ms;
  const std::string exec_devices = property_or(cm, "EXECUTION_DEVICES", o.device);
  // MULTI and AUTO with CUMULATIVE_THROUGHPUT: how many requests each device served.
  const std::string served = property_or(cm, "REQUESTS_SERVED", "");
  const std::string redispatched = property_or(cm, "REQUESTS_REDISPATCHED", "0");
  // A model with dynamic inputs compiles each new shape while it serves: how many times.
  const std::string compiles = property_or(cm, "RUNTIME_COMPILES", "0");
  if (res.failed > 0)
    warn("%llu requests failed (first: %s)", static_cast<unsigned long long>(res.failed), res.first_failure.c_str());
  if (stats) {
    stats->add(section::execution_results, "total execution time (ms)", "execution_time", res.duration_ms);
    stats->add(section::execution_results, "total number of iterations", "iterations_num", res.iterations);
    stats->add(section::execution_results,
               o.latency_percentile == 50 ? "Median latency (ms)"
                                          : "latency (" + std::to_string(o.latency_percentile) + " percentile) (ms)",
               "latency_median", lat.percentile_value);
    stats->add(section::execution_results, "Percentile boundary", "percentile_boundary", o.latency_percentile);
    stats->add(section::execution_results, "Average latency (ms)", "latency_avg", lat.avg);
    stats->add(section::execution_results, "Min latency (ms)", "latency_min", lat.min);
    stats->add(section::execution_results, "Max latency (ms)", "latency_max", lat.max);
    for (const auto& g : groups) stats->add_group(g);
    stats->add(section::execution_results, "throughput", "throughput", fps);
    stats->add(section::execution_results, "execution devices", "execution_devices", exec_devices);
    if (!served.empty()) stats->add(section::execution_results, "requests served", "requests_served", served);
    stats->add(section::execution_results, "failed requests", "failed_requests", res.failed);
    stats->add(section::execution_results, "compiles while serving", "runtime_compiles", compiles);
    stats->add(section::execution_results, "redispatched requests", "redispatched_requests",
               static_cast<uint64_t>(std::stoull(redispatched)));
  }

  // ----- 11
  next_step();
  if (!o.dump_config.empty()) {
    dump_config(o.dump_config, dev.config);
    info("troupe configuration settings were dumped to %s", o.dump_config.c_str());
  }
  std::vector<std::vector<ProfilingInfo>> counters;
  if (dev.perf_counts) {
    const std::string full_name = core.get_property(o.device, "FULL_DEVICE_NAME").as_string();
    const auto predicted = predicted_times_of(cm);
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      counters.push_back(reqs[i].get_profiling_info());
      if (!o.pcsort.empty()) {
        info("Sort performance counts for %zu-th infer request:", i);
        print_counters(counters.back(), full_name, o.pcsort, predicted);
      } else if (o.pc) {
        info("Performance counts for %zu-th infer request:", i);
        print_counters(counters.back(), full_name, "", predicted);
      }
    }
  }
  if (!o.exec_graph_path.empty()) {
    try {
      write_exec_graph(o.exec_graph_path, model_name, o.device, counters.empty() ? reqs[0].get_profiling_info() : counters[0]);
      info("Executable graph is stored to %s", o.exec_graph_path.c_str());
    } catch (const std::exception& e) {
      std::printf("[ ERROR ] Can't get executable graph: %s\n", e.what());
    }
  }
  if (stats) {
    if (o.report_type == "no_counters")
      info("Statistics collecting for performance counters was not requested. No reports are dumped.");
    else if (!counters.empty())
      info("Performance counters report is stored to %s",
           dump_counters(o.report_folder, o.json_stats, o.report_type, counters).c_str());
    info("Statistics report is stored to %s", stats->dump(o.report_folder, o.json_stats).c_str());
  }
  info("Execution Devices: %s", device_list(exec_devices).c_str());
  if (!served.empty()) info("Requests served:   %s", served.c_str());
  if (dynamic) info("Compiles while serving: %s, %s ms in all (RUNTIME_CACHE_CAPACITY %s)", compiles.c_str(),
                    ms2(std::stod(property_or(cm, "RUNTIME_COMPILE_MS", "0"))).c_str(),
                    property_or(cm, "RUNTIME_CACHE_CAPACITY", "?").c_str());
  info("Count:               %llu iterations", static_cast<unsigned long long>(res.iterations));
  info("Duration:            %s ms", ms2(res.duration_ms).c_str());
  info("Latency:");
  print_latency(lat);
  if (!groups.empty()) {
    info("Latency for each data shape group:");
    for (std::size_t g = 0; g < groups.size(); ++g) {
      info("%zu.", g + 1);
      print_latency(groups[g]);
    }
  }
  info("Throughput:          %s FPS", ms2(fps).c_str());
  return 0;
}

} // namespace

int cmd_bench(int argc, char** argv) {
  next_step();
  info("Parsing input parameters");
  auto o = parse_bench_options(argc, argv);
  if (!o.report_folder.empty()) make_folder(o.report_folder, "-report_folder");
  std::optional<statistics_report> stats;
  try {
    return bench(o, stats);
  } catch (const std::exception& e) {
    // As benchmark_app: a report asked for still gets written, with the error in it.
    if (stats) {
      try {
        stats->add(section::execution_results, "error", "error", e.what());
        stats->dump(o.report_folder, o.json_stats);
      } catch (...) {
      }
    }
    throw;
  }
}

} // namespace troupe::cli
