/// Where a model's time goes against what the machine can do: each op's measured time (the
/// device's per-op counters, PERF_COUNT) beside its floating-point operations and the bytes it
/// must at least move (graph/op_cost.hpp), its GFLOP/s and GB/s, and its share of the peak:
/// the best GFLOP/s of a large 3x3 Conv and a large MatMul on the same device and threads in
/// the same run (measured, not the vendor's figure: a virtual machine's clock is unknown). Ops
/// fused into another report no time of their own; the device's layout changes (reorders)
/// report time and bytes but no operations. Integer ops (MatMulInteger, ConvInteger) are
/// measured against the int8 peak of a large MatMulInteger instead. Prints a markdown table,
/// slowest op first.
/// usage: troupe_roofline -m MODEL [-shape x[1,3,48,320],y[...]] [-d CPU] [-infer_precision f32|bf16]
///                        [-nthreads N] [-niter 50] [-top 25]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

#include "benchmarks/single_op_graph.hpp"
#include "tools/args.hpp"
#include "graph/attention_pattern.hpp"
#include "graph/op_cost.hpp"
#include "runtime/compile_pipeline.hpp"
#include "runtime/model_impl.hpp"
#include "tests/support/random_tensor.hpp"

using namespace troupe;

namespace {

struct options {
  std::string model, shape, device = "CPU", precision = "f32";
  int threads = 0, iterations = 50, top = 25;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "troupe_roofline: %s\nusage: troupe_roofline -m MODEL [-shape NAME[dims]] [-d DEVICE] "
               "[-infer_precision f32|bf16] [-nthreads N] [-niter N] [-top N]\n",
               why.c_str());
  std::exit(2);
}

/// The flags, read as `troupe bench` reads its own (tools/args.hpp: `-niter 5` or `-niter=5`; a
/// number that is not one is a usage error naming the flag).
options parse(int argc, char** argv) {
  options o;
  try {
    const auto a = cli::parse_args(argc, argv, 1,
                                   {{"-m", "a model file"},
                                    {"-shape", "NAME[dims]"},
                                    {"-d", "a device name"},
                                    {"-infer_precision", "f32 or bf16"},
                                    {"-nthreads", "an integer >= 0"},
                                    {"-niter", "an integer >= 1"},
                                    {"-top", "an integer >= 1"}});
    o.model = a.get("-m");
    o.shape = a.get("-shape");
    o.device = a.get("-d", o.device);
    o.precision = a.get("-infer_precision", o.precision);
    o.threads = static_cast<int>(a.get_uint("-nthreads", static_cast<uint64_t>(o.threads)));
    o.iterations = std::max(1, static_cast<int>(a.get_uint("-niter", static_cast<uint64_t>(o.iterations))));
    o.top = std::max(1, static_cast<int>(a.get_uint("-top", static_cast<uint64_t>(o.top))));
  } catch (const cli::usage_error& e) {
    usage(e.what());
  }
  if (o.model.empty()) usage("no model (-m)");
  return o;
}

/// Uniform [0, 1) for f32 inputs (an image-like range), zeros for the others.
Tensor random_input(const Port& p) {
  if (p.get_element_type() == element_type::f32) return tests::random_tensor(p.get_shape(), 7, 0.0f, 1.0f);
  return Tensor(p.get_element_type(), p.get_shape());
}

AnyMap properties(const options& o) {
  AnyMap p{{"PERF_COUNT", true}, {"PERFORMANCE_HINT", std::string("LATENCY")},
           {"INFERENCE_PRECISION_HINT", o.precision}};
  if (o.threads > 0) p["INFERENCE_NUM_THREADS"] = o.threads;
  return p;
}

/// Each op's real time in ms, summed by name and averaged over `iterations` inferences (after
/// two not counted), and the ops' kernel and type as the device reports them.
struct measured {
  std::map<std::string, double> ms;
  std::map<std::string, std::string> kernel, type;
  double total_ms = 0; ///< wall time of one inference, median
};

