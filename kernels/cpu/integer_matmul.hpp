#pragma once
/// MatMulInteger as onnxruntime's `quantize_dynamic` writes it: a u8 activation whose zero
/// point is known only at run time (DynamicQuantizeLinear's), constant u8 or s8 weights with
/// constant zero points (one, or one per column), and after it, usually,
/// Cast(to float) -> Mul(activation scale * weight scale) [-> Add(bias)].
///
/// One oneDNN u8 x s8 -> s32 matmul without zero points (weights shifted to s8 once, at
/// compile time), then one native pass that subtracts the zero points' terms exactly:
///   sum_k (a - az)(w - wz[n]) = sum_k a w - az colsum[n] - wz[n] (rowsum[m] - K az)
/// and, where the chain is there, converts, scales and adds the bias as the chain's ops do
/// (float(acc) * scale, then + bias): the values are the integer op's and the float ops', bit
/// for bit. Without VNNI, oneDNN's int8 products add u8 x s8 pairs in saturating 16 bits
/// (vpmaddubsw): the weights are split as w = 64 h + l (l in [0, 63], h in [-2, 1]), whose
/// pair sums cannot saturate, and two products are taken; acc = acc_l + 64 acc_h, still exact.
/// Weights with max - min <= 128 (7-bit ones: quantize_dynamic's reduce_range, which
/// onnxruntime advises for CPUs without VNNI) are shifted into [-64, 64] instead: one product. The reference kernel went through doubles per multiply-add: 6.3 s for a small
/// quantized language model against onnxruntime's 15 ms.
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "kernels/cpu/integer_epilogue_512.hpp"
#include "kernels/cpu/plan_builder.hpp"

namespace troupe::kernels::cpu {

/// What follows an integer product in quantize_dynamic's pattern: Cast(to float) [-> Mul(scale)
/// [-> Add(constant bias)]], each op the sole reader of the one before, none a graph output.
/// The scale has one value or one per channel, the bias one per channel, the channels along
/// `axis` of the product (the last for MatMulInteger, 1 for ConvInteger).
struct float_chain {
  std::vector<std::size_t> ops;           ///< Cast [, Mul [, Add [, Gelu or Add]]]; empty: none
  graph::ValueId scale = graph::no_value; ///< the Mul's other operand (f32)
  graph::ValueId bias = graph::no_value;  ///< the Add's constant operand (f32)
  epilogue_activation activation = epilogue_activation::none; ///< the Gelu's form, when taken
  graph::ValueId residual = graph::no_value; ///< the second Add's other operand (f32, the result's shape)
};
/// `take_more`: also a Gelu or a residual Add after the bias, where the AVX-512 epilogue runs
/// (integer_epilogue_512).
float_chain follow_float_chain(const plan_builder& b, graph::ValueId y, int64_t channels, std::size_t axis,
                               bool take_more = false);

struct integer_matmul_site {
  std::size_t matmul = 0;                      ///< op index of the MatMulInteger
  std::size_t last = 0;                        ///< op index whose output the step writes
  std::vector<std::size_t> chain;              ///< Cast [, Mul [, Add [, Gelu or Add]]] after it, in order
  epilogue_activation activation = epilogue_activation::none; ///< the chain's Gelu
  graph::ValueId residual = graph::no_value;   ///< the chain's residual operand
  graph::ValueId scale = graph::no_value;      ///< the Mul's other operand (f32, 1 or N values)
  graph::ValueId bias = graph::no_value;       ///< the Add's constant [N]
  int64_t rows = 0, k = 0, n = 0;
  Tensor weights;                              ///< s8 [K, N]; split: l
  Tensor weights_high;                         ///< split: h (s8 [K, N]); empty: one product
  int high_buffer = -1;                        ///< split: the buffer of the product with h
  Tensor column_sums;                          ///< i32 [N]: sum over K of the s8 weights
  Tensor weight_zp;                            ///< i32 [N] (shifted to the s8 weights); empty: all 0
  /// Without exact oneDNN int8 products, on AVX2: the weights packed for integer_gemm_s16,
  /// which takes the product and the epilogue in one step (weights, weights_high and pd
  /// unused). Empty: oneDNN's product, then the epilogue.
  Tensor panels;
  dnnl::matmul::primitive_desc pd;
};

/// ConvInteger with a zero point known at run time (or now): oneDNN's int8 convolution with a
/// run-time source zero point (its padding counts as the zero point, as ONNX's does), the
/// chain's scale as run-time output scales and its bias as a binary post-op, so that it writes
/// the chain's float result at once. Built where the chain ends (its scale is computed by then).
///
/// Without VNNI the weights are split as for the products (w = 64 h + l), unless they lie in
/// [-64, 64] (7-bit: reduce_range; a convolution takes no weight zero point to shift by): two convolutions
/// write s32 channels-last, and integer_product_epilogue adds them, scales and adds the bias.
struct integer_conv_site {
  std::size_t conv = 0, last = 0;
  float_chain chain;
  Tensor weights;      ///< s8, (G,) O, I/G, k...; split: l
  Tensor weights_high; ///< split: h; empty: one convolution
  bool epilogue = false; ///< s32 channels-last, then integer_product_epilogue (no VNNI or zero points; a chain)
  Tensor weight_zp;    ///< i32 [OC], shifted with the weights; empty: all 0
  Tensor sums_weights; ///< ones [G, 1, IC/G, k...]: the window sums of x - x_zp per group
  dnnl::convolution_forward::primitive_desc sums_pd;
  dnnl::convolution_forward::primitive_desc pd;
};

/// The native pass after integer products (integer_matmul.cpp: its inputs are listed there):
/// rows of `columns` s32 sums, minus the zero points' terms, plus 64 x a second product, then
/// as float times the scale plus the bias.
reference::kernel_fn integer_product_epilogue();

/// Whether MatMulInteger runs on integer_gemm_s16 (integer_gemm_s16.hpp): where oneDNN's
/// int8 products are not exact (no VNNI) and the CPU has AVX2, unless TROUPE_CPU_NO_INT8_S16
/// is set (read per compile: the tests cover the split products with it).
bool integer_gemm_s16_chosen();

struct integer_products {
  std::map<std::size_t, integer_matmul_site> matmuls; ///< by the MatMulInteger's op index
  std::map<std::size_t, std::size_t> matmul_by_last;  ///< a matmul chain's last op -> its MatMulInteger
  std::map<std::size_t, integer_conv_site> convs;     ///< by the op index the convolution is built at
  std::set<std::size_t> inside;                       ///< ops that make no step of their own
};

/// The integer products of the plan these paths run, with their chains. `taken`: ops other
/// sites run already.
integer_products find_integer_products(plan_builder& b, const std::set<std::size_t>& taken);

/// At a site's MatMulInteger: the oneDNN product into the op's own (s32) value.
void build_integer_matmul(plan_builder& b, const graph::Op& op, integer_matmul_site& s);
/// At the chain's last op (the MatMulInteger itself when there is no chain): the native pass.
void build_integer_matmul_epilogue(plan_builder& b, const graph::Op& last, const integer_matmul_site& s);
/// At the chain's last op (or the ConvInteger without one).
void build_integer_conv(plan_builder& b, const integer_conv_site& s);

/// The conv site of op `k`, or nothing (integer_conv.cpp).
std::optional<integer_conv_site> find_integer_conv(const plan_builder& b, std::size_t k);

} // namespace troupe::kernels::cpu
