/// Per-op speed of Conv and MatMul at the real shapes of the PP-OCR models, on every device
/// (CPU and each Vulkan GPU.N): single-op graphs compiled straight on the devices. For each
/// case it prints the median op time (device timestamps when the device profiles the op, else
/// the whole run() including upload/download) and GFLOP/s = 2 * MACs / time. The first case
/// times an (almost) empty dispatch, the device's fixed cost per dispatch; each later case also
/// prints the ceiling that cost alone puts on it: 2 * MACs / (dispatches * floor), what shaders
/// taking no time at all would reach.
/// usage: troupe_op_bench [-n RUNS=15] [-d DEVICE] [-p f32|f16|f16math] [FILTER]
///   FILTER: substring of the case name; -p: GPU precision, f16 = float16 storage,
///   f16math = float16 storage and arithmetic (GPU_F16_ARITHMETIC); the CPU always runs f32.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <troupe/exception.hpp>

#include "base/median.hpp"
#include "benchmarks/single_op_graph.hpp"
#include "tests/support/random_tensor.hpp"
#include "kernels/cpu/cpu_device.hpp"
#include "kernels/vulkan/vulkan_device.hpp"

using namespace troupe;

namespace {

/// One benchmark case: a single-op graph and its multiply-accumulate count.
struct bench_case {
  std::string name;
  graph::Graph g;
  double macs = 0;
  bool block = false; ///< a multi-op block: time = the sum of every op row, each op queried
  std::string timed = "Conv MatMul"; ///< the op types whose profile rows are the op time
};

using bench::add_op;
using tests::random_tensor;

graph::ValueId add_input(graph::Graph& g, const std::string& name, const Shape& s) {
  return g.add_input(name, element_type::f32, PartialShape(s));
}

graph::ValueId add_constant(graph::Graph& g, const std::string& name, const Shape& s, unsigned seed) {
  return g.add_constant(name, random_tensor(s, seed));
}

std::string dims(const Shape& s) {
  std::string r;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) r.push_back('x');
    r.append(std::to_string(s[i]));
  }
  return r;
}

/// Conv with constant weights and bias (as in the models), symmetric pads p.
bench_case conv(const char* where, Shape x, int64_t oc, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph,
                int64_t pw, int64_t group) {
  bench_case c;
  int64_t oh = (x[2] + 2 * ph - kh) / sh + 1, ow = (x[3] + 2 * pw - kw) / sw + 1;
  Shape y{x[0], oc, oh, ow};
  auto xi = add_input(c.g, "x", x);
  auto wi = add_constant(c.g, "w", {oc, x[1] / group, kh, kw}, 1);
  auto bi = add_constant(c.g, "b", {oc}, 2);
  add_op(c.g, "Conv", {xi, wi, bi}, y,
         {{"kernel_shape", std::vector<int64_t>{kh, kw}},
          {"strides", std::vector<int64_t>{sh, sw}},
          {"pads", std::vector<int64_t>{ph, pw, ph, pw}},
          {"group", group}});
  c.macs = double(y[0]) * oc * oh * ow * (x[1] / group) * kh * kw;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s Conv %s k%lldx%lld%s%s -> %lld", where, dims(x).c_str(), (long long)kh, (long long)kw,
                sh > 1 || sw > 1 ? (" s" + std::to_string(sh) + "x" + std::to_string(sw)).c_str() : "",
                group > 1 ? (group == x[1] ? " dw" : " grouped") : "", (long long)oc);
  c.name = buf;
  return c;
}

/// MatMul A x B; B constant (weights) or a second input (attention).
bench_case matmul(const char* where, Shape a, Shape b, bool const_b) {
  bench_case c;
  Shape y = a;
  y.back() = b.back();
  auto ai = add_input(c.g, "a", a);
  auto bi = const_b ? add_constant(c.g, "b", b, 3) : add_input(c.g, "b", b);
  add_op(c.g, "MatMul", {ai, bi}, y, {});
  c.macs = 1;
  for (auto d : y) c.macs *= double(d);
  c.macs *= double(a.back());
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s MatMul %s x %s%s", where, dims(a).c_str(), dims(b).c_str(), const_b ? "" : " (both inputs)");
  c.name = buf;
  return c;
}

