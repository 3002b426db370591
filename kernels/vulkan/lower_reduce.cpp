/// Softmax/LogSoftmax (shaders/softmax.comp), LayerNormalization (shaders/layer_norm.comp),
/// ArgMax/ArgMin/Hardmax (shaders/arg_reduce.comp), Trilu (shaders/trilu.comp) and the Reduce*
/// family (shaders/reduce.comp).
#include "kernels/vulkan/lowering.hpp"

namespace troupe::kernels::vulkan {

namespace {

std::string check_f32(const graph::Graph& g, const graph::Op& op) {
  if (g.value(op.inputs[0]).type != element_type::f32) return "the shader is float32 only";
  if (shape_of(g, op.inputs[0]).size() > 6) return "rank above 6 has no Vulkan shader";
  return "";
}

/// [OUTER, AXIS, INNER] around `axis` of x; with `coerce`, every dim from `axis` on counts as
/// AXIS (Softmax and Hardmax before opset 13; LayerNormalization's normalized dims).
std::array<int64_t, 3> around(const Shape& x, int64_t axis, bool coerce) {
  std::array<int64_t, 3> r{1, 1, 1};
  if (axis < 0) axis += static_cast<int64_t>(x.size());
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i)
    r[i < axis ? 0 : (i == axis || coerce) ? 1 : 2] *= x[static_cast<std::size_t>(i)];
  return r;
}

/// Rows longer than this take a 64-wide workgroup each (the _wg shader variants): no invocation
/// loops over a whole long row.
constexpr int64_t wg_row = 256;

/// Loop iterations of a row pass: each element (one invocation per row), or every 64th plus the
/// shared-memory combine (a workgroup per row).
uint64_t row_trips(int64_t len, uint64_t passes) {
  const auto n = static_cast<uint64_t>(len);
  return len > wg_row ? passes * ((n + 63) / 64 + 6) : passes * n;
}

std::array<int64_t, 3> softmax_dims(const graph::Graph& g, const graph::Op& op) {
  return around(shape_of(g, op.inputs[0]), op.attr_int("axis", g.opset < 13 ? 1 : -1), g.opset < 13);
}

void softmax(op_builder& b, bool log) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const auto [outer, mid, inner] = softmax_dims(g, op);
  spec_map s{{0, static_cast<uint32_t>(outer)}, {1, static_cast<uint32_t>(mid)}, {2, static_cast<uint32_t>(inner)},
             {3, log ? 1u : 0u}};
  const bool wg = mid > wg_row;
  b.dispatch(wg ? "softmax_wg" : "softmax", std::move(s), {b.input(0), b.output(0)},
             static_cast<uint64_t>(outer * inner) * (wg ? 64 : 1));
}

/// Axes of a Reduce op: attribute, or (ReduceSum from 13, all from 18) a constant input.
std::vector<int64_t> reduce_axes(const graph::Graph& g, const graph::Op& op) {
  if (op.has_attr("axes")) return op.attr_ints("axes");
  if (op.inputs.size() > 1 && op.inputs[1] != graph::no_value) return const_ints(g, op, 1);
  return {};
}

void reduce(op_builder& b, int mode) {
  const auto& g = b.graph();
  const auto& op = b.op();
  Shape x = shape_of(g, op.inputs[0]);
  auto axes = reduce_axes(g, op);
  bool noop = axes.empty() && op.attr_int("noop_with_empty_axes", 0) != 0;
  uint32_t mask = 0;
  std::size_t pad = 6 - x.size();
  if (axes.empty() && !noop)
    for (std::size_t i = 0; i < x.size(); ++i) mask |= 1u << (pad + i);
  for (auto a : axes) mask |= 1u << (pad + static_cast<std::size_t>(a < 0 ? a + static_cast<int64_t>(x.size()) : a));
  spec_map s;
  int64_t out = 1, rc = 1;
  for (std::size_t i = 0; i < 6; ++i) {
    int64_t d = i >= pad ? x[i - pad] : 1;
    s[static_cast<uint32_t>(1 + i)] = static_cast<uint32_t>(d);
    ((mask >> i) & 1u ? rc : out) *= d;
  }
  s[0] = static_cast<uint32_t>(out);
  s[7] = mask;
  s[8] = static_cast<uint32_t>(rc);
  s[9] = static_cast<uint32_t>(mode);
  const bool wg = rc > wg_row;
  b.dispatch(wg ? "reduce_wg" : "reduce", std::move(s), {b.input(0), b.output(0)}, static_cast<uint64_t>(out) * (wg ? 64 : 1));
}

