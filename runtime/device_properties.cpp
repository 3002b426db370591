#include "runtime/device_properties.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include <sched.h>
#include <unistd.h>

#include <troupe/exception.hpp>

namespace troupe {

namespace {

[[noreturn]] void bad_value(const std::string& dev, const std::string& name, const Any& v, const std::string& allowed) {
  throw Exception("bad value '" + v.as_string() + "' for property " + name + " of device " + dev + "; allowed: " +
                  allowed);
}

bool parse_int(const Any& v, int& out) {
  try {
    out = v.as<int>();
    return true;
  } catch (const Exception&) {
    return false;
  }
}

bool has_capability(const kernels::device& dev, const std::string& cap) {
  auto info = dev.info();
  auto it = info.find("OPTIMIZATION_CAPABILITIES");
  return it != info.end() && (" " + it->second + " ").find(" " + cap + " ") != std::string::npos;
}
bool cpu_has_bf16(const kernels::device& dev) { return has_capability(dev, "BF16"); }

/// The read-only rows every device has, in table order.
const std::vector<std::string>& common_readonly() {
  static const std::vector<std::string> p = [] {
    std::vector<std::string> r;
    for (const auto& row : property_table())
      if (!row.writable && row.kinds == on_all) r.push_back(row.name);
    return r;
  }();
  return p;
}

/// The allowed values of a writable property, as its row states them.
std::string allowed(device_kind kind, const std::string& name) { return find_property(kind, name)->values; }

std::string joined(const std::vector<std::string>& v) {
  std::string all;
  for (const auto& p : v) all += (all.empty() ? "" : ", ") + p;
  return all;
}

/// Streams a GPU runs under THROUGHPUT / NUM_STREAMS=AUTO: one records and submits while the
/// other's command buffer executes (OpenVINO's GPU plugin also picks 2).
constexpr int gpu_throughput_streams = 2;

} // namespace

bool default_f16_arithmetic(const kernels::device& dev) {
  // A CPU-type Vulkan device (lavapipe) emulates float16 math: there it only slows things down.
  auto info = dev.info();
  return kind_of(dev) == device_kind::gpu && has_capability(dev, "FP16") && info["DEVICE_TYPE"] != "cpu";
}

const std::vector<property_spec>& property_table() {
  static const std::vector<property_spec> t{
      // Read-only, every device.
      {"AVAILABLE_DEVICES", false, on_all, "a device name", "", false,
       "The device's own name, as compile_model resolves it: GPU answers GPU.0."},
      {"FULL_DEVICE_NAME", false, on_all, "text", "", false,
       "CPU: the model name in /proc/cpuinfo (CPU when there is none). GPU: the Vulkan device name. "
       "REFERENCE: a fixed description."},
      {"SUPPORTED_PROPERTIES", false, on_all, "comma-separated names", "", false,
       "Every property of the device: the read-only ones, then the writable ones."},
      {"OPTIMIZATION_CAPABILITIES", false, on_all, "space-separated: FP32, BF16, FP16", "", false,
       "FP32 everywhere; BF16 on a CPU whose flags list avx512_bf16 or amx_bf16; FP16 on a GPU with "
       "Vulkan 1.2 shaderFloat16, storageBuffer16BitAccess and 16-bit float texel buffers."},
      // Read-only, one kind (the keys of the device's info()).
      {"ONEDNN_ISA", false, on_cpu, "sse41, avx, avx2, avx2_vnni, avx512_core, avx512_core_vnni, "
       "avx512_core_bf16, avx512_core_amx, generic", "", false,
       "The instruction set oneDNN's kernels use on this CPU."},
      {"DEVICE_TYPE", false, on_gpu, "discrete, integrated, virtual, cpu, other", "", false,
       "Vulkan's physical device type; cpu for a software driver such as lavapipe."},
      {"DEVICE_UUID", false, on_gpu, "32 hex digits", "", false,
       "Vulkan's deviceUUID. Two copies of one driver have the same UUID and are still two devices."},
      {"DEVICE_INDEX", false, on_gpu, "an integer", "", false,
       "The device's position in the Vulkan loader's list of physical devices."},
      {"GPU_DEVICE_TOTAL_MEM_SIZE", false, on_gpu, "bytes", "", false,
       "The sum of the device's device-local memory heaps."},
      {"SUBGROUP_SIZE", false, on_gpu, "an integer", "", false, "Vulkan's subgroup (SIMD) width."},
      {"FP16_SUPPORTED", false, on_gpu, "YES, NO", "", false,
       "Whether INFERENCE_PRECISION_HINT=f16 is accepted (OPTIMIZATION_CAPABILITIES lists FP16)."},
      {"VULKAN_API_VERSION", false, on_gpu, "major.minor.patch", "", false,
       "The Vulkan version the device reports (troupe needs 1.1, f16 needs 1.2)."},
      // Read-write. Each kind lists its rows in this order.
      {"INFERENCE_NUM_THREADS", true, on_cpu, "an integer >= 0 (0 = all cores)", "0", false,
       "Threads over all streams, as OpenVINO counts them: each stream gets max(1, N / streams). 0 lets "
       "the hint decide (LATENCY: every core in one stream; THROUGHPUT: one thread per stream)."},
      {"INFERENCE_NUM_THREADS", true, on_reference, "an integer >= 0 (0 = all cores)", "0", false,
       "Accepted for symmetry with the CPU; the reference kernels run one op at a time on one thread."},
      {"NUM_STREAMS", true, on_cpu | on_reference, "an integer >= 1, AUTO", "1", false,
       "Inferences that run at the same time, each stream on its own clone of the compiled model. "
       "AUTO: one per core. Without INFERENCE_NUM_THREADS the cores are shared out between the streams."},
      {"NUM_STREAMS", true, on_gpu, "an integer >= 1, AUTO", "1", false,
       "Inferences that run at the same time, each stream on its own clone of the compiled program "
       "(its own command buffer and buffers). AUTO: 2."},
      {"INFERENCE_PRECISION_HINT", true, on_cpu, "f32, bf16 (where OPTIMIZATION_CAPABILITIES lists BF16)", "f32",
       false,
       "The precision oneDNN computes in. bf16: Conv, ConvTranspose, MatMul and Gemm run in bfloat16; the "
       "model's inputs and outputs stay f32. Spellings float32 and bfloat16 are accepted too."},
      {"INFERENCE_PRECISION_HINT", true, on_gpu, "f32, f16 (where OPTIMIZATION_CAPABILITIES lists FP16)", "f32",
       false,
       "f16: every float tensor and weight is stored as float16 on the device, loads widen to f32; the "
       "model's inputs and outputs stay f32. float32 and float16 are accepted too."},
      {"INFERENCE_PRECISION_HINT", true, on_reference, "f32", "f32", false, "The reference kernels compute in f32."},
      {"GPU_F16_ARITHMETIC", true, on_gpu, "YES, NO, true, false",
       "YES where f16 math is native (FP16 listed and DEVICE_TYPE not cpu), else NO", true,
       "With INFERENCE_PRECISION_HINT=f16 only: the Conv, MatMul and Gemm loops also compute and "
       "accumulate in float16 (other ops compute in f32). A cpu-type device such as lavapipe emulates "
       "f16 math, hence NO there."},
      {"PERF_COUNT", true, on_cpu | on_reference, "YES, NO, true, false", "NO", false,
       "Per-op counters of each inference, read with InferRequest::get_profiling_info."},
      {"PERF_COUNT", true, on_gpu, "YES, NO, true, false", "NO", false,
       "Per-op counters of each inference (shader times from GPU timestamps, plus Upload and Download "
       "rows for the staging copies), read with InferRequest::get_profiling_info."},
      {"PERFORMANCE_HINT", true, on_cpu | on_reference, "LATENCY, THROUGHPUT", "LATENCY", false,
       "LATENCY: one stream over all cores. THROUGHPUT: one 1-thread stream per core (at most "
       "PERFORMANCE_HINT_NUM_REQUESTS). NUM_STREAMS and INFERENCE_NUM_THREADS, when set, override it."},
      {"PERFORMANCE_HINT", true, on_gpu, "LATENCY, THROUGHPUT", "LATENCY", false,
       "LATENCY: one stream. THROUGHPUT: 2 streams (at most PERFORMANCE_HINT_NUM_REQUESTS), one "
       "recording while the other's command buffer runs. NUM_STREAMS, when set, overrides it."},
      {"PERFORMANCE_HINT_NUM_REQUESTS", true, on_all, "an integer >= 0 (0 = no limit)", "0", false,
       "Caps the streams that PERFORMANCE_HINT=THROUGHPUT picks."},
      {"RUNTIME_CACHE_CAPACITY", true, on_all, "an integer >= 0 (0 = no bound)", "128", false,
       "A model with dynamic inputs compiles a program for each new set of input shapes at its first "
       "inference (RUNTIME_COMPILES counts them); this many are kept per compiled model, the least "
       "recently used dropped past it (a request running on it finishes first). A kept CPU program "
       "holds its primitives, not its weights or activations (shared by all shapes). As OpenVINO CPU's "
       "CPU_RUNTIME_CACHE_CAPACITY, for every device."},
      {"EXCLUDED_OPS", true, on_all, "comma-separated op types (Conv,Resize); empty = none", "", false,
       "A debugging switch: the device answers that it cannot run these op types (query_model, "
       "compile_model, HETERO's placement), as if it lacked them, e.g. to force a HETERO split or to "
       "find the op a device gets wrong. When not set, it comes from the environment: "
       "TROUPE_EXCLUDED_OPS=\"GPU:Conv,Resize;CPU:Softmax\" (GPU meaning GPU.0)."},
      {"FAIL_EVERY", true, on_all, "an integer >= 0 (0 = never)", "0", false,
       "A debugging switch: every Nth run of a model compiled with it on this device fails as a device "
       "failure (\"a failure injected by FAIL_EVERY N\"), as a driver error or a lost worker would; MULTI "
       "must take such a request to another device (the soak's failures from inside a device). When not "
       "set, it comes from the environment: TROUPE_FAIL_EVERY=\"CPU:25;GPU.1:3\"."},
      {"CACHE_DIR", true, on_gpu, "a folder (created if missing); empty = no cache", "", false,
       "The device's Vulkan pipeline cache is kept in this folder, one file named for the driver "
       "build and device model, so a later compile skips the driver's SPIR-V to machine code step "
       "where the driver keeps pipelines in it (lavapipe of Mesa 22.3 keeps none); a damaged file is "
       "ignored and replaced. LOADED_FROM_CACHE says whether it held pipelines. HETERO_PLACEMENT=COST "
       "keeps its calibration here too. No compiled model is written: reading one back cost more than "
       "the graph passes it saves (docs/cache.md). Core::set_property({{\"CACHE_DIR\", d}}) sets it "
       "for every device."},
      {"CACHE_DIR", true, on_cpu | on_reference, "a folder (created if missing); empty = no cache", "", false,
       "Where HETERO_PLACEMENT=COST keeps its calibration of this device. No compiled model is "
       "written: reading one back cost more than the graph passes it saves, and oneDNN 2.6 keeps its "
       "JIT code in memory only, so a compile with it is a compile without it (docs/cache.md); "
       "LOADED_FROM_CACHE is NO."},
  };
  return t;
}

unsigned kind_bit(device_kind k) {
  switch (k) {
  case device_kind::cpu: return on_cpu;
  case device_kind::gpu: return on_gpu;
  case device_kind::reference: return on_reference;
  }
  return 0;
}

const property_spec* find_property(device_kind kind, const std::string& name) {
  for (const auto& row : property_table())
    if ((row.kinds & kind_bit(kind)) && name == row.name) return &row;
  return nullptr;
}

const std::vector<compiled_property_spec>& compiled_model_property_table() {
  static const std::vector<compiled_property_spec> t{
      {"OPTIMAL_NUMBER_OF_INFER_REQUESTS", "all",
       "The number of streams: as many requests as this keep every stream busy. HETERO: the streams of "
       "all its subgraphs added up, so that every stage has work while requests pipeline through. MULTI: "
       "the worker requests of all its devices added up (DEV(n), or each device's own number)."},
      {"EXECUTION_DEVICES", "all",
       "The device the model runs on, e.g. GPU.0 for GPU. HETERO: the devices its subgraphs run on, in "
       "priority order. MULTI: the devices serving, in the current priority order (a device that failed too "
       "often has left). AUTO with LATENCY or THROUGHPUT: the device it chose (the CPU while that device "
       "still compiles, when the CPU serves meanwhile)."},
      {"NUM_STREAMS", "all",
       "The streams it runs with, after the hint (HETERO: those of its first device; each subgraph has "
       "its own device's)."},
      {"INFERENCE_NUM_THREADS", "all", "Threads over all streams (a GPU: one host thread per stream)."},
      {"INFERENCE_PRECISION_HINT", "all", "The precision it was compiled with."},
      {"PERF_COUNT", "all", "Whether per-op counters are collected."},
      {"PERFORMANCE_HINT", "all", "The hint it was compiled with."},
      {"GPU_F16_ARITHMETIC", "GPU.N",
       "Whether the Conv, MatMul and Gemm loops compute in float16 (YES only with f16 precision)."},
      {"DEVICE_PRIORITIES", "MULTI",
       "The devices in the order the scheduler tries them. Writable with CompiledModel::set_property while "
       "requests run: reorder, or leave devices out (their running requests finish, no new ones go there) "
       "and bring them back; only devices of the compiled list."},
      {"SCHEDULE_POLICY", "MULTI", "DEVICE_PRIORITY (the first device in order with a free slot) or ROUND_ROBIN."},
      {"REQUESTS_SERVED", "MULTI",
       "How many requests each device completed so far, as DEVICE:COUNT,DEVICE:COUNT (troupe's own). Also on "
       "AUTO with LATENCY or THROUGHPUT when the CPU helps the device it chose (startup or runtime fallback)."},
      {"REQUESTS_REDISPATCHED", "MULTI",
       "How many runs a device failed with its own error (or lost with its node) that went on to another "
       "device (troupe's own). With REQUESTS_SERVED on the same models."},
      {"HETERO_NUMBER_OF_SUBMODELS", "HETERO",
       "How many subgraphs HETERO split the model into (each compiled on its own device)."},
      {"HETERO_PREDICTION", "HETERO",
       "With HETERO_PLACEMENT=COST or COST_NOMINAL: where the costs came from, one request's predicted time "
       "under the chosen placement and under PRIORITY's, and its crossings (troupe's own; empty otherwise). "
       "With dynamic inputs, the latest split's."},
      {"HETERO_PREDICTED_TIMES", "HETERO",
       "With HETERO_PLACEMENT=COST or COST_NOMINAL: one line per op, \"<microseconds> <op name>\", its predicted "
       "time on the device it was placed on; the names are those of the profiling rows, so that "
       "get_profiling_info's times sit beside them (troupe bench -pc prints both; troupe's own)."},
      {"RUNTIME_COMPILES", "all",
       "How many programs it compiled while serving: a model with dynamic inputs compiles one for each "
       "new set of input shapes (and again for one that RUNTIME_CACHE_CAPACITY dropped); 0 for static "
       "shapes (troupe's own). HETERO: its splits per set of shapes; MULTI and AUTO: all devices' added up."},
      {"RUNTIME_COMPILE_MS", "all",
       "The time those compiles took, in milliseconds, added up (troupe's own). A request of a shape "
       "already compiled does not wait for one that compiles."},
      {"RUNTIME_CACHE_CAPACITY", "all", "The programs for dynamic shapes it keeps (0: no bound)."},
      {"LOADED_FROM_CACHE", "all",
       "YES when a GPU's compile found pipelines in its CACHE_DIR pipeline cache file (the only cache "
       "that shortens a compile, docs/cache.md); NO on the CPU and REFERENCE, and for a model with "
       "dynamic inputs (it compiles at its first inference)."},
  };
  return t;
}

device_kind kind_of(const kernels::device& dev) {
  const auto n = dev.name();
  if (n.rfind("GPU", 0) == 0) return device_kind::gpu;
  if (n == "REFERENCE") return device_kind::reference;
  return device_kind::cpu;
}

const std::vector<std::string>& writable_properties(const kernels::device& dev) {
  // The GPU's work runs in shaders: its table rows have no host thread count to set.
  static const auto lists = [] {
    std::map<device_kind, std::vector<std::string>> m;
    for (auto k : {device_kind::cpu, device_kind::gpu, device_kind::reference})
      for (const auto& row : property_table())
        if (row.writable && (row.kinds & kind_bit(k))) m[k].push_back(row.name);
    return m;
  }();
  return lists.at(kind_of(dev));
}

std::vector<std::string> readonly_properties(const kernels::device& dev) {
  std::vector<std::string> r = common_readonly();
  for (const auto& [k, v] : dev.info())
    if (std::find(r.begin(), r.end(), k) == r.end()) r.push_back(k);
  return r;
}

int core_count() {
  // The CPUs this process may run on (taskset, cgroups' cpusets), not all the machine has.
  int n = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(n, 1);
}

void check_cache_dir(const std::string& dir, const std::string& what) {
  if (dir.empty()) return;
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw Exception("bad value '" + dir + "' for " + what + ": it exists and is not a folder");
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Exception("bad value '" + dir + "' for " + what + ": cannot create the folder: " + ec.message());
  if (::access(dir.c_str(), W_OK) != 0)
    throw Exception("bad value '" + dir + "' for " + what + ": the folder is not writable");
}

void validate_property(const std::string& d, const kernels::device& dev, const std::string& name, const Any& v) {
  const auto ro = readonly_properties(dev);
  if (std::find(ro.begin(), ro.end(), name) != ro.end())
    throw Exception("property " + name + " of device " + d + " is read-only");
  const auto& rw = writable_properties(dev);
  if (std::find(rw.begin(), rw.end(), name) == rw.end())
    throw Exception("device " + d + " has no property '" + name + "'; its properties: " + joined(rw));
  const auto kind = kind_of(dev);
  int n = 0;
  if (name == "INFERENCE_NUM_THREADS") {
    if (!parse_int(v, n) || n < 0) bad_value(d, name, v, allowed(kind, name));
  } else if (name == "NUM_STREAMS") {
    if (v.as_string() != "AUTO" && (!parse_int(v, n) || n < 1)) bad_value(d, name, v, allowed(kind, name));
  } else if (name == "INFERENCE_PRECISION_HINT") {
    const auto& s = v.as_string();
    if (s == "f32" || s == "float32") return;
    const bool bf16 = kind == device_kind::cpu && cpu_has_bf16(dev);
    if (s == "bf16" || s == "bfloat16") {
      if (bf16) return;
      throw Exception("bad value '" + s + "' for property " + name + " of device " + d + ": this " + d +
                      " has no bf16 support; allowed: f32");
    }
    if (kind == device_kind::gpu && (s == "f16" || s == "float16")) {
      // f16 storage needs shaderFloat16 + storageBuffer16BitAccess (the device lists FP16 then).
      if (has_capability(dev, "FP16")) return;
      throw Exception("bad value '" + s + "' for property " + name + " of device " + d + " (" +
                      dev.info()["FULL_DEVICE_NAME"] +
                      "): it lacks shaderFloat16 / storageBuffer16BitAccess; allowed: f32");
    }
    bad_value(d, name, v, bf16 ? "f32, bf16" : "f32");
  } else if (name == "PERF_COUNT" || name == "GPU_F16_ARITHMETIC") {
    const auto& s = v.as_string();
    if (s != "YES" && s != "NO" && s != "true" && s != "false") bad_value(d, name, v, allowed(kind, name));
  } else if (name == "PERFORMANCE_HINT") {
    const auto& s = v.as_string();
    if (s != "LATENCY" && s != "THROUGHPUT") bad_value(d, name, v, allowed(kind, name));
  } else if (name == "PERFORMANCE_HINT_NUM_REQUESTS" || name == "RUNTIME_CACHE_CAPACITY" || name == "FAIL_EVERY") {
    if (!parse_int(v, n) || n < 0) bad_value(d, name, v, allowed(kind, name));
  } else if (name == "CACHE_DIR") {
    check_cache_dir(v.as_string(), "property CACHE_DIR of device " + d);
  }
}

resolved_config resolve_config(const AnyMap& props, const kernels::device& dev) {
  resolved_config r;
  auto get = [&](const char* k) -> const Any* {
    auto it = props.find(k);
    return it == props.end() ? nullptr : &it->second;
  };
  const bool gpu = kind_of(dev) == device_kind::gpu;
  if (auto* v = get("PERFORMANCE_HINT")) r.hint = v->as_string();
  // A remote device's streams and threads run on its node: counted from the node's cores.
  int cores = core_count();
  if (dev.name().find('@') != std::string::npos)
    if (const auto info = dev.info(); info.count("NODE_CORES")) cores = std::max(1, std::atoi(info.at("NODE_CORES").c_str()));
  // OpenVINO: LATENCY = one stream over all cores; THROUGHPUT = one 1-thread stream per core
  // (a GPU: two streams, whose host side is one thread each).
  const int auto_streams = gpu ? gpu_throughput_streams : cores;
  if (r.hint == "THROUGHPUT") {
    r.streams = auto_streams;
    r.threads_per_stream = 1;
    if (auto* v = get("PERFORMANCE_HINT_NUM_REQUESTS"); v && v->as<int>() > 0)
      r.streams = std::min(r.streams, v->as<int>());
  } else {
    r.streams = 1;
    r.threads_per_stream = gpu ? 1 : cores;
  }
  bool explicit_threads = false;
  if (auto* v = get("NUM_STREAMS")) {
    if (v->as_string() == "AUTO") r.streams = auto_streams;
    else r.streams = v->as<int>();
  }
  if (auto* v = get("INFERENCE_NUM_THREADS"); v && v->as<int>() > 0) {
    // Total threads over all streams, as OpenVINO counts them.
    r.threads_per_stream = std::max(1, v->as<int>() / r.streams);
    explicit_threads = true;
  }
  if (!explicit_threads && get("NUM_STREAMS")) r.threads_per_stream = gpu ? 1 : std::max(1, cores / r.streams);
  if (auto* v = get("PERF_COUNT")) r.profiling = v->as<bool>();
  if (auto* v = get("INFERENCE_PRECISION_HINT")) r.precision = v->as<element_type>();
  bool f16_arithmetic = default_f16_arithmetic(dev);
  if (auto* v = get("GPU_F16_ARITHMETIC")) f16_arithmetic = v->as<bool>();
  r.compile.num_threads = r.threads_per_stream;
  r.compile.streams = r.streams;
  r.compile.inference_precision = r.precision;
  r.compile.profiling = r.profiling;
  if (auto* v = get("CACHE_DIR")) r.compile.cache_dir = v->as_string();
  if (auto* v = get("RUNTIME_CACHE_CAPACITY")) r.runtime_cache_capacity = static_cast<std::size_t>(v->as<int>());
  if (auto* v = get("FAIL_EVERY")) {
    r.fail_every = v->as<int>();
    r.fail_every_given = true;
  }
  if (auto* v = get("EXCLUDED_OPS")) {
    r.excluded_ops = v->as_string();
    r.excluded_ops_given = true;
  }
  r.compile.f16_arithmetic = f16_arithmetic && r.precision == element_type::f16; // acts only with f16
  return r;
}

} // namespace troupe
