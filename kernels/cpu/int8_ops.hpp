#pragma once
/// Integer convolutions and products on oneDNN's int8 primitives: QLinearConv, QLinearMatMul,
/// ConvInteger, MatMulInteger, and the QDQ form of Conv / MatMul / Gemm (a DequantizeLinear'd
/// input, weights that constant folding turned from int8 into f32, an optional QuantizeLinear
/// reading the result). Found once per plan (find_int8_sites), before any step is built, so
/// that the DequantizeLinear and QuantizeLinear ops a site replaces are never built.
#include <map>
#include <string>
#include <vector>

#include "kernels/cpu/plan_builder.hpp"

namespace troupe::kernels::cpu {

/// Input `i` of `op`, or no_value when the op has fewer (an omitted optional input).
inline graph::ValueId input_or_none(const graph::Op& op, std::size_t i) {
  return i < op.inputs.size() ? op.inputs[i] : graph::no_value;
}

/// Whether oneDNN's int8 products are exact on this CPU (VNNI: without it they sum u8 x s8
/// pairs in saturating 16 bits, exact only for 7-bit weights).
bool int8_exact_here();

/// The op types oneDNN's int8 primitives (or its reorders) run in some cases (docs/ops.md).
const std::vector<std::string>& int8_op_types();

/// One integer convolution or product as oneDNN runs it: a u8/s8 input with one scale and
/// zero point, s8 weights with one scale or one per output channel, a bias in accumulator
/// units, the op's fused activation, then either f32 (or s32) out or requantized to u8/s8.
struct int8_site {
  bool is_conv = false;
  graph::ValueId x = graph::no_value; ///< the quantized input
  float x_scale = 1.f;
  int32_t x_zp = 0;
  Tensor w;                           ///< s8: OIHW for a convolution, [K, N] for a product
  std::vector<float> w_scale;         ///< empty: integer out (ConvInteger, MatMulInteger)
  std::vector<float> bias;            ///< divided by x_scale * w_scale already; empty: none
  graph::ValueId y = graph::no_value; ///< the value the primitive writes
  bool requantize = false;            ///< y = QuantizeLinear(result, y_scale, y_zp)
  float y_scale = 1.f;
  /// y's scales per output channel (folded into the output scales): only behind no activation
  /// or one that commutes with a positive factor (Relu, LeakyRelu); y_scale is then 1.
  std::vector<float> y_channel_scale;
  int32_t y_zp = 0;
  std::vector<std::size_t> absorbed;  ///< ops besides the site's own that it replaces
  dnnl::convolution_forward::primitive_desc conv_pd;
  dnnl::matmul::primitive_desc matmul_pd;
};

/// Per op index, the sites oneDNN accepted; their absorbed ops, and DequantizeLinear ops read
/// only by sites, are marked fused in `b`.
std::map<std::size_t, int8_site> find_int8_sites(plan_builder& b);

/// Adds the int8 primitive of a site found by find_int8_sites.
void build_int8_site(plan_builder& b, const graph::Op& op, const int8_site& s);

/// The site's primitive descriptor; throws dnnl::error when oneDNN has no int8 kernel for it.
void make_int8_pd(plan_builder& b, const graph::Op& op, int8_site& s);

/// A constant positive f32 scalar (a per-tensor scale).
bool scalar_scale(const graph::Graph& g, graph::ValueId v, float& out);
/// An omitted zero point (0) or a constant one-element one.
bool scalar_zp(const graph::Graph& g, graph::ValueId v, int32_t& out);

/// A per-tensor QuantizeLinear (f32 to u8/s8) or DequantizeLinear (u8/s8 to f32) with constant
/// scale and zero point as one oneDNN reorder, from and to the layouts the neighbouring
/// primitives use (4-D u8/s8 channels-last, as the int8 convolutions take it): no separate
/// layout reorders around it. False (nothing added) for other cases.
bool build_quantize_reorder(plan_builder& b, const graph::Op& op);

/// `w` (f32, constant) as int8 times a scale per slice along `axis` when every element is
/// float(q) * scale for an int8 q (what DequantizeLinear of symmetric int8 weights gives and
/// constant folding leaves), up to 1/4096 of a grid step (float roundings of a per-channel
/// factor folded in later; OpenVINO IRs' zero points of +-2^-17); false otherwise.
bool exact_int8(const Tensor& w, std::size_t axis, Tensor& q, std::vector<float>& scale);

} // namespace troupe::kernels::cpu