/// LayerNormalization: rows of the dims from `axis` on; scale and bias (inputs 1, 2) hold one
/// value per element of a row (the shape rule checks they broadcast; here they must match).
std::string layer_norm_check(const graph::Graph& g, const graph::Op& op) {
  auto w = check_f32(g, op);
  if (!w.empty()) return w;
  for (std::size_t i = 1; i < op.outputs.size(); ++i)
    if (op.outputs[i] != graph::no_value && g.value(op.outputs[i]).type != element_type::f32)
      return std::string("the Mean and InvStdDev outputs must be float32");
  const int64_t norm = around(shape_of(g, op.inputs[0]), op.attr_int("axis", -1), true)[1];
  for (std::size_t i = 1; i < 3 && i < op.inputs.size(); ++i)
    if (op.inputs[i] != graph::no_value) {
      if (g.value(op.inputs[i]).type != element_type::f32) return std::string("scale and bias must be float32");
      if (shape_size(shape_of(g, op.inputs[i])) != norm) return std::string("scale and bias must hold one value per normalized element");
    }
  if (op.attr_int("stash_type", 1) != 1) return std::string("stash_type other than float32 has no Vulkan shader");
  return "";
}

void layer_norm(op_builder& b) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const auto [rows, norm, one] = around(shape_of(g, op.inputs[0]), op.attr_int("axis", -1), true);
  const bool wg = norm > wg_row;
  const bool bias = op.inputs.size() > 2 && op.inputs[2] != graph::no_value;
  auto has = [&](std::size_t i) { return op.outputs.size() > i && op.outputs[i] != graph::no_value; };
  spec_map s{{0, static_cast<uint32_t>(rows)}, {1, static_cast<uint32_t>(norm)},
             {2, float_bits(op.attr_float("epsilon", 1e-5f))}, {3, bias ? 1u : 0u}, {4, has(1) ? 1u : 0u}, {5, has(2) ? 1u : 0u}};
  b.dispatch(wg ? "layer_norm_wg" : "layer_norm", std::move(s),
             {b.input(0), b.input(1), bias ? b.input(2) : b.input(1), b.output(0), has(1) ? b.output(1) : b.output(0),
              has(2) ? b.output(2) : b.output(0)},
             static_cast<uint64_t>(rows) * (wg ? 64 : 1), 1, 3);
}

void arg_reduce(op_builder& b) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const bool hardmax = op.type == "Hardmax";
  const bool coerce = hardmax && g.opset < 13;
  const auto d = around(shape_of(g, op.inputs[0]), op.attr_int("axis", hardmax ? (coerce ? 1 : -1) : 0), coerce);
  spec_map s{{0, static_cast<uint32_t>(d[0])}, {1, static_cast<uint32_t>(d[1])}, {2, static_cast<uint32_t>(d[2])},
             {3, op.type == "ArgMin" ? 1u : 0u}, {4, op.attr_int("select_last_index", 0) != 0 ? 1u : 0u}};
  const bool wg = d[1] > wg_row;
  b.dispatch(std::string(hardmax ? "hardmax" : "arg_reduce") + (wg ? "_wg" : ""), std::move(s), {b.input(0), b.output(0)},
             static_cast<uint64_t>(d[0] * d[2]) * (wg ? 64 : 1));
}

std::string trilu_check(const graph::Graph& g, const graph::Op& op) {
  const auto t = g.value(op.inputs[0]).type;
  if (t != element_type::f32 && element_size(t) != 4 && element_size(t) != 8)
    return "element type " + to_string(t) + " has no Vulkan shader (f32, or 32- and 64-bit types)";
  if (shape_of(g, op.inputs[0]).size() > 6) return std::string("rank above 6 has no Vulkan shader");
  if (shape_of(g, op.inputs[0]).size() < 2) return std::string("the input must have rank 2 or more");
  if (op.inputs.size() > 1 && op.inputs[1] != graph::no_value && !g.is_constant(op.inputs[1]) &&
      g.value(op.inputs[1]).type != element_type::i64)
    return std::string("k must be int64");
  return "";
}