/// PP-OCR rec's attention block: Mul(q, scale) -> MatMul(., Transpose(k)) -> Softmax(last axis)
/// -> MatMul(., v), q, k, v [1, H, T, D]. FLOPs of both MatMuls. With `scores_out` the scores
/// are also a graph output (another reader), so the block cannot fuse: one dispatch per op.
bench_case attention(const char* where, int64_t heads, int64_t t, int64_t d, bool scores_out) {
  bench_case c;
  c.block = true;
  Shape qs{1, heads, t, d}, kts{1, heads, d, t}, ss{1, heads, t, t};
  auto q = add_input(c.g, "q", qs), k = add_input(c.g, "k", qs), v = add_input(c.g, "v", qs);
  Tensor sc(element_type::f32, {1});
  sc.data<float>()[0] = 1.0f / std::sqrt(float(d));
  auto scale = c.g.add_constant("scale", sc);
  auto op = [&](const std::string& type, std::vector<graph::ValueId> in, const Shape& out,
                std::map<std::string, graph::AttributeValue> attrs) {
    graph::Op o;
    o.type = type;
    o.name = type + "_" + std::to_string(c.g.ops.size());
    o.inputs = std::move(in);
    o.attrs = std::move(attrs);
    o.outputs.push_back(c.g.add_value({o.name, element_type::f32, PartialShape(out), std::nullopt}));
    c.g.ops.push_back(std::move(o));
    return c.g.ops.back().outputs[0];
  };
  auto qs2 = op("Mul", {q, scale}, qs, {});
  auto kt = op("Transpose", {k}, kts, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  auto s = op("MatMul", {qs2, kt}, ss, {});
  auto p = op("Softmax", {s}, ss, {{"axis", int64_t{3}}});
  c.g.outputs.push_back(op("MatMul", {p, v}, qs, {}));
  if (scores_out) c.g.outputs.push_back(s);
  c.macs = 2.0 * double(heads) * t * t * d;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s attention %lldx%lldx%lld block%s", where, (long long)heads, (long long)t, (long long)d,
                scores_out ? " (scores read twice: unfused)" : "");
  c.name = buf;
  return c;
}

/// onnxruntime's quantize_dynamic linear layer, u8 weights over their whole range (asymmetric,
/// per tensor): DynamicQuantizeLinear(a) -> MatMulInteger(a_q, W, a_zp, W_zp) -> Cast ->
/// Mul(a_scale * W_scale). Timed: every op of the block, the quantization included.
bench_case dynamic_int8_linear(const char* where, Shape a, int64_t n) {
  bench_case c;
  c.block = true;
  graph::Graph& g = c.g;
  const int64_t k = a.back();
  Shape y = a;
  y.back() = n;
  auto value = [&](const std::string& name, element_type t, const Shape& s) {
    return g.add_value({name, t, PartialShape(s), std::nullopt});
  };
  auto op = [&](const std::string& type, std::vector<graph::ValueId> in, std::vector<graph::ValueId> out) {
    graph::Op o;
    o.type = type;
    o.name = type + "_" + std::to_string(g.ops.size());
    o.inputs = std::move(in);
    o.outputs = std::move(out);
    if (type == "Cast") o.attrs["to"] = int64_t{1};
    g.ops.push_back(std::move(o));
  };
  Tensor w(element_type::u8, Shape{k, n}), wz(element_type::u8, Shape{}), ws(element_type::f32, Shape{});
  uint32_t state = 12345; // a fixed LCG: the weights' bytes, all 256 values
  for (int64_t i = 0; i < w.get_size(); ++i) w.data<uint8_t>()[i] = static_cast<uint8_t>((state = state * 1664525u + 1013904223u) >> 24);
  wz.data<uint8_t>()[0] = 131;
  ws.data<float>()[0] = 0.004f;
  auto x = add_input(g, "a", a);
  auto xq = value("a_q", element_type::u8, a), xs = value("a_scale", element_type::f32, {}), xz = value("a_zp", element_type::u8, {});
  op("DynamicQuantizeLinear", {x}, {xq, xs, xz});
  auto y32 = value("y32", element_type::i32, y), yf = value("yf", element_type::f32, y), sc = value("scale", element_type::f32, {});
  op("MatMulInteger", {xq, g.add_constant("w", w), xz, g.add_constant("w_zp", wz)}, {y32});
  op("Cast", {y32}, {yf});
  op("Mul", {xs, g.add_constant("w_scale", ws)}, {sc});
  auto out = value("y", element_type::f32, y);
  op("Mul", {yf, sc}, {out});
  g.outputs.push_back(out);
  c.macs = double(shape_size(y)) * double(k);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s dynamic int8 linear %s x %s", where, dims(a).c_str(), dims({k, n}).c_str());
  c.name = buf;
  return c;
}