measured run(Core& core, const Model& model, const options& o) {
  auto compiled = core.compile_model(model, o.device, properties(o));
  auto request = compiled.create_infer_request();
  for (const Port& p : compiled.inputs()) request.set_tensor(p.get_any_name(), random_input(p));
  measured m;
  std::vector<double> walls;
  for (int i = 0; i < o.iterations + 2; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    request.infer();
    const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i < 2) continue;
    walls.push_back(wall);
    for (const ProfilingInfo& c : request.get_profiling_info()) {
      if (c.status != ProfilingInfo::Status::EXECUTED) continue;
      m.ms[c.node_name] += c.real_time.count() / 1000.0 / o.iterations;
      m.kernel[c.node_name] = c.exec_type;
      m.type[c.node_name] = c.node_type;
    }
  }
  std::sort(walls.begin(), walls.end());
  m.total_ms = walls[walls.size() / 2];
  return m;
}

/// A one-op model: `type` over an input of `in` and constant weights of `weights`, giving `out`.
Model one_op(const std::string& type, const Shape& in, const Shape& weights, const Shape& out,
             std::map<std::string, graph::AttributeValue> attrs) {
  auto impl = std::make_shared<Model::Impl>();
  graph::Graph& g = impl->graph;
  const auto a = g.add_input("a", element_type::f32, PartialShape(in));
  const auto b = g.add_constant("b", tests::random_tensor(weights, 3));
  bench::add_op(g, type, {a, b}, out, std::move(attrs));
  impl->name = "peak_" + type;
  return Model(impl);
}

/// The peak this table measures against: the best GFLOP/s of two compute-bound probes on the
/// device with the same settings, a 3x3 Conv (256 -> 256 channels on 56 x 56, 3.7 GFLOP) and a
/// MatMul (1024^3, 2.1 GFLOP). The Conv probe runs the direct algorithm: a Winograd
/// convolution does fewer multiplications than the FLOPs counted for it, so its rate is not
/// the machine's (the tables count every Conv's direct FLOPs, as is usual).
double measured_peak(Core& core, const options& o) {
  options probe = o;
  probe.iterations = 10;
  const std::string saved = std::getenv("TROUPE_CPU_NO_WINOGRAD") ? std::getenv("TROUPE_CPU_NO_WINOGRAD") : "";
  ::setenv("TROUPE_CPU_NO_WINOGRAD", "1", 1);
  struct restore {
    const std::string& value;
    ~restore() { value.empty() ? ::unsetenv("TROUPE_CPU_NO_WINOGRAD") : ::setenv("TROUPE_CPU_NO_WINOGRAD", value.c_str(), 1); }
  } restore_env{saved};
  const std::vector<std::pair<Model, double>> probes{
      {one_op("Conv", {1, 256, 56, 56}, {256, 256, 3, 3}, {1, 256, 56, 56},
              {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"kernel_shape", std::vector<int64_t>{3, 3}}}),
       2.0 * 256 * 256 * 9 * 56 * 56},
      {one_op("MatMul", {1024, 1024}, {1024, 1024}, {1024, 1024}, {}), 2.0 * 1024 * 1024 * 1024}};
  double best = 0;
  for (const auto& [model, flops] : probes) {
    const measured m = run(core, model, probe);
    double ms = 0;
    for (const auto& [name, t] : m.ms) ms = std::max(ms, t);
    if (ms > 0) best = std::max(best, flops / (ms * 1e6));
  }
  return best;
}

/// Integer ops, measured against the int8 peak.
bool is_integer_op(const std::string& type) { return type == "MatMulInteger" || type == "ConvInteger"; }

