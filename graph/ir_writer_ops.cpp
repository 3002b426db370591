/// ONNX ops -> IR ops of opsets 1-13, the inverse of the reader's mappings: an op with a direct
/// IR equivalent is written as that op, a few as short decompositions (Gemm, LayerNormalization,
/// Trilu, GlobalAveragePool; quantization in ir_writer_quantize.cpp); the rest have no writer and
/// are refused by name.
#include "graph/ir_writer.hpp"

#include <troupe/exception.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "graph/ir_op_mapping.hpp"

namespace troupe::graph::ir {

namespace {

struct ctx {
  emitter& e;
  const Op& op;
  const Graph& g;

  bool has(std::size_t i) const { return i < op.inputs.size() && op.inputs[i] != no_value; }
  out_ref in(std::size_t i) const {
    if (!has(i)) fail("input " + std::to_string(i) + " is missing");
    return e.value(op.inputs[i]);
  }
  element_type in_type(std::size_t i) const { return g.value(op.inputs.at(i)).type; }
  const PartialShape& in_shape(std::size_t i) const { return g.value(op.inputs.at(i)).shape; }
  std::size_t rank(std::size_t i) const {
    const auto& s = in_shape(i);
    if (!s.rank_known) fail("the rank of input " + std::to_string(i) + " is unknown");
    return s.rank();
  }
  element_type out_type(std::size_t k = 0) const { return g.value(op.outputs.at(k)).type; }
  PartialShape out_shape(std::size_t k = 0) const { return g.value(op.outputs.at(k)).shape; }
  const Tensor* constant(std::size_t i) const {
    return has(i) && g.is_constant(op.inputs[i]) ? &*g.value(op.inputs[i]).constant : nullptr;
  }
  std::vector<int64_t> const_ints(std::size_t i, const char* what) const {
    const Tensor* t = constant(i);
    if (!t) fail(std::string(what) + " must be a constant");
    std::vector<int64_t> r(static_cast<std::size_t>(t->get_size()));
    for (std::size_t k = 0; k < r.size(); ++k)
      r[k] = t->get_element_type() == element_type::i64 ? t->data<int64_t>()[k] : t->data<int32_t>()[k];
    return r;
  }
  /// A layer whose only output is the op's output k (bound to it).
  out_ref out(const std::string& type, const std::string& version, attrs data, const std::vector<out_ref>& inputs,
              std::size_t k = 0) {
    out_ref r = e.layer1(type, version, std::move(data), inputs, out_type(k), out_shape(k));
    e.bind(op.outputs[k], r);
    return r;
  }
  /// An intermediate layer typed like input `like` (shape unknown).
  out_ref mid(const std::string& type, const std::string& version, attrs data, const std::vector<out_ref>& inputs,
              element_type t, PartialShape s = PartialShape::unknown_rank()) {
    return e.layer1(type, version, std::move(data), inputs, t, std::move(s));
  }
  [[noreturn]] void fail(const std::string& why) const { throw Exception(why); }
  bool used(std::size_t k) const {
    if (k >= op.outputs.size() || op.outputs[k] == no_value) return false;
    for (const auto& o : g.ops)
      for (auto i : o.inputs)
        if (i == op.outputs[k]) return true;
    for (auto o : g.outputs)
      if (o == op.outputs[k]) return true;
    return false;
  }
};

const attrs numpy{{"auto_broadcast", "numpy"}};

std::vector<int64_t> iota(std::size_t from, std::size_t to) {
  std::vector<int64_t> r;
  for (std::size_t k = from; k < to; ++k) r.push_back(static_cast<int64_t>(k));
  return r;
}

op_writer unary(const char* ir, const char* version) {
  return [ir, version](emitter& e, const Op& op) {
    ctx c{e, op, e.graph()};
    c.out(ir, version, {}, {c.in(0)});
  };
}

op_writer binary(const char* ir) {
  return [ir](emitter& e, const Op& op) {
    ctx c{e, op, e.graph()};
    if (op.has_attr("broadcast") && op.attr_int("broadcast", 0) != 0 && op.has_attr("axis"))
      c.fail("the legacy broadcast with an axis has no IR equivalent");
    c.out(ir, "opset1", numpy, {c.in(0), c.in(1)});
  };
}

void divide(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  attrs a = numpy;
  element_type t = c.in_type(0);
  bool integer = t != element_type::f32 && t != element_type::f16 && t != element_type::bf16 && t != element_type::f64;
  a.emplace_back("m_pythondiv", integer ? "false" : "true");
  c.out("Divide", "opset1", a, {c.in(0), c.in(1)});
}

void mod(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out(op.attr_int("fmod", 0) ? "Mod" : "FloorMod", "opset1", numpy, {c.in(0), c.in(1)});
}

/// Sum, Max, Min, Mean over any number of inputs: a chain of binary layers.
op_writer variadic(const char* ir) {
  return [ir](emitter& e, const Op& op) {
    ctx c{e, op, e.graph()};
    const bool mean = std::string(op.type) == "Mean";
    std::size_t n = op.input_count();
    if (n == 1 && !mean) {
      e.bind(op.outputs[0], c.in(0));
      return;
    }
    out_ref acc = c.in(0);
    for (std::size_t k = 1; k < n; ++k) {
      bool last = k + 1 == n && !mean;
      acc = last ? c.out(ir, "opset1", numpy, {acc, c.in(k)}) : c.mid(ir, "opset1", numpy, {acc, c.in(k)}, c.out_type(), c.out_shape());
    }
    if (mean) c.out("Divide", "opset1", numpy, {acc, e.scalar(static_cast<double>(n), c.out_type())});
  };
}

void alias(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  if (op.type == "Dropout" && c.used(1)) c.fail("Dropout's mask output has no IR equivalent");
  e.bind(op.outputs[0], c.in(0));
}

void clip(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  element_type t = c.in_type(0);
  std::optional<double> lo, hi;
  bool computed = false;
  if (e.graph().opset < 11) {
    lo = op.attr_float("min", std::numeric_limits<float>::lowest());
    hi = op.attr_float("max", std::numeric_limits<float>::max());
  } else {
    for (std::size_t i : {std::size_t{1}, std::size_t{2}}) {
      if (!c.has(i)) continue;
      const Tensor* k = c.constant(i);
      if (!k || k->get_size() != 1) {
        computed = true;
        continue;
      }
      double v = t == element_type::f32 ? k->data<float>()[0]
               : t == element_type::i64 ? static_cast<double>(k->data<int64_t>()[0])
               : t == element_type::i32 ? k->data<int32_t>()[0]
                                        : std::numeric_limits<double>::quiet_NaN();
      if (std::isnan(v) && t != element_type::f32) {
        computed = true;
        continue;
      }
      (i == 1 ? lo : hi) = v;
    }
  }
  if (computed) { // bounds computed at run time: Maximum, then Minimum
    out_ref x = c.in(0);
    if (c.has(1)) x = c.has(2) ? c.mid("Maximum", "opset1", numpy, {x, c.in(1)}, t, c.out_shape())
                               : c.out("Maximum", "opset1", numpy, {x, c.in(1)});
    if (c.has(2)) c.out("Minimum", "opset1", numpy, {x, c.in(2)});
    return;
  }
  double min = lo.value_or(t == element_type::f32 ? std::numeric_limits<float>::lowest() : -9.2e18);
  double max = hi.value_or(t == element_type::f32 ? std::numeric_limits<float>::max() : 9.2e18);
  c.out("Clamp", "opset1", {{"min", number(min)}, {"max", number(max)}}, {c.in(0)});
}

void hard_sigmoid(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  element_type t = c.in_type(0);
  c.out("HardSigmoid", "opset1", {},
        {c.in(0), e.scalar(op.attr_float("alpha", 0.2f), t), e.scalar(op.attr_float("beta", 0.5f), t)});
}

void leaky_relu(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  Tensor s = builder::make_tensor({op.attr_float("alpha", 0.01f)}, c.in_type(0), {1});
  c.out("PRelu", "opset1", {}, {c.in(0), e.constant(s)});
}

void gelu(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out("Gelu", "opset7", {{"approximation_mode", op.attr_string("approximate", "none") == "tanh" ? "TANH" : "ERF"}},
        {c.in(0)});
}

void softmax(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  int64_t axis = op.attr_int("axis", e.graph().opset < 13 ? 1 : -1);
  if (e.graph().opset < 13) {
    auto r = static_cast<int64_t>(c.rank(0));
    if (axis != -1 && axis != r - 1)
      c.fail("before opset 13 " + op.type + " flattens its input to 2-D at axis " + std::to_string(axis) +
             "; only the last axis maps onto IR");
  }
  if (op.type == "Softmax") c.out("SoftMax", "opset8", {{"axis", std::to_string(axis)}}, {c.in(0)});
  else c.out("LogSoftmax", "opset5", {{"axis", std::to_string(axis)}}, {c.in(0)});
}

void matmul(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out("MatMul", "opset1", {{"transpose_a", "false"}, {"transpose_b", "false"}}, {c.in(0), c.in(1)});
}

void gemm(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  float alpha = op.attr_float("alpha", 1.0f), beta = op.attr_float("beta", 1.0f);
  element_type t = c.out_type();
  bool bias = c.has(2) && beta != 0.0f;
  attrs a{{"transpose_a", op.attr_int("transA", 0) ? "true" : "false"},
          {"transpose_b", op.attr_int("transB", 0) ? "true" : "false"}};
  bool more = alpha != 1.0f || bias;
  out_ref y = more ? c.mid("MatMul", "opset1", a, {c.in(0), c.in(1)}, t, PartialShape::unknown_rank())
                   : c.out("MatMul", "opset1", a, {c.in(0), c.in(1)});
  if (alpha != 1.0f) {
    y = bias ? c.mid("Multiply", "opset1", numpy, {y, e.scalar(alpha, t)}, t)
             : c.out("Multiply", "opset1", numpy, {y, e.scalar(alpha, t)});
  }
  if (bias) {
    out_ref b = c.in(2);
    if (beta != 1.0f) b = c.mid("Multiply", "opset1", numpy, {b, e.scalar(beta, t)}, t);
    c.out("Add", "opset1", numpy, {y, b});
  }
}

/// strides, dilations, pads_begin/end and auto_pad of a Conv or pool with `spatial` dims.
attrs window(const ctx& c, std::size_t spatial, bool dilations) {
  const Op& op = c.op;
  attrs a;
  a.emplace_back("strides", join(op.attr_ints("strides", std::vector<int64_t>(spatial, 1))));
  if (dilations) a.emplace_back("dilations", join(op.attr_ints("dilations", std::vector<int64_t>(spatial, 1))));
  auto pads = op.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  if (pads.size() != 2 * spatial) c.fail("pads has " + std::to_string(pads.size()) + " values, not " + std::to_string(2 * spatial));
  a.emplace_back("pads_begin", join({pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(spatial)}));
  a.emplace_back("pads_end", join({pads.begin() + static_cast<std::ptrdiff_t>(spatial), pads.end()}));
  std::string ap = op.attr_string("auto_pad", "NOTSET");
  a.emplace_back("auto_pad", ap == "NOTSET" ? "explicit" : ap == "VALID" ? "valid" : ap == "SAME_UPPER" ? "same_upper"
                                            : ap == "SAME_LOWER"                       ? "same_lower"
                                                                                       : (c.fail("auto_pad '" + ap + "' is unknown"), ""));
  if (!dilations && op.has_attr("dilations"))
    for (auto d : op.attr_ints("dilations"))
      if (d != 1) c.fail("dilations other than 1 have no IR equivalent here");
  return a;
}

/// Weights [O, I/G, k...] (Conv) or [I, O/G, k...] (ConvTranspose) split into G groups:
/// [G, O/G, I/G, k...] / [G, I/G, O/G, k...].
out_ref grouped_weights(ctx& c, int64_t groups) {
  if (const Tensor* w = c.constant(1)) {
    Shape s = w->get_shape();
    if (s.empty() || s[0] % groups) c.fail("the weights' first dim does not split into " + std::to_string(groups) + " groups");
    Shape split{groups, s[0] / groups};
    split.insert(split.end(), s.begin() + 1, s.end());
    return c.e.constant(w->clone().reshaped(split));
  }
  const PartialShape& s = c.in_shape(1);
  if (!s.rank_known || !s.is_static()) c.fail("grouped weights computed at run time need a static shape");
  std::vector<int64_t> split{groups, s.dims[0] / groups};
  split.insert(split.end(), s.dims.begin() + 1, s.dims.end());
  return c.mid("Reshape", "opset1", {{"special_zero", "false"}}, {c.in(1), c.e.i64s(split)}, c.in_type(1), PartialShape(split));
}

/// Bias [C] added to an NC... output: reshaped to [1, C, 1, ...].
void add_bias(ctx& c, out_ref y, std::size_t rank) {
  std::vector<int64_t> shape(rank, 1);
  shape[1] = -1;
  out_ref b;
  if (const Tensor* t = c.constant(2)) {
    shape[1] = t->get_size();
    b = c.e.constant(t->clone().reshaped(shape));
  } else {
    b = c.mid("Reshape", "opset1", {{"special_zero", "false"}}, {c.in(2), c.e.i64s(shape)}, c.in_type(2));
  }
  c.out("Add", "opset1", numpy, {y, b});
}

void conv(emitter& e, const Op& op, bool transposed) {
  ctx c{e, op, e.graph()};
  std::size_t rank = c.rank(1);
  if (rank < 3) c.fail("the weights need at least 3 dims");
  attrs a = window(c, rank - 2, true);
  int64_t groups = op.attr_int("group", 1);
  out_ref w = groups > 1 ? grouped_weights(c, groups) : c.in(1);
  std::vector<out_ref> in{c.in(0), w};
  if (transposed) {
    if (op.has_attr("output_padding")) a.emplace_back("output_padding", join(op.attr_ints("output_padding")));
    if (op.has_attr("output_shape")) in.push_back(e.i64s(op.attr_ints("output_shape")));
  }
  std::string type = transposed ? (groups > 1 ? "GroupConvolutionBackpropData" : "ConvolutionBackpropData")
                                : (groups > 1 ? "GroupConvolution" : "Convolution");
  if (!c.has(2)) {
    c.out(type, "opset1", a, in);
    return;
  }
  out_ref y = c.mid(type, "opset1", a, in, c.out_type(), c.out_shape());
  add_bias(c, y, rank);
}

/// ConvInteger: Convolution (or GroupConvolution) of the operands as i32 minus their zero
/// points; the int8 weights stay int8 in the weights file (Convert in the graph).
void conv_integer(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  const Tensor* w = c.constant(1);
  if (!w) c.fail("weights computed at run time have no IR form here");
  const std::size_t rank = w->get_shape().size();
  if (rank < 3) c.fail("the weights need at least 3 dims");
  const int64_t groups = op.attr_int("group", 1), out_channels = w->get_shape()[0];
  if (groups < 1 || out_channels % groups) c.fail("the weights' first dim does not split into " + std::to_string(groups) + " groups");
  Shape ws = w->get_shape(), zs(rank, 1);
  zs[0] = out_channels;
  if (groups > 1) {
    ws = {groups, out_channels / groups};
    ws.insert(ws.end(), w->get_shape().begin() + 1, w->get_shape().end());
    zs = Shape(rank + 1, 1);
    zs[0] = groups;
    zs[1] = out_channels / groups;
  }
  // The weights as a constant of their written shape (grouped: [G, O/G, I/G, k...]).
  out_ref wi = e.layer1("Convert", "opset1", {{"destination_type", "i32"}}, {e.constant(w->clone().reshaped(ws))}, element_type::i32, PartialShape(ws));
  if (c.has(3)) {
    const Tensor* z = c.constant(3);
    if (!z) c.fail("a weight zero point computed at run time has no IR form here");
    const out_ref zc = e.constant(z->get_size() == 1 ? z->clone() : z->clone().reshaped(zs));
    const out_ref zi = e.layer1("Convert", "opset1", {{"destination_type", "i32"}}, {zc}, element_type::i32, zc.shape);
    wi = e.layer1("Subtract", "opset1", numpy, {wi, zi}, element_type::i32, PartialShape(ws));
  }
  const out_ref x = integer_operand(e, op.inputs.at(0), c.has(2) ? op.inputs[2] : no_value, {});
  c.out(groups > 1 ? "GroupConvolution" : "Convolution", "opset1", window(c, rank - 2, true), {x, wi});
}

void batch_norm(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  if (op.attr_int("training_mode", 0) != 0 || c.used(1) || c.used(2))
    c.fail("training-mode BatchNormalization has no IR equivalent");
  c.out("BatchNormInference", "opset5", {{"epsilon", number(op.attr_float("epsilon", 1e-5f))}},
        {c.in(0), c.in(1), c.in(2), c.in(3), c.in(4)});
}

void pool(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  auto kernel = op.attr_ints("kernel_shape");
  if (kernel.empty()) c.fail("kernel_shape is missing");
  bool max = op.type == "MaxPool";
  bool dilated = false;
  for (auto d : op.attr_ints("dilations")) dilated = dilated || d != 1;
  attrs a = window(c, kernel.size(), max && dilated);
  a.emplace_back("kernel", join(kernel));
  a.emplace_back("rounding_type", op.attr_int("ceil_mode", 0) ? "ceil" : "floor");
  if (!max) {
    a.emplace_back("exclude-pad", op.attr_int("count_include_pad", 0) ? "false" : "true");
    c.out("AvgPool", "opset1", a, {c.in(0)});
    return;
  }
  if (c.used(1)) c.fail("MaxPool's indices count differently in IR; they are not written");
  if (!dilated) {
    c.out("MaxPool", "opset1", a, {c.in(0)});
    return;
  }
  a.emplace_back("index_element_type", "i64");
  a.emplace_back("axis", "0");
  auto outs = e.layer("MaxPool", "opset8", a, {c.in(0)}, {{c.out_type(), c.out_shape()}, {element_type::i64, c.out_shape()}});
  e.bind(op.outputs[0], outs[0]);
}

void global_pool(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out(op.type == "GlobalAveragePool" ? "ReduceMean" : "ReduceMax", "opset1", {{"keep_dims", "true"}},
        {c.in(0), e.i64s(iota(2, c.rank(0)))});
}

/// The axes of a Reduce op as a port: attribute (older opsets) or input; all axes when absent.
void reduce(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  static const std::map<std::string, std::pair<const char*, const char*>> m = {
      {"ReduceMean", {"ReduceMean", "opset1"}}, {"ReduceSum", {"ReduceSum", "opset1"}},
      {"ReduceMax", {"ReduceMax", "opset1"}},   {"ReduceMin", {"ReduceMin", "opset1"}},
      {"ReduceProd", {"ReduceProd", "opset1"}}, {"ReduceL1", {"ReduceL1", "opset4"}},
      {"ReduceL2", {"ReduceL2", "opset4"}}};
  auto [ir, version] = m.at(op.type);
  out_ref axes;
  if (op.has_attr("axes")) {
    axes = e.i64s(op.attr_ints("axes"));
  } else if (c.has(1)) {
    axes = c.in(1);
    if (const Tensor* t = c.constant(1); t && t->get_size() == 0) axes = out_ref{};
  }
  if (axes.layer < 0) {
    if (op.attr_int("noop_with_empty_axes", 0)) {
      e.bind(op.outputs[0], c.in(0));
      return;
    }
    axes = e.i64s(iota(0, c.rank(0)));
  }
  c.out(ir, version, {{"keep_dims", op.attr_int("keepdims", 1) ? "true" : "false"}}, {c.in(0), axes});
}

void reshape(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out("Reshape", "opset1", {{"special_zero", op.attr_int("allowzero", 0) ? "false" : "true"}}, {c.in(0), c.in(1)});
}

void flatten(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  int64_t axis = op.attr_int("axis", 1);
  std::vector<int64_t> target;
  const PartialShape& s = c.in_shape(0);
  if (axis < 0 && s.rank_known) axis += static_cast<int64_t>(s.rank());
  if (axis == 0) target = {1, -1};
  else if (axis == 1) target = {0, -1};
  else if (s.rank_known && s.is_static()) {
    int64_t outer = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= s.dims[static_cast<std::size_t>(k)];
    target = {outer, -1};
  } else {
    c.fail("Flatten at axis " + std::to_string(axis) + " of a dynamic shape has no single IR layer");
  }
  c.out("Reshape", "opset1", {{"special_zero", "true"}}, {c.in(0), e.i64s(target)});
}

void transpose(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  std::vector<int64_t> perm = op.attr_ints("perm");
  if (perm.empty()) {
    perm = iota(0, c.rank(0));
    std::reverse(perm.begin(), perm.end());
  }
  c.out("Transpose", "opset1", {}, {c.in(0), e.i64s(perm)});
}

void concat(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  std::vector<out_ref> in;
  for (std::size_t k = 0; k < op.input_count(); ++k) in.push_back(c.in(k));
  c.out("Concat", "opset1", {{"axis", std::to_string(op.attr_int("axis", 0))}}, in);
}

/// Squeeze/Unsqueeze: axes as attribute (before opset 13) or input.
void squeeze(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  std::vector<out_ref> in{c.in(0)};
  if (op.has_attr("axes")) in.push_back(e.i64s(op.attr_ints("axes")));
  else if (c.has(1)) in.push_back(c.in(1));
  else if (op.type == "Unsqueeze") c.fail("Unsqueeze has no axes");
  c.out(op.type, "opset1", {}, in);
}

void gather(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out("Gather", "opset8", {{"batch_dims", "0"}}, {c.in(0), c.in(1), e.i64_scalar(op.attr_int("axis", 0))});
}

void shape(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  bool sliced = op.has_attr("start") || op.has_attr("end");
  if (!sliced) {
    c.out("ShapeOf", "opset3", {{"output_type", "i64"}}, {c.in(0)});
    return;
  }
  out_ref s = c.mid("ShapeOf", "opset3", {{"output_type", "i64"}}, {c.in(0)}, element_type::i64);
  int64_t end = op.attr_int("end", std::numeric_limits<int64_t>::max());
  c.out("Slice", "opset8", {},
        {s, e.i64s({op.attr_int("start", 0)}), e.i64s({end}), e.i64s({1}), e.i64s({0})});
}

void size(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  out_ref s = c.mid("ShapeOf", "opset3", {{"output_type", "i64"}}, {c.in(0)}, element_type::i64);
  c.out("ReduceProd", "opset1", {{"keep_dims", "false"}}, {s, e.i64s({0})});
}

void cast(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  auto to = static_cast<element_type>(op.attr_int("to", 0));
  if (to == element_type::string) c.fail("a Cast to string has no IR equivalent");
  c.out("Convert", "opset1", {{"destination_type", to_string(to)}}, {c.in(0)});
}

void slice(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  std::vector<out_ref> in{c.in(0)};
  if (op.has_attr("starts")) { // opset < 10
    auto starts = op.attr_ints("starts"), ends = op.attr_ints("ends");
    auto axes = op.attr_ints("axes", iota(0, starts.size()));
    in.insert(in.end(), {e.i64s(starts), e.i64s(ends), e.i64s(std::vector<int64_t>(starts.size(), 1)), e.i64s(axes)});
    c.out("Slice", "opset8", {}, in);
    return;
  }
  in.push_back(c.in(1));
  in.push_back(c.in(2));
  if (c.has(4)) {
    in.push_back(c.in(4));
  } else if (const Tensor* s = c.constant(1)) {
    in.push_back(e.i64s(std::vector<int64_t>(static_cast<std::size_t>(s->get_size()), 1)));
  } else {
    out_ref n = c.mid("ShapeOf", "opset3", {{"output_type", "i64"}}, {c.in(1)}, element_type::i64, PartialShape({1}));
    in.push_back(c.mid("Broadcast", "opset3", {{"mode", "numpy"}}, {e.i64_scalar(1), n}, element_type::i64));
  }
  if (c.has(3)) in.push_back(c.in(3));
  c.out("Slice", "opset8", {}, in);
}

void split(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  int64_t axis = op.attr_int("axis", 0);
  std::vector<std::pair<element_type, PartialShape>> outs;
  for (std::size_t k = 0; k < op.outputs.size(); ++k) outs.emplace_back(c.out_type(k), c.out_shape(k));
  std::vector<out_ref> r;
  if (op.has_attr("split")) r = e.layer("VariadicSplit", "opset1", {}, {c.in(0), e.i64_scalar(axis), e.i64s(op.attr_ints("split"))}, outs);
  else if (c.has(1)) r = e.layer("VariadicSplit", "opset1", {}, {c.in(0), e.i64_scalar(axis), c.in(1)}, outs);
  else r = e.layer("Split", "opset1", {{"num_splits", std::to_string(op.outputs.size())}}, {c.in(0), e.i64_scalar(axis)}, outs);
  for (std::size_t k = 0; k < op.outputs.size(); ++k)
    if (op.outputs[k] != no_value) e.bind(op.outputs[k], r[k]);
}

void pad(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  std::string mode = op.attr_string("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect") c.fail("mode '" + mode + "' has no IR equivalent");
  if (c.has(3)) c.fail("Pad's axes input has no IR equivalent");
  std::vector<out_ref> in{c.in(0)};
  std::vector<int64_t> pads;
  if (op.has_attr("pads")) pads = op.attr_ints("pads");
  else if (c.constant(1)) pads = c.const_ints(1, "pads");
  if (!pads.empty() || op.has_attr("pads")) {
    std::size_t n = pads.size() / 2;
    in.push_back(e.i64s({pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(n)}));
    in.push_back(e.i64s({pads.begin() + static_cast<std::ptrdiff_t>(n), pads.end()}));
  } else {
    auto halves = e.layer("Split", "opset1", {{"num_splits", "2"}}, {c.in(1), e.i64_scalar(0)},
                          {{element_type::i64, PartialShape::unknown_rank()}, {element_type::i64, PartialShape::unknown_rank()}});
    in.push_back(halves[0]);
    in.push_back(halves[1]);
  }
  if (mode == "constant") {
    if (op.has_attr("value")) in.push_back(e.scalar(op.attr_float("value", 0.0f), c.in_type(0)));
    else if (c.has(2)) in.push_back(c.in(2));
  }
  c.out("Pad", "opset1", {{"pad_mode", mode}}, in);
}

void resize(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  const bool upsample = op.type == "Upsample";
  const bool v10 = op.type == "Resize" && e.graph().opset < 11;
  std::string mode = op.attr_string("mode", "nearest");
  attrs a;
  a.emplace_back("mode", mode == "nearest" ? "nearest" : mode == "linear" || mode == "bilinear" ? "linear_onnx"
                        : mode == "cubic" ? "cubic" : (c.fail("mode '" + mode + "' has no IR equivalent"), ""));
  std::string ctm = upsample || v10 ? "asymmetric" : op.attr_string("coordinate_transformation_mode", "half_pixel");
  if (ctm == "tf_crop_and_resize") c.fail("tf_crop_and_resize has no IR equivalent");
  if (op.attr_int("exclude_outside", 0)) c.fail("exclude_outside has no IR equivalent");
  if (op.has_attr("axes") || op.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
    c.fail("axes and keep_aspect_ratio_policy have no IR equivalent");
  a.emplace_back("coordinate_transformation_mode", ctm);
  a.emplace_back("nearest_mode", upsample || v10 ? "floor" : op.attr_string("nearest_mode", "round_prefer_floor"));
  a.emplace_back("cube_coeff", number(op.attr_float("cubic_coeff_a", -0.75f)));
  a.emplace_back("antialias", "false");
  std::size_t r = c.rank(0);
  a.emplace_back("pads_begin", join(std::vector<int64_t>(r, 0)));
  a.emplace_back("pads_end", join(std::vector<int64_t>(r, 0)));
  out_ref v;
  bool sizes = false;
  if (upsample && op.has_attr("scales")) {
    auto s = op.attr_floats("scales");
    v = e.constant(builder::make_tensor({s.begin(), s.end()}, element_type::f32, {static_cast<int64_t>(s.size())}));
  } else if (upsample || v10) {
    v = c.in(1);
  } else if (c.has(3)) {
    v = c.in(3);
    sizes = true;
  } else {
    v = c.in(2);
  }
  a.emplace_back("shape_calculation_mode", sizes ? "sizes" : "scales");
  c.out("Interpolate", "opset11", a, {c.in(0), v});
}

void range(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out("Range", "opset4", {{"output_type", to_string(c.out_type())}}, {c.in(0), c.in(1), c.in(2)});
}

void constant_of_shape(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  Tensor value = builder::make_tensor({0.0}, element_type::f32, {});
  auto it = op.attrs.find("value");
  if (it != op.attrs.end()) value = std::get<Tensor>(it->second).clone().reshaped({});
  c.out("Broadcast", "opset3", {{"mode", "numpy"}}, {e.constant(value), c.in(0)});
}

void expand(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out("Broadcast", "opset3", {{"mode", "bidirectional"}}, {c.in(0), c.in(1)});
}

/// Trilu(x, k): x where (col - row >= k) for upper (<= k for lower), else 0.
void trilu(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  out_ref x = c.in(0);
  element_type t = c.in_type(0);
  out_ref k = c.has(1) ? c.mid("Reshape", "opset1", {{"special_zero", "false"}}, {c.in(1), e.i64s({})}, element_type::i64, PartialShape())
                       : e.i64_scalar(0);
  out_ref s = c.mid("ShapeOf", "opset3", {{"output_type", "i64"}}, {x}, element_type::i64);
  auto dim = [&](int64_t d) {
    return c.mid("Gather", "opset8", {{"batch_dims", "0"}}, {s, e.i64_scalar(d), e.i64_scalar(0)}, element_type::i64, PartialShape());
  };
  out_ref rows = c.mid("Range", "opset4", {{"output_type", "i64"}}, {e.i64_scalar(0), dim(-2), e.i64_scalar(1)}, element_type::i64, PartialShape{-1});
  out_ref cols = c.mid("Range", "opset4", {{"output_type", "i64"}}, {e.i64_scalar(0), dim(-1), e.i64_scalar(1)}, element_type::i64, PartialShape{-1});
  out_ref col_row = c.mid("Unsqueeze", "opset1", {}, {rows, e.i64s({1})}, element_type::i64, PartialShape{-1, 1});
  out_ref diff = c.mid("Subtract", "opset1", numpy, {cols, col_row}, element_type::i64, PartialShape{-1, -1});
  bool upper = op.attr_int("upper", 1) != 0;
  out_ref keep = c.mid(upper ? "GreaterEqual" : "LessEqual", "opset1", numpy, {diff, k}, element_type::boolean, PartialShape{-1, -1});
  c.out("Select", "opset1", numpy, {keep, x, e.scalar(0, t)});
}

void where(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out("Select", "opset1", numpy, {c.in(0), c.in(1), c.in(2)});
}

void layer_norm(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  if (c.used(1) || c.used(2)) c.fail("LayerNormalization's Mean and InvStdDev outputs have no IR equivalent");
  std::size_t r = c.rank(0);
  int64_t axis = op.attr_int("axis", -1);
  if (axis < 0) axis += static_cast<int64_t>(r);
  element_type t = c.out_type();
  out_ref y = c.mid("MVN", "opset6",
                    {{"eps", number(op.attr_float("epsilon", 1e-5f))}, {"normalize_variance", "true"}, {"eps_mode", "inside_sqrt"}},
                    {c.in(0), e.i64s(iota(static_cast<std::size_t>(axis), r))}, t, c.out_shape());
  if (!c.has(2)) {
    c.out("Multiply", "opset1", numpy, {y, c.in(1)});
    return;
  }
  y = c.mid("Multiply", "opset1", numpy, {y, c.in(1)}, t, c.out_shape());
  c.out("Add", "opset1", numpy, {y, c.in(2)});
}

void topk(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  out_ref k = c.mid("Reshape", "opset1", {{"special_zero", "false"}}, {c.in(1), e.i64s({})}, element_type::i64, PartialShape());
  auto outs = e.layer("TopK", "opset11",
                      {{"axis", std::to_string(op.attr_int("axis", -1))},
                       {"mode", op.attr_int("largest", 1) ? "max" : "min"},
                       {"sort", op.attr_int("sorted", 1) ? "value" : "none"},
                       {"index_element_type", "i64"}},
                      {c.in(0), k}, {{c.out_type(0), c.out_shape(0)}, {c.out_type(1), c.out_shape(1)}});
  for (std::size_t i = 0; i < 2; ++i)
    if (op.outputs[i] != no_value) e.bind(op.outputs[i], outs[i]);
}

/// ONNX NonMaxSuppression as NonMaxSuppression-9 in ONNX's order (no sort across batches).
/// ONNX keeps a score above score_threshold, OpenVINO one at or above it: the float just
/// above a constant threshold is written (none: -inf). Only selected_indices is read back.
void non_max_suppression(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  float threshold = -std::numeric_limits<float>::infinity();
  if (c.has(4)) {
    const Tensor* t = c.constant(4);
    if (!t || t->get_size() != 1 || t->get_element_type() != element_type::f32)
      c.fail("score_threshold must be a one-element f32 constant (OpenVINO keeps scores at the threshold, ONNX above "
             "it: troupe writes the float above it)");
    threshold = std::nextafter(t->data<float>()[0], std::numeric_limits<float>::infinity());
  }
  std::vector<out_ref> in{c.in(0), c.in(1), c.has(2) ? c.in(2) : e.i64s({0}),
                          c.has(3) ? c.in(3) : e.scalar(0, element_type::f32), e.scalar(threshold, element_type::f32)};
  auto outs = e.layer("NonMaxSuppression", "opset9",
                      {{"box_encoding", op.attr_int("center_point_box", 0) ? "center" : "corner"},
                       {"sort_result_descending", "false"},
                       {"output_type", "i64"}},
                      in,
                      {{element_type::i64, c.out_shape(0)},
                       {c.in_type(1), PartialShape{-1, 3}},
                       {element_type::i64, PartialShape{1}}});
  e.bind(op.outputs[0], outs[0]);
}

void depth_to_space(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out("DepthToSpace", "opset1",
        {{"block_size", std::to_string(op.attr_int("blocksize", 1))},
         {"mode", op.attr_string("mode", "DCR") == "CRD" ? "depth_first" : "blocks_first"}},
        {c.in(0)});
}

void space_to_depth(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out("SpaceToDepth", "opset1", {{"block_size", std::to_string(op.attr_int("blocksize", 1))}, {"mode", "blocks_first"}},
        {c.in(0)});
}

void scatter_elements(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  if (op.attr_string("reduction", "none") != "none") c.fail("reduction has no IR equivalent in opsets 1-13");
  c.out("ScatterElementsUpdate", "opset3", {}, {c.in(0), c.in(1), c.in(2), e.i64_scalar(op.attr_int("axis", 0))});
}

void lrn(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out("LRN", "opset1",
        {{"alpha", number(op.attr_float("alpha", 1e-4f))},
         {"beta", number(op.attr_float("beta", 0.75f))},
         {"bias", number(op.attr_float("bias", 1.0f))},
         {"size", std::to_string(op.attr_int("size", 1))}},
        {c.in(0), e.i64s({1})});
}

void prelu(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out("PRelu", "opset1", {}, {c.in(0), c.in(1)});
}

void elu(emitter& e, const Op& op) {
  ctx c{e, op, e.graph()};
  c.out("Elu", "opset1", {{"alpha", number(op.attr_float("alpha", 1.0f))}}, {c.in(0)});
}

/// OpenVINO's detection heads (domain org.openvinotoolkit) go back as the layers they came
/// from, every attribute in <data> (booleans as true/false; DetectionOutput-8 derives
/// num_classes from its inputs).
void openvino_op(emitter& e, const Op& op, const std::string& version) {
  static const std::set<std::string> flags{"flip", "clip", "scale_all_sizes", "min_max_aspect_ratios_order",
                                           "variance_encoded_in_target", "share_location", "clip_after_nms",
                                           "clip_before_nms", "decrease_label_id", "normalized"};
  ctx c{e, op, e.graph()};
  attrs data;
  for (const auto& [k, v] : op.attrs) {
    if (k == "num_classes" && version == "opset8") continue;
    std::string text;
    if (const auto* i = std::get_if<int64_t>(&v)) text = flags.count(k) ? (*i ? "true" : "false") : std::to_string(*i);
    else if (const auto* f = std::get_if<float>(&v)) text = number(*f);
    else if (const auto* s = std::get_if<std::string>(&v)) text = *s;
    else if (const auto* is = std::get_if<std::vector<int64_t>>(&v)) text = join(*is);
    else if (const auto* fs = std::get_if<std::vector<float>>(&v)) {
      for (std::size_t n = 0; n < fs->size(); ++n) text.append(n ? "," : "").append(number((*fs)[n]));
    } else {
      c.fail("attribute '" + k + "' has no IR form");
    }
    data.emplace_back(k, text);
  }
  std::vector<out_ref> in;
  for (std::size_t i = 0; i < op.inputs.size(); ++i) in.push_back(c.in(i));
  c.out(op.type, version, std::move(data), in);
}

} // namespace

const std::map<std::string, op_writer>& op_writers() {
  static const std::map<std::string, op_writer> m = [] {
    std::map<std::string, op_writer> r;
    for (auto [onnx, ir, version] : std::initializer_list<std::tuple<const char*, const char*, const char*>>{
             {"Relu", "ReLU", "opset1"},       {"Sigmoid", "Sigmoid", "opset1"}, {"Tanh", "Tanh", "opset1"},
             {"Exp", "Exp", "opset1"},         {"Log", "Log", "opset1"},         {"Sqrt", "Sqrt", "opset1"},
             {"Abs", "Abs", "opset1"},         {"Neg", "Negative", "opset1"},    {"Floor", "Floor", "opset1"},
             {"Ceil", "Ceiling", "opset1"},    {"Erf", "Erf", "opset1"},         {"Sin", "Sin", "opset1"},
             {"Cos", "Cos", "opset1"},         {"Tan", "Tan", "opset1"},         {"Asin", "Asin", "opset1"},
             {"Acos", "Acos", "opset1"},       {"Atan", "Atan", "opset1"},       {"Sinh", "Sinh", "opset1"},
             {"Cosh", "Cosh", "opset1"},       {"Asinh", "Asinh", "opset4"},     {"Acosh", "Acosh", "opset4"},
             {"Atanh", "Atanh", "opset4"},     {"Sign", "Sign", "opset1"},       {"Not", "LogicalNot", "opset1"},
             {"HardSwish", "HSwish", "opset4"}, {"Mish", "Mish", "opset4"},      {"Softplus", "SoftPlus", "opset4"},
             {"Softsign", "SoftSign", "opset9"}, {"IsNaN", "IsNaN", "opset10"}, {"NonZero", "NonZero", "opset3"}})
      r[onnx] = unary(ir, version);
    r["Round"] = [](emitter& e, const Op& op) {
      ctx c{e, op, e.graph()};
      c.out("Round", "opset5", {{"mode", "half_to_even"}}, {c.in(0)});
    };
    for (auto [onnx, ir] : std::initializer_list<std::pair<const char*, const char*>>{
             {"Add", "Add"}, {"Sub", "Subtract"}, {"Mul", "Multiply"}, {"Pow", "Power"}, {"Equal", "Equal"},
             {"Less", "Less"}, {"LessOrEqual", "LessEqual"}, {"Greater", "Greater"}, {"GreaterOrEqual", "GreaterEqual"},
             {"And", "LogicalAnd"}, {"Or", "LogicalOr"}, {"Xor", "LogicalXor"}})
      r[onnx] = binary(ir);
    r["Div"] = divide;
    r["Mod"] = mod;
    r["Sum"] = variadic("Add");
    r["Mean"] = variadic("Add");
    r["Max"] = variadic("Maximum");
    r["Min"] = variadic("Minimum");
    r["Identity"] = alias;
    r["Dropout"] = alias;
    r["Clip"] = clip;
    r["HardSigmoid"] = hard_sigmoid;
    r["LeakyRelu"] = leaky_relu;
    r["Elu"] = elu;
    r["PRelu"] = prelu;
    r["Gelu"] = gelu;
    r["PriorBox"] = [](emitter& e, const Op& op) { openvino_op(e, op, "opset8"); };
    r["PriorBoxClustered"] = [](emitter& e, const Op& op) { openvino_op(e, op, "opset1"); };
    r["DetectionOutput"] = [](emitter& e, const Op& op) { openvino_op(e, op, "opset8"); };
    r["Softmax"] = softmax;
    r["LogSoftmax"] = softmax;
    r["MatMul"] = matmul;
    r["Gemm"] = gemm;
    r["Conv"] = [](emitter& e, const Op& op) { conv(e, op, false); };
    r["ConvTranspose"] = [](emitter& e, const Op& op) { conv(e, op, true); };
    r["BatchNormalization"] = batch_norm;
    r["MaxPool"] = pool;
    r["AveragePool"] = pool;
    r["GlobalAveragePool"] = global_pool;
    r["GlobalMaxPool"] = global_pool;
    for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2"})
      r[op] = reduce;
    r["Reshape"] = reshape;
    r["Flatten"] = flatten;
    r["Transpose"] = transpose;
    r["Concat"] = concat;
    r["Squeeze"] = squeeze;
    r["Unsqueeze"] = squeeze;
    r["Gather"] = gather;
    r["GatherElements"] = [](emitter& e, const Op& op) {
      ctx c{e, op, e.graph()};
      c.out("GatherElements", "opset6", {{"axis", std::to_string(op.attr_int("axis", 0))}}, {c.in(0), c.in(1)});
    };
    r["GatherND"] = [](emitter& e, const Op& op) {
      ctx c{e, op, e.graph()};
      c.out("GatherND", "opset8", {{"batch_dims", std::to_string(op.attr_int("batch_dims", 0))}}, {c.in(0), c.in(1)});
    };
    r["ScatterElements"] = scatter_elements;
    r["ScatterND"] = [](emitter& e, const Op& op) {
      ctx c{e, op, e.graph()};
      if (op.attr_string("reduction", "none") != "none") c.fail("reduction has no IR equivalent in opsets 1-13");
      c.out("ScatterNDUpdate", "opset3", {}, {c.in(0), c.in(1), c.in(2)});
    };
    r["Shape"] = shape;
    r["Size"] = size;
    r["Cast"] = cast;
    r["CastLike"] = [](emitter& e, const Op& op) {
      ctx c{e, op, e.graph()};
      c.out("ConvertLike", "opset1", {}, {c.in(0), c.in(1)});
    };
    r["Slice"] = slice;
    r["Split"] = split;
    r["Pad"] = pad;
    r["Resize"] = resize;
    r["Upsample"] = resize;
    r["Range"] = range;
    r["ConstantOfShape"] = constant_of_shape;
    r["Expand"] = expand;
    r["Tile"] = [](emitter& e, const Op& op) {
      ctx c{e, op, e.graph()};
      c.out("Tile", "opset1", {}, {c.in(0), c.in(1)});
    };
    r["Trilu"] = trilu;
    r["Where"] = where;
    r["LayerNormalization"] = layer_norm;
    r["TopK"] = topk;
    r["NonMaxSuppression"] = non_max_suppression;
    r["DepthToSpace"] = depth_to_space;
    r["SpaceToDepth"] = space_to_depth;
    r["Einsum"] = [](emitter& e, const Op& op) {
      ctx c{e, op, e.graph()};
      std::vector<out_ref> in;
      for (std::size_t k = 0; k < op.input_count(); ++k) in.push_back(c.in(k));
      c.out("Einsum", "opset7", {{"equation", op.attr_string("equation", "")}}, in);
    };
    r["CumSum"] = [](emitter& e, const Op& op) {
      ctx c{e, op, e.graph()};
      c.out("CumSum", "opset3",
            {{"exclusive", op.attr_int("exclusive", 0) ? "true" : "false"}, {"reverse", op.attr_int("reverse", 0) ? "true" : "false"}},
            {c.in(0), c.in(1)});
    };
    r["LRN"] = lrn;
    r["ConvInteger"] = conv_integer;
    add_quantize_writers(r);
    return r;
  }();
  return m;
}

} // namespace troupe::graph::ir
