/// ConvInteger, as onnxruntime's quantize_dynamic writes it for convolutions (u8 activations
/// from DynamicQuantizeLinear, constant u8/i8 weights with zero points): int32 sums, exact.
/// 1x1 convolutions are a MatMulInteger per image (quantize.comp's word-texel shader); the
/// rest run shaders/conv_integer.comp.
#include "kernels/vulkan/conv_geometry.hpp"
#include "kernels/vulkan/int8_epilogue.hpp"
#include "kernels/vulkan/int8_gemm_spec.hpp"

namespace troupe::kernels::vulkan {

namespace {

/// A u8/i8 constant's values.
std::vector<int> int8_values(const Tensor& t) {
  std::vector<int> r(static_cast<std::size_t>(t.get_size()));
  for (std::size_t i = 0; i < r.size(); ++i)
    r[i] = t.get_element_type() == element_type::u8 ? int(t.data<uint8_t>()[i]) : int(t.data<int8_t>()[i]);
  return r;
}

std::string conv_integer_check(const graph::Graph& g, const graph::Op& op) {
  if (op.input_count() < 2) return std::string("expects x and w");
  const auto xt = g.value(op.inputs[0]).type, wt = g.value(op.inputs[1]).type;
  if (!is_int8(xt) || !is_int8(wt)) return "x and w must be u8 or i8, got " + to_string(xt) + " and " + to_string(wt);
  if (!g.is_constant(op.inputs[1])) return std::string("the weights must be a constant (an initializer) on the GPU");
  if (auto why = check_window_attrs(g, op, 4); !why.empty()) return why;
  const conv_geom c = geometry(g, op);
  if (auto why = check_groups(c); !why.empty()) return why;
  if (given(op, 2)) {
    if (g.value(op.inputs[2]).type != xt) return std::string("x_zero_point must have x's type");
    if (shape_size(shape_of(g, op.inputs[2])) != 1) return std::string("x_zero_point must be a scalar, as ONNX specifies");
  }
  if (given(op, 3)) {
    if (g.value(op.inputs[3]).type != wt) return std::string("w_zero_point must have w's type");
    if (!g.is_constant(op.inputs[3])) return std::string("w_zero_point must be a constant (an initializer) on the GPU");
    const int64_t n = shape_size(shape_of(g, op.inputs[3]));
    if (n != 1 && n != c.y[1])
      return "w_zero_point must be a scalar or one per output channel (" + std::to_string(c.y[1]) + "), has " + std::to_string(n);
  }
  return "";
}

/// Whether a convolution is a MatMulInteger per image: 1x1, stride 1, no pads, one group, whole
/// words of input channels and of output pixels.
bool runs_as_matmul(const conv_geom& c) {
  return c.k == std::vector<int64_t>{1, 1} && c.s == std::vector<int64_t>{1, 1} && c.groups == 1 &&
         c.pads == std::vector<int64_t>(4, 0) && c.x[1] % 4 == 0 && (c.y[2] * c.y[3]) % 4 == 0;
}

/// A 1x1 convolution, stride 1, no pads, one group, whole words: Y[n] = W [OC][IC] x X[n] [IC][HW]
/// on matmul_integer_w4, the weights as A (w_zp one per row) and each image as B (x_zp scalar).
bool try_as_matmul(op_builder& b, const conv_geom& c) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const int64_t oc = c.y[1], ic = c.x[1], hw = c.y[2] * c.y[3];
  if (!runs_as_matmul(c)) return false;
  const bool wzp = given(op, 3), xzp = given(op, 2);
  const int64_t blocks = c.y[0] * ((oc + 3) / 4) * ((hw / 4 + 1) / 2);
  int8_gemm_spec gs; // the weights are A, each image B
  gs.invocations = static_cast<uint64_t>(blocks);
  gs.a = g.value(op.inputs[1]).type;
  gs.b = g.value(op.inputs[0]).type;
  gs.m = oc;
  gs.n = hw;
  gs.k = ic;
  gs.a_zp = wzp;
  gs.a_zp_per_row = wzp && shape_size(shape_of(g, op.inputs[3])) != 1;
  gs.b_zp = xzp; // x_zero_point is a scalar (ONNX)
  gs.b_batch_stride = ic * hw;
  gs.a_batched = false;
  spec_map s = gs.map();
  const buffer_ref az = wzp ? b.input(3) : b.input(1), xz = xzp ? b.input(2) : b.input(0);
  std::vector<buffer_ref> args{word_texels(b.input(1), 1), word_texels(b.input(0), 1), az, xz};
  std::string shader = "matmul_integer_w4";
  if (has_epilogue(op)) {
    // The output channel is A's row: scale and bias one per row (mode 2) where not scalars.
    bind_epilogue(b, s, 12, 1, 2, args, texels(b.output(0), 4));
    shader += "_f";
  } else {
    args.push_back(word_texels(b.output(0), 4));
  }
  b.dispatch(shader, std::move(s), std::move(args), static_cast<uint64_t>(blocks));
  return true;
}

void conv_integer(op_builder& b) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const conv_geom c = geometry(g, op);
  if (shape_size(c.y) == 0) return;
  if (try_as_matmul(b, c)) return;
  const int64_t oc = c.y[1], ocg = oc / c.groups, icg = c.w[1], kk = c.k[0] * c.k[1];
  // w - w_zp as floats, in the shader's layout: 4 channels of one group per texel where they fit.
  const auto w = int8_values(*g.value(op.inputs[1]).constant);
  const auto wz = given(op, 3) ? int8_values(*g.value(op.inputs[3]).constant) : std::vector<int>{0};
  const int64_t ob = c.groups == 1 || ocg % 4 == 0 ? 4 : 1, blocks = (oc + ob - 1) / ob;
  std::vector<float> r(static_cast<std::size_t>(blocks * ob * icg * kk), 0.0f);
  for (int64_t o = 0; o < oc; ++o) {
    const int z = wz[wz.size() == 1 ? 0 : static_cast<std::size_t>(o)];
    for (int64_t i = 0; i < icg * kk; ++i)
      r[static_cast<std::size_t>(((o / ob) * icg * kk + i) * ob + o % ob)] =
          static_cast<float>(w[static_cast<std::size_t>(o * icg * kk + i)] - z);
  }
  spec_map s;
  uint32_t i = 0;
  for (int64_t v : {c.x[0], c.x[1], c.x[2], c.x[3], c.y[1], c.y[2], c.y[3], c.k[0], c.k[1], c.s[0], c.s[1], c.d[0],
                    c.d[1], c.pads[0], c.pads[1], c.groups})
    s[i++] = static_cast<uint32_t>(v);
  s[16] = static_cast<uint32_t>(element_kind(g.value(op.inputs[0]).type));
  s[17] = given(op, 2) ? 1u : 0u;
  const buffer_ref xz = given(op, 2) ? b.input(2) : b.input(0);
  std::vector<buffer_ref> args{word_texels(b.input(0), 1), texels(b.constant(std::move(r)), static_cast<uint8_t>(ob)), xz};
  std::string shader = ob == 4 ? "conv_integer_oc4" : "conv_integer_oc1";
  if (has_epilogue(op)) {
    // Cast -> Mul(scale) [-> Add(bias)] in the store, per output channel where not scalars.
    bind_epilogue(b, s, 18, 1, 1, args, texels(b.output(0), 1));
    shader += "_f";
  } else {
    args.push_back(word_texels(b.output(0), 1));
  }
  b.dispatch(shader, std::move(s), std::move(args), static_cast<uint64_t>(c.y[2] * ((c.y[3] + 3) / 4)),
             static_cast<uint32_t>(c.y[0] * blocks));
}

} // namespace

void add_conv_integer_rules(rule_table& t) {
  t["ConvInteger"] = {conv_integer_check, conv_integer,
                      "1-D or 2-D (3-D NCL, 4-D NCHW); x and w u8 or i8, w constant; x_zero_point a scalar, "
                      "w_zero_point constant, a scalar or one per output channel; any pads, strides, dilations and "
                      "groups; int32 out, exact"};
  t["ConvInteger"].trips = [](const graph::Graph& g, const graph::Op& op) {
    const conv_geom c = geometry(g, op);
    const auto ic = static_cast<uint64_t>(c.w[1]), kh = static_cast<uint64_t>(c.k[0]), kw = static_cast<uint64_t>(c.k[1]);
    if (runs_as_matmul(c)) return ic / 4 + 1; // matmul_integer_w4: 4 k a step
    return ic * (kh * kw + kh + 1);
  };
}

} // namespace troupe::kernels::vulkan
