#include "runtime/device_properties.hpp"

#include <algorithm>
#include <thread>

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

const std::vector<std::string>& common_readonly() {
  static const std::vector<std::string> p{"AVAILABLE_DEVICES", "FULL_DEVICE_NAME", "SUPPORTED_PROPERTIES",
                                          "OPTIMIZATION_CAPABILITIES"};
  return p;
}

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

device_kind kind_of(const kernels::device& dev) {
  const auto n = dev.name();
  if (n.rfind("GPU", 0) == 0) return device_kind::gpu;
  if (n == "REFERENCE") return device_kind::reference;
  return device_kind::cpu;
}

const std::vector<std::string>& writable_properties(const kernels::device& dev) {
  static const std::vector<std::string> cpu{"INFERENCE_NUM_THREADS", "NUM_STREAMS", "INFERENCE_PRECISION_HINT",
                                            "PERF_COUNT", "PERFORMANCE_HINT", "PERFORMANCE_HINT_NUM_REQUESTS"};
  // The GPU's work runs in shaders: there is no host thread count to set.
  static const std::vector<std::string> gpu{"NUM_STREAMS", "INFERENCE_PRECISION_HINT", "GPU_F16_ARITHMETIC",
                                            "PERF_COUNT", "PERFORMANCE_HINT", "PERFORMANCE_HINT_NUM_REQUESTS"};
  return kind_of(dev) == device_kind::gpu ? gpu : cpu;
}

std::vector<std::string> readonly_properties(const kernels::device& dev) {
  std::vector<std::string> r = common_readonly();
  for (const auto& [k, v] : dev.info())
    if (std::find(r.begin(), r.end(), k) == r.end()) r.push_back(k);
  return r;
}

int core_count() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
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
    if (!parse_int(v, n) || n < 0) bad_value(d, name, v, "an integer >= 0 (0 = all cores)");
  } else if (name == "NUM_STREAMS") {
    if (v.as_string() != "AUTO" && (!parse_int(v, n) || n < 1)) bad_value(d, name, v, "an integer >= 1, AUTO");
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
    if (s != "YES" && s != "NO" && s != "true" && s != "false") bad_value(d, name, v, "YES, NO, true, false");
  } else if (name == "PERFORMANCE_HINT") {
    const auto& s = v.as_string();
    if (s != "LATENCY" && s != "THROUGHPUT") bad_value(d, name, v, "LATENCY, THROUGHPUT");
  } else if (name == "PERFORMANCE_HINT_NUM_REQUESTS") {
    if (!parse_int(v, n) || n < 0) bad_value(d, name, v, "an integer >= 0 (0 = no limit)");
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
  int cores = core_count();
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
  r.compile.inference_precision = r.precision;
  r.compile.profiling = r.profiling;
  r.compile.f16_arithmetic = f16_arithmetic && r.precision == element_type::f16; // acts only with f16
  return r;
}

} // namespace troupe
