/// The quantization ops of QDQ models, OpenVINO's int8 IRs and onnxruntime's quantize_dynamic
/// (shaders/quantize.comp): QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and MatMulInteger, on u8/i8 bytes packed in words,
/// with zero points and scales known at compile time or only at run time.
#include <troupe/exception.hpp>

#include "kernels/vulkan/int8_epilogue.hpp"
#include "kernels/vulkan/int8_gemm_spec.hpp"

namespace troupe::kernels::vulkan {

namespace {

/// The scale (f32, a scalar or 1-D along `axis` of the quantized tensor `q`) and zero point (of
/// `q`'s type, shaped as the scale) of QuantizeLinear and DequantizeLinear.
std::string scale_check(const graph::Graph& g, const graph::Op& op, graph::ValueId q) {
  const auto qt = g.value(q).type;
  if (g.value(op.inputs[1]).type != element_type::f32) return std::string("the scale must be float32");
  if (op.attr_int("block_size", 0) != 0) return std::string("blocked quantization (block_size) has no Vulkan shader");
  const Shape x = shape_of(g, q), s = shape_of(g, op.inputs[1]);
  const int64_t n = shape_size(s);
  if (n != 1) {
    if (s.size() != 1) return std::string("the scale must be a scalar or 1-D");
    int64_t axis = op.attr_int("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(x.size());
    if (axis < 0 || axis >= static_cast<int64_t>(x.size()) || x[static_cast<std::size_t>(axis)] != n)
      return "a per-axis scale of " + std::to_string(n) + " values does not match axis " + std::to_string(axis) + " of x " +
             to_string(x);
  }
  if (given(op, 2)) {
    if (g.value(op.inputs[2]).type != qt) return std::string("the zero point must have the quantized tensor's type");
    if (shape_size(shape_of(g, op.inputs[2])) != n) return std::string("the zero point must have the scale's shape");
  }
  return "";
}

/// Specialization of the per-element variants: TOTAL, the integer kind, C and INNER of the
/// scale's axis, HAS_ZP.
spec_map per_axis_spec(const graph::Graph& g, const graph::Op& op, graph::ValueId q) {
  const Shape x = shape_of(g, q);
  const int64_t c = shape_size(shape_of(g, op.inputs[1]));
  int64_t inner = 1;
  if (c != 1) {
    int64_t axis = op.attr_int("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(x.size());
    for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < x.size(); ++i) inner *= x[i];
  }
  return spec_map{{0, static_cast<uint32_t>(shape_size(x))},
                  {1, static_cast<uint32_t>(element_kind(g.value(q).type))},
                  {2, static_cast<uint32_t>(c)},
                  {3, static_cast<uint32_t>(inner)},
                  {4, given(op, 2) ? 1u : 0u}};
}

/// DequantizeLinear: x u8/i8/i32 to f32.
std::string dequantize_check(const graph::Graph& g, const graph::Op& op) {
  const auto xt = g.value(op.inputs[0]).type;
  if (!is_int8(xt) && xt != element_type::i32) return "x of type " + to_string(xt) + " has no Vulkan shader (u8, i8, i32)";
  return scale_check(g, op, op.inputs[0]);
}

/// One of the per-element variants: x, scale, zero point (x again when none: never read), y;
/// `per_invocation` elements an invocation.
void per_axis_dispatch(op_builder& b, const char* shader, graph::ValueId q, int64_t per_invocation) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const int64_t total = shape_size(shape_of(g, op.inputs[0]));
  if (total == 0) return;
  b.dispatch(shader, per_axis_spec(g, op, q), {b.input(0), b.input(1), given(op, 2) ? b.input(2) : b.input(0), b.output(0)},
             static_cast<uint64_t>((total + per_invocation - 1) / per_invocation));
}

void dequantize(op_builder& b) { per_axis_dispatch(b, "dequantize", b.op().inputs[0], 1); }

/// QuantizeLinear: f32 to u8/i8 (the int8 activations of QDQ models and of OpenVINO's int8 IRs).
std::string quantize_check(const graph::Graph& g, const graph::Op& op) {
  if (g.value(op.inputs[0]).type != element_type::f32) return std::string("x must be float32");
  const auto yt = g.value(op.outputs[0]).type;
  if (!is_int8(yt)) return "y of type " + to_string(yt) + " has no Vulkan shader (u8, i8)";
  return scale_check(g, op, op.outputs[0]);
}

void quantize(op_builder& b) { per_axis_dispatch(b, "quantize", b.op().outputs[0], 4); } // four bytes a word

std::string dynamic_quantize_check(const graph::Graph& g, const graph::Op& op) {
  if (g.value(op.inputs[0]).type != element_type::f32) return std::string("x must be float32");
  for (std::size_t i = 0; i < op.outputs.size(); ++i)
    if (op.outputs[i] == graph::no_value) return std::string("every output (y, y_scale, y_zero_point) must be used");
  return "";
}

void dynamic_quantize(op_builder& b) {
  const auto& g = b.graph();
  const int64_t total = shape_size(shape_of(g, b.op().inputs[0]));
  // One workgroup finds the range and writes scale and zero point; then four bytes per invocation.
  b.dispatch("dql_range", spec_map{{0, static_cast<uint32_t>(total)}}, {b.input(0), b.output(1), b.output(2)}, 64, 1, 2);
  if (total == 0) return;
  b.dispatch("dql_apply", spec_map{{0, static_cast<uint32_t>(total)}}, {b.input(0), b.output(1), b.output(2), b.output(0)},
             static_cast<uint64_t>((total + 3) / 4));
}

/// MatMulInteger: A [..., M, K] and B [K, N] (or with A's batch dims), u8 or i8; a_zp scalar
/// or one per row of A, b_zp scalar or one per column; int32 out.
std::string matmul_integer_check(const graph::Graph& g, const graph::Op& op) {
  const auto at = g.value(op.inputs[0]).type, bt = g.value(op.inputs[1]).type;
  if (!is_int8(at) || !is_int8(bt)) return "A and B must be u8 or i8, got " + to_string(at) + " and " + to_string(bt);
  const Shape a = shape_of(g, op.inputs[0]), w = shape_of(g, op.inputs[1]);
  if (a.size() < 2 || w.size() < 2) return std::string("A and B must have rank 2 or more (no 1-D operands)");
  if (a.back() != w[w.size() - 2]) return "A " + to_string(a) + " and B " + to_string(w) + " do not multiply";
  if (w.size() > 2 && (w.size() != a.size() || !std::equal(w.begin(), w.end() - 2, a.begin())))
    return "B " + to_string(w) + " must be 2-D or have A's batch dims (" + to_string(a) + ")";
  if (given(op, 2)) {
    const Shape z = shape_of(g, op.inputs[2]);
    if (g.value(op.inputs[2]).type != at) return std::string("a_zero_point must have A's type");
    if (shape_size(z) != 1 && !(z.size() == 1 && z[0] == a[a.size() - 2]))
      return std::string("a_zero_point must be a scalar or one per row of A");
  }
  if (given(op, 3)) {
    const Shape z = shape_of(g, op.inputs[3]);
    if (g.value(op.inputs[3]).type != bt) return std::string("b_zero_point must have B's type");
    if (shape_size(z) != 1 && !(z.size() == 1 && z[0] == w.back()))
      return std::string("b_zero_point must be a scalar or one per column of B");
  }
  return "";
}

void matmul_integer(op_builder& b) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const Shape a = shape_of(g, op.inputs[0]), w = shape_of(g, op.inputs[1]);
  const int64_t m = a[a.size() - 2], k = a.back(), n = w.back();
  const int64_t total = shape_size(shape_of(g, op.outputs[0]));
  if (total == 0) return;
  const bool azp = given(op, 2), wzp = given(op, 3);
  int8_gemm_spec gs;
  gs.invocations = static_cast<uint64_t>(total);
  gs.a = g.value(op.inputs[0]).type;
  gs.b = g.value(op.inputs[1]).type;
  gs.m = m;
  gs.n = n;
  gs.k = k;
  gs.a_zp = azp;
  gs.a_zp_per_row = azp && shape_size(shape_of(g, op.inputs[2])) != 1;
  gs.b_zp = wzp;
  gs.b_zp_per_column = wzp && shape_size(shape_of(g, op.inputs[3])) != 1;
  gs.b_batch_stride = w.size() > 2 ? k * n : 0;
  spec_map s = gs.map();
  const buffer_ref az = azp ? b.input(2) : b.input(0), wz = wzp ? b.input(3) : b.input(0);
  if (k % 4 == 0 && n % 4 == 0) {
    // Rows of whole words: 4 rows x 8 columns per invocation on word texels (quantize.comp).
    const int64_t rows = total / n, blocks = (rows / m) * ((m + 3) / 4) * ((n / 4 + 1) / 2);
    s[0] = static_cast<uint32_t>(blocks);
    std::vector<buffer_ref> args{word_texels(b.input(0), 1), word_texels(b.input(1), 1), az, wz};
    std::string shader = "matmul_integer_w4";
    if (has_epilogue(op)) {
      // Cast -> Mul(scale) [-> Add(bias)] in the store, per column where not a scalar.
      bind_epilogue(b, s, 12, shape_of(g, op.outputs[0]).size() - 1, 1, args, texels(b.output(0), 4));
      shader += "_f";
    } else {
      args.push_back(word_texels(b.output(0), 4));
    }
    b.dispatch(shader, std::move(s), std::move(args), static_cast<uint64_t>(blocks));
    return;
  }
  if (has_epilogue(op)) throw Exception(graph::describe(op) + ": no float store for K or N not a multiple of 4");
  b.dispatch("matmul_integer", std::move(s), {b.input(0), b.input(1), az, wz, b.output(0)}, static_cast<uint64_t>(total));
}

} // namespace