/// The cost of one (almost) empty dispatch: an Add of 8 floats. Printed as time only; it is
/// the floor under every op time above it on this device.
bench_case dispatch_floor() {
  bench_case c;
  Shape s{1, 8};
  auto a = add_input(c.g, "a", s);
  auto b = add_constant(c.g, "b", s, 4);
  add_op(c.g, "Add", {a, b}, s, {});
  c.timed = "Add";
  c.name = "dispatch floor: Add 1x8";
  return c;
}

/// The shapes that dominate the models' FLOPs (found with onnx shape inference on
/// PP-OCRv4 det at 1x3x320x320 and rec at 1x3x48x320).
std::vector<bench_case> cases() {
  std::vector<bench_case> r;
  r.push_back(dispatch_floor());
  r.push_back(conv("det", {1, 96, 80, 80}, 24, 3, 3, 1, 1, 1, 1, 1));     // 47% of det's FLOPs
  r.push_back(conv("det", {1, 192, 20, 20}, 192, 1, 1, 1, 1, 0, 0, 1));   // det's largest 1x1 (x4)
  r.push_back(conv("det", {1, 48, 80, 80}, 48, 1, 1, 1, 1, 0, 0, 1));     // a wide 1x1
  r.push_back(conv("det", {1, 3, 320, 320}, 16, 3, 3, 2, 2, 1, 1, 1));    // the stem
  r.push_back(conv("det", {1, 192, 20, 20}, 192, 5, 5, 1, 1, 2, 2, 192)); // depthwise 5x5 (x4)
  r.push_back(conv("rec", {1, 240, 12, 80}, 240, 1, 1, 1, 1, 0, 0, 1));   // 34% of rec's FLOPs
  r.push_back(conv("rec", {1, 480, 3, 80}, 480, 1, 1, 1, 1, 0, 0, 1));    // (x2)
  r.push_back(conv("rec", {1, 128, 12, 160}, 128, 1, 1, 1, 1, 0, 0, 1));
  r.push_back(conv("rec", {1, 240, 12, 80}, 240, 5, 5, 1, 1, 2, 2, 240)); // depthwise 5x5 (x4)
  r.push_back(conv("rec", {1, 480, 1, 40}, 60, 1, 3, 1, 1, 0, 1, 1));     // SVTR's 1x3 conv
  r.push_back(conv("rec", {1, 3, 48, 320}, 16, 3, 3, 2, 2, 1, 1, 1));     // the stem
  r.push_back(matmul("rec", {1, 40, 120}, {120, 360}, true));             // qkv projection
  r.push_back(matmul("rec", {1, 40, 120}, {120, 240}, true));             // MLP
  r.push_back(matmul("rec", {1, 40, 240}, {240, 120}, true));
  r.push_back(matmul("rec", {1, 8, 40, 15}, {1, 8, 15, 40}, false));      // attention q x k^T
  r.push_back(matmul("rec", {1, 40, 120}, {120, 6625}, true));            // the CTC head
  r.push_back(matmul("lm", {1, 32, 256}, {256, 1024}, true));             // a transformer's MLP
  r.push_back(matmul("lm", {1, 32, 256}, {256, 49152}, true));            // a 49k vocabulary head
  r.push_back(dynamic_int8_linear("lm", {1, 64, 256}, 1024));             // quantize_dynamic's MLP
  r.push_back(dynamic_int8_linear("lm", {1, 64, 256}, 49152));            // and its vocabulary head
  r.push_back(attention("rec", 8, 40, 15, false));                         // SVTR attention (x2)
  r.push_back(attention("rec", 8, 40, 15, true));
  return r;
}