void trilu(op_builder& b) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const Shape x = shape_of(g, op.inputs[0]);
  int64_t k = 0;
  const bool given = op.inputs.size() > 1 && op.inputs[1] != graph::no_value;
  const bool k_buffer = given && !g.is_constant(op.inputs[1]);
  if (given && !k_buffer) k = const_ints(g, op, 1).at(0);
  // Clamped so that it fits the shader's int and still keeps or drops every element.
  k = std::clamp<int64_t>(k, -(x[x.size() - 2] + 1), x.back() + 1);
  const auto t = g.value(op.inputs[0]).type;
  const uint64_t per = t == element_type::f32 ? 1 : element_size(t) / 4; // 32-bit words per element
  spec_map s{{0, static_cast<uint32_t>(shape_size(x) * static_cast<int64_t>(per))}, {1, static_cast<uint32_t>(x[x.size() - 2])},
             {2, static_cast<uint32_t>(x.back())}, {3, static_cast<uint32_t>(static_cast<int32_t>(k))},
             {4, op.attr_int("upper", 1) != 0 ? 1u : 0u}};
  if (t != element_type::f32) s[5] = static_cast<uint32_t>(per);
  s[6] = k_buffer ? 1u : 0u;
  b.dispatch(t == element_type::f32 ? "trilu" : "trilu_words", std::move(s),
             {b.input(0), k_buffer ? b.input(1) : b.input(0), b.output(0)}, static_cast<uint64_t>(shape_size(x)) * per);
}

uint64_t arg_reduce_trips(const graph::Graph& g, const graph::Op& op) {
  const bool hardmax = op.type == "Hardmax";
  const bool coerce = hardmax && g.opset < 13;
  const auto d = around(shape_of(g, op.inputs[0]), op.attr_int("axis", hardmax ? (coerce ? 1 : -1) : 0), coerce);
  return row_trips(d[1], hardmax ? 2 : 1);
}

uint64_t reduce_trips(const graph::Graph& g, const graph::Op& op) {
  const Shape x = shape_of(g, op.inputs[0]), y = shape_of(g, op.outputs[0]);
  const int64_t out = shape_size(y);
  const int64_t rc = out == 0 ? 0 : shape_size(x) / out;
  return row_trips(rc, op.type == "ReduceLogSumExp" ? 2 : 1);
}

} // namespace

void add_reduce_rules(rule_table& t) {
  t["ArgMax"] = {check_f32, arg_reduce, "f32 input, rank <= 6; int64 indices", {}, {}, arg_reduce_trips};
  t["ArgMin"] = {check_f32, arg_reduce, "f32 input, rank <= 6; int64 indices", {}, {}, arg_reduce_trips};
  t["Hardmax"] = {check_f32, arg_reduce, "f32, rank <= 6", {}, {}, arg_reduce_trips};
  t["Trilu"] = {trilu_check, trilu, "f32 or any 32- or 64-bit type, rank 2 to 6; k int64"};
  t["LayerNormalization"] = {layer_norm_check, layer_norm,
                             "f32, rank <= 6; scale and bias f32 with one value per normalized element; rows longer "
                             "than 256 take a workgroup each",
                             {}, {}, [](const graph::Graph& g, const graph::Op& op) {
                               return row_trips(around(shape_of(g, op.inputs[0]), op.attr_int("axis", -1), true)[1], 3);
                             }};
  auto softmax_trips = [](const graph::Graph& g, const graph::Op& op) { return row_trips(softmax_dims(g, op)[1], 3); };
  t["Softmax"] = {check_f32, [](op_builder& b) { softmax(b, false); },
                  "f32, rank <= 6; rows longer than 256 take a workgroup each", {}, {}, softmax_trips};
  t["LogSoftmax"] = {check_f32, [](op_builder& b) { softmax(b, true); },
                     "f32, rank <= 6; rows longer than 256 take a workgroup each", {}, {}, softmax_trips};
  const std::pair<const char*, int> modes[] = {{"ReduceMean", 0}, {"ReduceSum", 1},  {"ReduceMax", 2},
                                                {"ReduceMin", 3},  {"ReduceProd", 4}, {"ReduceL2", 5},
                                                {"ReduceSumSquare", 6}, {"ReduceL1", 7}, {"ReduceLogSum", 8},
                                                {"ReduceLogSumExp", 9}};
  for (auto [name, mode] : modes)
    t[name] = {[](const graph::Graph& g, const graph::Op& op) {
                 auto w = check_f32(g, op);
                 if (!w.empty()) return w;
                 if (op.inputs.size() > 1 && op.inputs[1] != graph::no_value && !g.is_constant(op.inputs[1]))
                   return std::string("axes must be a constant");
                 return std::string();
               },
               [mode = mode](op_builder& b) { reduce(b, mode); }, "f32, rank <= 6; axes constant (input) or attribute",
               {}, {}, reduce_trips};
}

} // namespace troupe::kernels::vulkan