void add_quantize_rules(rule_table& t) {
  t["DequantizeLinear"] = {dequantize_check, dequantize,
                           "x u8, i8 or i32; scale f32, a scalar or one per index of `axis`; zero point of x's type, "
                           "shaped as the scale; no block_size"};
  t["QuantizeLinear"] = {quantize_check, quantize,
                         "x f32; y u8 or i8; scale f32, a scalar or one per index of `axis`; zero point of y's type, "
                         "shaped as the scale; no block_size"};
  t["DynamicQuantizeLinear"] = {dynamic_quantize_check, dynamic_quantize,
                                "x f32; y u8, scale and zero point computed on the GPU (as the reference, byte for byte)"};
  t["MatMulInteger"] = {matmul_integer_check, matmul_integer,
                        "A and B u8 or i8 (constant or run-time), A [..., M, K], B [K, N] or with A's batch dims; "
                        "zero points scalar, or one per row of A / column of B, constant or run-time; int32 out"};
  t["MatMulInteger"].trips = [](const graph::Graph& g, const graph::Op& op) {
    const auto k = static_cast<uint64_t>(shape_of(g, op.inputs[0]).back());
    return (k % 4 == 0 && shape_of(g, op.inputs[1]).back() % 4 == 0 ? k / 4 : k) + 1; // matmul_integer_w4: 4 k a step
  };
  // One workgroup finds the range: every 64th element per invocation, then 63 to combine.
  t["DynamicQuantizeLinear"].trips = [](const graph::Graph& g, const graph::Op& op) {
    return static_cast<uint64_t>(shape_size(shape_of(g, op.inputs[0])) + 63) / 64 + 64;
  };
}

} // namespace troupe::kernels::vulkan