/// The int8 peak, for models with integer ops (a dynamically quantized model): the rate of a
/// 1024^3 u8 x s8 MatMulInteger (as quantize_dynamic writes it: DynamicQuantizeLinear's u8 and
/// zero point, constant s8 weights) on the device with the same settings, in integer
/// multiply-adds x 2 per second (GOP/s), the MatMulInteger's own counter.
double measured_int8_peak(Core& core, const options& o) {
  options probe = o;
  probe.iterations = 10;
  constexpr int64_t n = 1024;
  auto impl = std::make_shared<Model::Impl>();
  graph::Graph& g = impl->graph;
  const auto a = g.add_input("a", element_type::f32, PartialShape(Shape{n, n}));
  graph::Op dql;
  dql.type = "DynamicQuantizeLinear";
  dql.name = "quantize";
  dql.inputs = {a};
  dql.outputs = {g.add_value({"a_q", element_type::u8, PartialShape(Shape{n, n}), std::nullopt}),
                 g.add_value({"a_scale", element_type::f32, PartialShape(Shape{}), std::nullopt}),
                 g.add_value({"a_zp", element_type::u8, PartialShape(Shape{}), std::nullopt})};
  g.ops.push_back(dql);
  Tensor w(element_type::i8, Shape{n, n});
  uint32_t state = 12345;
  for (int64_t i = 0; i < n * n; ++i) w.data<int8_t>()[i] = static_cast<int8_t>((state = state * 1664525u + 1013904223u) >> 24);
  graph::Op mm;
  mm.type = "MatMulInteger";
  mm.name = "peak_MatMulInteger";
  mm.inputs = {dql.outputs[0], g.add_constant("w", std::move(w)), dql.outputs[2]};
  mm.outputs = {g.add_value({"y", element_type::i32, PartialShape(Shape{n, n}), std::nullopt})};
  g.outputs.push_back(mm.outputs[0]);
  g.ops.push_back(mm);
  impl->name = "peak_int8";
  const measured m = run(core, Model(impl), probe);
  const auto it = m.ms.find(mm.name);
  return it == m.ms.end() || it->second <= 0 ? 0 : 2.0 * n * n * n / (it->second * 1e6);
}

} // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  try {
    Core core;
    Model model = core.read_model(o.model);
    if (!o.shape.empty()) {
      // NAME[dims] entries separated by ',' (one per input: a BERT takes ids and a mask).
      std::map<std::string, PartialShape> shapes;
      for (std::size_t pos = 0; pos < o.shape.size();) {
        const auto open = o.shape.find('[', pos), close = o.shape.find(']', pos);
        if (open == std::string::npos || close == std::string::npos || close < open || open == pos)
          usage("-shape takes NAME[dims] entries separated by ',', e.g. x[1,3,48,320] or ids[1,64],mask[1,64]");
        shapes[o.shape.substr(pos, open - pos)] = PartialShape::parse(o.shape.substr(open, close + 1 - open));
        pos = close + 1;
        if (pos < o.shape.size() && o.shape[pos] == ',') ++pos;
      }
      model.reshape(shapes);
    }
    for (const Port& p : model.inputs())
      if (!p.get_partial_shape().is_static())
        usage("input '" + p.get_any_name() + "' is " + p.get_partial_shape().to_string() + ": give -shape");

    // The graph the device compiles: the same passes, so the names match its counters.
    graph::Graph g = model.impl()->graph;
    optimize_graph(g);
    std::map<std::string, graph::op_cost> cost;
    for (const graph::Op& op : g.ops) cost[op.name] = graph::cost_of(g, op);
    // A device that runs an attention block as one step names the step after the block's last
    // op (a Reshape or MatMul): its row counts the block's operations and reads Q, K, V and the
    // mask and writes the output once.
    std::map<std::string, graph::op_cost> attention_cost;
    for (const auto& a : graph::find_attention_patterns(g)) {
      graph::op_cost& c = attention_cost[g.ops[a.last].name];
      for (std::size_t i : a.members) c.flops += graph::cost_of(g, g.ops[i]).flops;
      for (const auto* o : {&a.q, &a.k, &a.v, &a.mask, &a.keep, &a.y})
        if (o->source != graph::no_value) c.bytes += graph::value_bytes(g, o->source);
    }

    const double peak = measured_peak(core, o);
    const bool has_int8 = std::any_of(g.ops.begin(), g.ops.end(), [](const graph::Op& op) { return is_integer_op(op.type); });
    const double int8_peak = has_int8 ? measured_int8_peak(core, o) : 0;
    const measured m = run(core, model, o);

    struct row {
      std::string name, type, kernel;
      double ms, flops, bytes;
    };
    std::vector<row> rows;
    double sum_ms = 0, sum_flops = 0, sum_bytes = 0;
    for (const auto& [name, ms] : m.ms) {
      graph::op_cost c;
      if (auto it = attention_cost.find(name); it != attention_cost.end() && m.type.at(name) == "ScaledDotProductAttention")
        c = it->second;
      else if (auto it = cost.find(name); it != cost.end()) c = it->second;
      else if (auto slash = name.rfind("/reorder"); slash != std::string::npos) { // read once, written once
        if (const auto v = g.find_value(name.substr(0, slash)); v != graph::no_value) c.bytes = 2 * graph::value_bytes(g, v);
      }
      rows.push_back({name, m.type.at(name), m.kernel.at(name), ms, c.flops, c.bytes});
      sum_ms += ms;
      sum_flops += c.flops;
      sum_bytes += c.bytes;
    }
    std::sort(rows.begin(), rows.end(), [](const row& a, const row& b) { return a.ms > b.ms; });

    std::printf("%s on %s, %s, %s threads: %.3f ms per inference (median of %d), ops %.3f ms; "
                "%.3f GFLOP; peak (best of a 3x3 Conv and a MatMul here, same settings) %.1f GFLOP/s\n\n",
                o.model.c_str(), o.device.c_str(), o.precision.c_str(),
                o.threads > 0 ? std::to_string(o.threads).c_str() : "all", m.total_ms, o.iterations, sum_ms,
                sum_flops / 1e9, peak);
    if (has_int8)
      std::printf("MatMulInteger and ConvInteger rows (GOP/s of integer multiply-adds x 2) against the int8 peak: "
                  "a 1024^3 u8 x s8 MatMulInteger here, same settings, %.1f GOP/s\n\n",
                  int8_peak);
    std::printf("| op | type | kernel | ms | %% time | MFLOP | GFLOP/s | %% peak | MB | GB/s |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
    auto print = [&](const row& r) {
      const double gflops = r.ms > 0 ? r.flops / (r.ms * 1e6) : 0;
      const double gbs = r.ms > 0 ? r.bytes / (r.ms * 1e6) : 0;
      // The summary rows (no kernel) of a model with integer ops mix two peaks: no share.
      char share[32] = "-";
      if (!(has_int8 && r.kernel.empty()))
        std::snprintf(share, sizeof share, "%.1f", 100 * gflops / (is_integer_op(r.type) && int8_peak > 0 ? int8_peak : peak));
      std::printf("| %s | %s | %s | %.3f | %.1f | %.1f | %.1f | %s | %.2f | %.1f |\n", r.name.c_str(), r.type.c_str(),
                  r.kernel.c_str(), r.ms, 100 * r.ms / sum_ms, r.flops / 1e6, gflops, share, r.bytes / 1e6, gbs);
    };
    row rest{"(the other ops)", "", "", 0, 0, 0};
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (static_cast<int>(i) < o.top) print(rows[i]);
      else {
        rest.ms += rows[i].ms;
        rest.flops += rows[i].flops;
        rest.bytes += rows[i].bytes;
      }
    }
    if (rows.size() > static_cast<std::size_t>(o.top)) {
      rest.type = std::to_string(rows.size() - static_cast<std::size_t>(o.top)) + " ops";
      print(rest);
    }
    print({"**all**", "", "", sum_ms, sum_flops, sum_bytes});
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "troupe_roofline: %s\n", e.what());
    return 1;
  }
}