/// Times one case on one device; prints one line and returns the median time in seconds (0
/// when the device does not run it). `floor` > 0: the device's dispatch floor, for the ceiling.
double run_case(kernels::device& dev, const bench_case& c, int runs, double floor, kernels::compile_config cfg) {
  for (const auto& o : c.g.ops) {
    auto s = dev.query(c.g, o);
    if (!s.supported) {
      std::printf("%-6s %-52s unsupported: %s\n", dev.name().c_str(), c.name.c_str(), s.reason.c_str());
      return 0;
    }
    if (!c.block) break;
  }
  // Rows that count: the Conv/MatMul of a single-op case, every op of a block.
  auto counts = [&](const kernels::op_profile& p) {
    if (c.block) return p.node_type != "Upload" && p.node_type != "Download";
    return (" " + c.timed + " ").find(" " + p.node_type + " ") != std::string::npos;
  };
  cfg.profiling = true;
  auto exe = dev.compile(c.g, cfg);
  std::vector<Tensor> in, out;
  unsigned seed = 100;
  for (auto v : c.g.inputs) in.push_back(random_tensor(c.g.value(v).shape.to_shape(), seed++));
  for (int i = 0; i < 3; ++i) exe->run(in, out); // warm-up: first-run allocation, pipeline caches
  std::vector<double> wall, op;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    exe->run(in, out);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    double sum = 0;
    for (const auto& p : exe->profile())
      if (counts(p)) sum += p.real_time_us * 1e-6;
    if (sum > 0) op.push_back(sum);
  }
  bool have_op = op.size() == wall.size();
  double t = have_op ? median(op) : median(wall);
  std::string exec;
  int dispatches = 0; // each pays the floor: "vulkan:a+b" is two
  for (const auto& p : exe->profile())
    if (counts(p) && (!c.block || p.state != kernels::op_profile::status::optimized_out)) {
      exec += (exec.empty() ? "" : " ") + p.exec_type;
      dispatches += 1 + static_cast<int>(std::count(p.exec_type.begin(), p.exec_type.end(), '+'));
    }
  char rate[32] = "", ceiling[40] = "";
  if (c.macs > 0) std::snprintf(rate, sizeof rate, "%7.2f GFLOP/s", 2.0 * c.macs / t * 1e-9);
  if (c.macs > 0 && floor > 0)
    std::snprintf(ceiling, sizeof ceiling, "; ceiling %.1f", 2.0 * c.macs / (std::max(dispatches, 1) * floor) * 1e-9);
  std::printf("%-6s %-52s %8.3f ms %15s   (%s; run() %.3f ms%s; %s)\n", dev.name().c_str(), c.name.c_str(), t * 1e3,
              rate, have_op ? "op time" : "run() time", median(wall) * 1e3, ceiling, exec.c_str());
  std::fflush(stdout);
  return t;
}

} // namespace

int main(int argc, char** argv) {
  int runs = 15;
  std::string filter, only_device, precision = "f32";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-n") && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "-d") && i + 1 < argc) only_device = argv[++i];
    else if (!std::strcmp(argv[i], "-p") && i + 1 < argc) precision = argv[++i];
    else if (argv[i][0] == '-') {
      std::fprintf(stderr, "usage: %s [-n RUNS] [-d DEVICE] [-p f32|f16|f16math] [FILTER]\n", argv[0]);
      return 2;
    } else filter = argv[i];
  }
  kernels::compile_config gpu_cfg;
  if (precision == "f16" || precision == "f16math") gpu_cfg.inference_precision = element_type::f16;
  gpu_cfg.f16_arithmetic = precision == "f16math";
  if (precision != "f32" && precision != "f16" && precision != "f16math") {
    std::fprintf(stderr, "troupe_op_bench: -p %s: expected f32, f16 or f16math\n", precision.c_str());
    return 2;
  }
  try {
    std::vector<std::unique_ptr<kernels::device>> devices;
    devices.push_back(kernels::cpu::make_cpu_device());
    for (auto& d : kernels::make_vulkan_devices()) devices.push_back(std::move(d));
    auto all = cases();
    for (auto& dev : devices) {
      if (!only_device.empty() && dev->name() != only_device) continue;
      const auto cfg = dev->name() == "CPU" ? kernels::compile_config{} : gpu_cfg;
      double floor = run_case(*dev, all.front(), runs, 0, cfg); // the floor runs whatever the filter
      for (std::size_t i = 1; i < all.size(); ++i)
        if (filter.empty() || all[i].name.find(filter) != std::string::npos) run_case(*dev, all[i], runs, floor, cfg);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "troupe_op_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
