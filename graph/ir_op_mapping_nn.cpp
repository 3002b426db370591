/// IR network ops -> ONNX: convolutions (grouped and transposed), pooling, BatchNormInference,
/// MVN and NormalizeL2 (decomposed), LRN, MatMul, the Reduce ops, Interpolate.
#include "graph/ir_integer_recovery.hpp"
#include "graph/ir_op_mapping.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace troupe::graph::ir {

namespace {

std::vector<std::string> v(std::initializer_list<const char*> l) { return {l.begin(), l.end()}; }

/// IR auto_pad -> ONNX auto_pad.
std::string auto_pad(const builder& b) {
  std::string p = b.str("auto_pad", "explicit");
  if (p == "explicit" || p == "notset" || p.empty()) return "NOTSET";
  if (p == "valid") return "VALID";
  if (p == "same_upper") return "SAME_UPPER";
  if (p == "same_lower") return "SAME_LOWER";
  b.fail("auto_pad '" + p + "' is not explicit, valid, same_upper or same_lower");
}

/// strides, dilations, pads (begin then end), auto_pad of a convolution or pooling layer.
void window_attrs(const builder& b, std::map<std::string, AttributeValue>& a, bool dilations) {
  a["strides"] = b.ints_required("strides");
  if (dilations && b.has("dilations")) a["dilations"] = b.ints_required("dilations");
  std::string ap = auto_pad(b);
  a["auto_pad"] = ap;
  if (ap == "NOTSET") {
    auto pads = b.ints("pads_begin");
    auto end = b.ints("pads_end");
    if (pads.size() != end.size()) b.fail("pads_begin and pads_end differ in length");
    pads.insert(pads.end(), end.begin(), end.end());
    if (!pads.empty()) a["pads"] = pads;
  }
}

/// Grouped weights [G, O/G, I/G, k...] -> [O, I/G, k...] (both kinds of grouped convolution
/// merge the first two dims); the group count.
std::pair<ValueId, int64_t> merge_groups(builder& b, std::size_t index) {
  if (const Tensor* w = b.constant(index)) {
    Shape s = w->get_shape();
    if (s.size() < 3) b.fail("grouped weights need at least 3 dims, not " + to_string(s));
    Shape merged{s[0] * s[1]};
    merged.insert(merged.end(), s.begin() + 2, s.end());
    return {b.constant(w->clone().reshaped(merged)), s[0]};
  }
  const PartialShape& ps = b.in_port(index).shape;
  if (!ps.rank_known || ps.rank() < 3 || !ps.is_static())
    b.fail("grouped weights computed at run time need a static shape on their port");
  std::vector<int64_t> merged{-1};
  merged.insert(merged.end(), ps.dims.begin() + 2, ps.dims.end());
  return {b.op("Reshape", {b.input(index), b.i64s(merged)}), ps.dims[0]};
}

/// Conv, or ConvInteger where the operands are i32 arithmetic on int8 values (integer_product).
ValueId conv_or_integer(builder& b, ValueId x, ValueId w, const std::map<std::string, AttributeValue>& a) {
  if (auto integer = integer_product(b, x, w, a, true)) return *integer;
  return b.op("Conv", {x, w}, a);
}

std::vector<ValueId> convolution(builder& b) {
  std::map<std::string, AttributeValue> a;
  window_attrs(b, a, true);
  return {conv_or_integer(b, b.input(0), b.input(1), a)};
}

std::vector<ValueId> group_convolution(builder& b) {
  std::map<std::string, AttributeValue> a;
  window_attrs(b, a, true);
  auto [w, groups] = merge_groups(b, 1);
  a["group"] = groups;
  return {conv_or_integer(b, b.input(0), w, a)};
}

std::vector<ValueId> backprop(builder& b, bool grouped) {
  std::map<std::string, AttributeValue> a;
  window_attrs(b, a, true);
  if (b.has("output_padding") && !b.ints("output_padding").empty()) a["output_padding"] = b.ints("output_padding");
  if (b.inputs() > 2) a["output_shape"] = b.const_ints(2, "output_shape");
  ValueId w = b.input(1);
  if (grouped) {
    auto [merged, groups] = merge_groups(b, 1);
    w = merged;
    a["group"] = groups;
  }
  return {b.op("ConvTranspose", {b.input(0), w}, a)};
}

std::vector<ValueId> max_pool(builder& b) {
  std::map<std::string, AttributeValue> a;
  window_attrs(b, a, b.l.version == "opset8");
  a["kernel_shape"] = b.ints_required("kernel");
  std::string r = b.str("rounding_type", "floor");
  if (r != "floor" && r != "ceil") b.fail("rounding_type '" + r + "' is not floor or ceil");
  a["ceil_mode"] = int64_t{r == "ceil"};
  std::vector<ValueId> out{b.op("MaxPool", {b.input(0)}, a)};
  if (b.l.outputs.size() > 1) { // opset8's indices count differently from ONNX's
    out.push_back(no_value);
    b.unsupported_outputs.push_back(1);
  }
  return out;
}

std::vector<ValueId> avg_pool(builder& b) {
  std::map<std::string, AttributeValue> a;
  window_attrs(b, a, false);
  a["kernel_shape"] = b.ints_required("kernel");
  std::string r = b.str("rounding_type", "floor");
  if (r != "floor" && r != "ceil") b.fail("rounding_type '" + r + "' is not floor or ceil");
  a["ceil_mode"] = int64_t{r == "ceil"};
  a["count_include_pad"] = int64_t{!b.flag("exclude-pad", false)};
  return {b.op("AveragePool", {b.input(0)}, a)};
}

/// opset1 lists (gamma, beta, data, mean, variance); opset5 (data, gamma, beta, mean, variance).
std::vector<ValueId> batch_norm(builder& b) {
  bool v1 = b.l.version == "opset1";
  ValueId data = b.input(v1 ? 2 : 0), gamma = b.input(v1 ? 0 : 1), beta = b.input(v1 ? 1 : 2);
  return {b.op("BatchNormalization", {data, gamma, beta, b.input(3), b.input(4)},
               {{"epsilon", static_cast<float>(b.f64("epsilon"))}})};
}

/// Reduce with constant axes: ReduceSum takes them as an input at opset 17, the others as an
/// attribute. IR's empty axes reduce nothing.
ValueId reduce(builder& b, const std::string& type, ValueId x, const std::vector<int64_t>& axes, bool keep) {
  if (axes.empty()) return b.op("Identity", {x});
  std::map<std::string, AttributeValue> a{{"keepdims", int64_t{keep}}};
  if (type == "ReduceSum") return b.op(type, {x, b.i64s(axes)}, a);
  a["axes"] = axes;
  return b.op(type, {x}, a);
}

mapper reduce_op(const char* onnx) {
  return [onnx](builder& b) -> std::vector<ValueId> {
    bool keep = b.flag("keep_dims", false);
    if (std::string(onnx) == "ReduceSum" && !b.constant(1))
      return {b.op("ReduceSum", {b.input(0), b.input(1)}, {{"keepdims", int64_t{keep}}})};
    return {reduce(b, onnx, b.input(0), b.const_ints(1, "axes"), keep)};
  };
}

/// (x - mean) / sqrt(var + eps) or / (sqrt(var) + eps) over `axes`.
ValueId mvn(builder& b, const std::vector<int64_t>& axes, bool variance, double eps, bool inside) {
  ValueId x = b.input(0);
  element_type t = b.in_type(0);
  ValueId d = b.op("Sub", {x, reduce(b, "ReduceMean", x, axes, true)});
  if (!variance) return d;
  ValueId var = reduce(b, "ReduceMean", b.op("Mul", {d, d}), axes, true);
  ValueId e = b.scalar(eps, t);
  ValueId denom = inside ? b.op("Sqrt", {b.op("Add", {var, e})}) : b.op("Add", {b.op("Sqrt", {var}), e});
  return b.op("Div", {d, denom});
}

std::vector<ValueId> mvn6(builder& b) {
  std::string mode = b.str("eps_mode");
  if (mode != "inside_sqrt" && mode != "outside_sqrt") b.fail("eps_mode '" + mode + "' is not inside_sqrt or outside_sqrt");
  return {mvn(b, b.const_ints(1, "axes"), b.flag("normalize_variance", true), b.f64("eps"), mode == "inside_sqrt")};
}

std::vector<ValueId> mvn1(builder& b) {
  std::size_t rank = b.in_rank(0);
  std::vector<int64_t> axes;
  if (b.has("reduction_axes")) {
    axes = b.ints("reduction_axes");
  } else {
    for (std::size_t k = b.flag("across_channels", false) ? 1 : 2; k < rank; ++k) axes.push_back(static_cast<int64_t>(k));
  }
  return {mvn(b, axes, b.flag("normalize_variance", true), b.f64("eps"), true)};
}

std::vector<ValueId> normalize_l2(builder& b) {
  auto axes = b.const_ints(1, "axes");
  std::string mode = b.str("eps_mode", "add");
  if (mode != "add" && mode != "max") b.fail("eps_mode '" + mode + "' is not add or max");
  ValueId x = b.input(0);
  ValueId sum = b.op("ReduceSum", {b.op("Mul", {x, x}), b.i64s(axes)}, {{"keepdims", int64_t{1}}});
  ValueId e = b.scalar(b.f64("eps"), b.in_type(0));
  ValueId guarded = b.op(mode == "add" ? "Add" : "Max", {sum, e});
  return {b.op("Div", {x, b.op("Sqrt", {guarded})})};
}

std::vector<ValueId> lrn(builder& b) {
  auto axes = b.const_ints(1, "axes");
  if (axes != std::vector<int64_t>{1}) b.fail("LRN over axes other than [1] (channels) has no ONNX counterpart");
  return {b.op("LRN", {b.input(0)},
               {{"alpha", static_cast<float>(b.f64("alpha"))},
                {"beta", static_cast<float>(b.f64("beta"))},
                {"bias", static_cast<float>(b.f64("bias", 1.0))},
                {"size", b.i64("size")}})};
}

/// Transposes the last two dims of a matrix operand (rank >= 2).
ValueId transposed(builder& b, std::size_t i) {
  std::size_t rank = b.in_rank(i);
  if (rank < 2) return b.input(i);
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return b.op("Transpose", {b.input(i)}, {{"perm", perm}});
}

std::vector<ValueId> matmul(builder& b) {
  ValueId a = b.flag("transpose_a", false) ? transposed(b, 0) : b.input(0);
  ValueId c = b.flag("transpose_b", false) ? transposed(b, 1) : b.input(1);
  if (a == b.input(0) && c == b.input(1))
    if (auto integer = integer_product(b, a, c, {}, false)) return {*integer};
  return {b.op("MatMul", {a, c})};
}

/// ScaledDotProductAttention-13: softmax(Q·Kᵀ·scale + mask)·V over the last two dims. The
/// scale is input 4, else 1/sqrt(E) for Q's last dim E (which must then be static); the mask
/// (input 3) is added, or, boolean, keeps where true (-inf elsewhere); `causal` masks instead
/// every key after the query's position (col > row over [L, S]).
std::vector<ValueId> scaled_dot_product_attention(builder& b) {
  const element_type t = b.in_type(0);
  if (t != element_type::f32 && t != element_type::f16 && t != element_type::bf16 && t != element_type::f64)
    b.fail("the query must be floating point, not " + to_string(t));
  if (b.in_rank(0) < 2 || b.in_rank(1) < 2) b.fail("query and key must have 2 or more dims");
  ValueId scores = b.op("MatMul", {b.input(0), transposed(b, 1)});
  ValueId scale;
  if (b.inputs() > 4) {
    scale = b.input(4);
  } else {
    const auto& q = b.g.value(b.input(0)).shape.rank_known ? b.g.value(b.input(0)).shape : b.in_port(0).shape;
    const int64_t e = q.rank_known && q.rank() > 0 ? q.dims.back() : -1;
    if (e <= 0) b.fail("without a scale input the query's last dim must be static, not " + q.to_string());
    scale = b.scalar(1.0 / std::sqrt(static_cast<double>(e)), t);
  }
  scores = b.op("Mul", {scores, scale});
  const ValueId zero = b.scalar(0.0, t), minus_inf = b.scalar(-std::numeric_limits<double>::infinity(), t);
  if (b.flag("causal", false)) {
    auto length = [&](std::size_t i) { // dim -2 of input i, as an i64 scalar
      return b.op("Gather", {b.op("Shape", {b.input(i)}), b.i64_scalar(-2)}, {{"axis", int64_t{0}}});
    };
    const ValueId rows = b.op("Unsqueeze", {b.op("Range", {b.i64_scalar(0), length(0), b.i64_scalar(1)}), b.i64s({1})});
    const ValueId cols = b.op("Range", {b.i64_scalar(0), length(1), b.i64_scalar(1)});
    scores = b.op("Add", {scores, b.op("Where", {b.op("LessOrEqual", {cols, rows}), zero, minus_inf})});
  } else if (b.inputs() > 3) {
    ValueId mask = b.input(3);
    if (b.in_type(3) == element_type::boolean) mask = b.op("Where", {mask, zero, minus_inf});
    scores = b.op("Add", {scores, mask});
  }
  return {b.op("MatMul", {b.op("Softmax", {scores}, {{"axis", int64_t{-1}}}), b.input(2)})};
}

/// Interpolate-4 (data, sizes, scales[, axes]) and -11 (data, scales_or_sizes[, axes]) ->
/// Resize-13 with full-rank scales or sizes.
std::vector<ValueId> interpolate(builder& b) {
  const bool v11 = b.l.version == "opset11";
  std::string mode = b.str("mode");
  std::map<std::string, AttributeValue> a;
  if (mode == "nearest") a["mode"] = std::string("nearest");
  else if (mode == "linear" || mode == "linear_onnx" || mode == "bilinear_pillow") a["mode"] = std::string("linear");
  else if (mode == "cubic" || mode == "bicubic_pillow") a["mode"] = std::string("cubic");
  else b.fail("mode '" + mode + "' is not supported");
  if (mode == "bilinear_pillow" || mode == "bicubic_pillow" || b.flag("antialias", false))
    b.fail("antialiased (pillow) interpolation has no ONNX counterpart");
  for (const char* p : {"pads_begin", "pads_end"})
    for (auto x : b.ints(p))
      if (x != 0) b.fail(std::string(p) + " other than zero are not supported");
  std::string ctm = b.str("coordinate_transformation_mode", "half_pixel");
  a["coordinate_transformation_mode"] = ctm;
  if (mode == "nearest") {
    std::string nm = b.str("nearest_mode", "round_prefer_floor");
    if (nm == "simple") b.fail("nearest_mode 'simple' has no ONNX counterpart");
    a["nearest_mode"] = nm;
  }
  if (mode == "cubic") a["cubic_coeff_a"] = static_cast<float>(b.f64("cube_coeff", -0.75));
  const bool sizes = b.str("shape_calculation_mode") == "sizes";
  const std::size_t value_input = v11 ? 1 : (sizes ? 1 : 2);
  const std::size_t axes_input = v11 ? 2 : 3;
  const std::size_t rank = b.in_rank(0);
  std::vector<int64_t> axes;
  if (b.inputs() > axes_input) {
    axes = b.const_ints(axes_input, "axes");
    for (auto& x : axes) {
      if (x < 0) x += static_cast<int64_t>(rank);
      if (x < 0 || x >= static_cast<int64_t>(rank)) b.fail("axis out of range");
    }
  } else {
    for (std::size_t k = 0; k < rank; ++k) axes.push_back(static_cast<int64_t>(k));
  }
  ValueId x = b.input(0);
  bool full = axes.size() == rank;
  for (std::size_t k = 0; full && k < rank; ++k) full = axes[k] == static_cast<int64_t>(k);
  if (!sizes) {
    ValueId scales = b.input(value_input);
    if (!full) {
      auto s = b.const_doubles(value_input, "scales");
      if (s.size() != axes.size()) b.fail("scales and axes differ in length");
      std::vector<double> all(rank, 1.0);
      for (std::size_t k = 0; k < axes.size(); ++k) all[static_cast<std::size_t>(axes[k])] = s[k];
      scales = b.constant(builder::make_tensor(all, element_type::f32, {static_cast<int64_t>(rank)}));
    } else if (b.in_type(value_input) != element_type::f32) {
      scales = b.op("Cast", {scales}, {{"to", static_cast<int64_t>(element_type::f32)}});
    }
    return {b.op("Resize", {x, no_value, scales}, a)};
  }
  ValueId target = b.input(value_input);
  if (b.in_type(value_input) != element_type::i64)
    target = b.op("Cast", {target}, {{"to", static_cast<int64_t>(element_type::i64)}});
  const PartialShape& xs = b.g.value(x).shape;
  if (!full && b.constant(value_input) && xs.rank_known && xs.is_static()) { // known now
    auto s = b.const_ints(value_input, "sizes");
    if (s.size() != axes.size()) b.fail("sizes and axes differ in length");
    std::vector<int64_t> all = xs.dims;
    for (std::size_t k = 0; k < axes.size(); ++k) all[static_cast<std::size_t>(axes[k])] = s[k];
    target = b.i64s(all);
  } else if (!full) // the input's shape with the resized axes replaced
    target = b.op("ScatterElements", {b.op("Shape", {x}), b.i64s(axes), target}, {{"axis", int64_t{0}}});
  return {b.op("Resize", {x, no_value, no_value, target}, a)};
}

} // namespace

void add_nn_ops(op_table& t) {
  t["Convolution"].push_back({v({"opset1"}), convolution});
  t["GroupConvolution"].push_back({v({"opset1"}), group_convolution});
  t["ConvolutionBackpropData"].push_back({v({"opset1"}), [](builder& b) { return backprop(b, false); }});
  t["GroupConvolutionBackpropData"].push_back({v({"opset1"}), [](builder& b) { return backprop(b, true); }});
  t["MaxPool"].push_back({v({"opset1", "opset8"}), max_pool});
  t["AvgPool"].push_back({v({"opset1"}), avg_pool});
  t["BatchNormInference"].push_back({v({"opset1", "opset5"}), batch_norm});
  t["MVN"].push_back({v({"opset6"}), mvn6});
  t["MVN"].push_back({v({"opset2"}), mvn1});
  t["NormalizeL2"].push_back({v({"opset1"}), normalize_l2});
  t["LRN"].push_back({v({"opset1"}), lrn});
  t["MatMul"].push_back({v({"opset1"}), matmul});
  t["ScaledDotProductAttention"].push_back({v({"opset13"}), scaled_dot_product_attention});
  for (auto [ir, onnx] : std::initializer_list<std::pair<const char*, const char*>>{
           {"ReduceMean", "ReduceMean"}, {"ReduceSum", "ReduceSum"}, {"ReduceMax", "ReduceMax"},
           {"ReduceMin", "ReduceMin"}, {"ReduceProd", "ReduceProd"}})
    t[ir].push_back({v({"opset1"}), reduce_op(onnx)});
  t["ReduceL1"].push_back({v({"opset4"}), reduce_op("ReduceL1")});
  t["ReduceL2"].push_back({v({"opset4"}), reduce_op("ReduceL2")});
  t["Interpolate"].push_back({v({"opset4", "opset11"}), interpolate});
}

} // namespace troupe::graph::ir
