#pragma once
/// Plain C++ kernels for cases where oneDNN 2.6 is slow: run as reference-style steps on plain
/// buffers. Each has a predicate (can it run this op?) and a kernel with the reference kernels'
/// signature.
#include "graph/ir.hpp"
#include "kernels/reference/kernels.hpp"

namespace troupe::kernels::cpu {

/// Whether this CPU runs the AVX-512 (F) kernels below; callers fall back to oneDNN or the plain
/// kernels otherwise.
bool native_avx512_available();

/// Softmax over contiguous rows (the last axis, or opset < 13's coerced [outer, inner]), f32,
/// AVX-512: one pass for the maximum, one storing exp(x - max) and summing, one scaling.
/// oneDNN 2.6's softmax took 0.165 ms for rec's [1, 40, 6625] output on one thread.
bool is_row_softmax(const graph::Graph& g, const graph::Op& op);
void softmax_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out);

/// Where on static shapes of 4-byte elements (f32, i32), any broadcast: a row of the output's
/// last axis at a time, each operand stepping along it or repeating one value. A causal mask on
/// attention scores (lm_tiny at 128 tokens: [1, 4, 128, 128]) took the reference kernel 0.44 ms.
bool is_native_where(const graph::Graph& g, const graph::Op& op);
void where_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out);

/// On the op copy a native step runs: the values it reads and writes in a oneDNN layout
/// (nChw16c or channels-last) hold bf16, not f32.
inline constexpr const char* blocked_bf16_attr = "troupe_blocked_bf16";

/// ConvTranspose whose kernel equals its stride (no overlap), group 1, no pads, dilations or
/// output padding, fewer than 16 output channels, f32: a GEMM per input pixel scattered into K x K output blocks. oneDNN's
/// deconvolution took 32 ms on PP-OCR det's 24 -> 1 channel head (10 M MACs).
bool is_unit_overlap_conv_transpose(const graph::Graph& g, const graph::Op& op);
void unit_overlap_conv_transpose(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out);

/// The same op reading its input in oneDNN's nChw16c layout (in[0]'s bytes; its shape is the
/// logical NCHW one), on AVX-512: where the input already lies blocked, no reorder to plain.
/// The input is f32, or bf16 when the op copy carries blocked_bf16_attr. With in[3] and
/// in[4] (f32, one per channel padded to whole blocks of 16) each input element is first
/// mapped to max(x * in[3][c] + in[4][c], 0): an inference BatchNormalization and Relu before
/// the op (det's head) cost no pass of their own.
void unit_overlap_conv_transpose_nchw16c(const reference::context& ctx, const std::vector<Tensor>& in,
                                         std::vector<Tensor>& out);

/// Concat along channels of 4-D maps, each laid out channels-last (nhwc) or in oneDNN's
/// nChw16c (f32, or bf16 with blocked_bf16_attr), each with a multiple of 8 channels, into an
/// nhwc or nChw16c output: attribute concat_layouts_attr lists the output's layout, then each
/// input's. Every 8-channel run is one fixed-size copy. oneDNN 2.6 has only its generic
/// "simple:any" loop for channels that do not fill whole blocks (det's four 24-channel nhwc
/// maps: 0.61 ms of det 640's bf16 inference on one thread).
inline constexpr const char* concat_layouts_attr = "troupe_concat_layouts";
inline constexpr int64_t concat_layout_nhwc = 0, concat_layout_nchw16c = 1;
void concat_channels(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out);

/// Depthwise 2-D convolution (group = channels = output channels) of channels-last (nhwc) bf16
/// maps on AVX512_BF16: vdpbf16ps takes two kernel taps of 16 channels at once, accumulating
/// in f32. in[1] the taps as pack_depthwise_pairs writes them, in[2] the bias [C] f32.
/// Attributes: depthwise_geometry_attr {KH, KW, SH, SW, pad top, pad left};
/// depthwise_post_ops_attr, triples {code, alpha, beta} applied in order (dw_post_*: oneDNN
/// 2.6's eltwise meanings). oneDNN 2.6's brdgmm kernel took 0.078 ms for rec's 240-channel
/// 12x80 5x5 convolution on one thread (150 GFLOP/s), this one 0.057-0.062 ms.
inline constexpr const char* depthwise_geometry_attr = "troupe_dw_geometry";
inline constexpr const char* depthwise_post_ops_attr = "troupe_dw_post_ops";
enum dw_post : int { dw_post_relu = 0, dw_post_linear = 1, dw_post_clip = 2, dw_post_hardswish = 3, dw_post_logistic = 4 };
/// The shapes depthwise_nhwc_bf16 runs: channels a multiple of 16, KW 5 or 7, KH up to 7,
/// height stride 1 or 2, width stride 1 (no dilation: the caller's check).
bool is_native_depthwise_shape(int64_t channels, int64_t kh, int64_t kw, int64_t sh, int64_t sw);
/// Weights [C][1][KH][KW] f32 as [C/16][KH][(KW+1)/2][16] pairs of bf16 (taps 2k, 2k+1; zero
/// past KW), rounded to nearest even: (C/16) * KH * ((KW+1)/2) * 16 words.
void pack_depthwise_pairs(const float* w, int64_t channels, int64_t kh, int64_t kw, uint32_t* out);
void depthwise_nhwc_bf16(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out);
/// y = x * s (s one factor per channel: [1 or N, C, 1, 1], f32, plain), or x * s + x with
/// channel_scale_residual_attr, x a 4-D map laid out channels-last (nhwc), f32 or bf16
/// (blocked_bf16_attr), y likewise.
/// det's squeeze-and-excitation multiplies and their residual Adds: oneDNN 2.6's binary took
/// 0.040 ms (24 channels) and 0.051 + 0.031 ms (96 channels, Mul then Add) on det 320's 80x80
/// maps, one thread. Needs native_bf16_available().
inline constexpr const char* channel_scale_residual_attr = "troupe_scale_residual";
void channel_scale(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out);
/// A three-channel f32 NCHW map (in[0]) as channels-last bf16 (out[0]'s bytes): the input
/// reorder in front of a model's first bf16 convolution. Needs native_bf16_available().
void rgb_to_nhwc_bf16(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out);
/// Whether this CPU converts f32 to bf16 in one instruction (AVX512_BF16): the native kernels
/// write bf16 only there.
bool native_bf16_available();

/// QuantizeLinear (f32 to u8/i8) and DequantizeLinear (u8/i8/i32 to f32), per tensor or per
/// axis, static shapes: a threaded loop; nullptr when the op is another case (the reference's).
reference::kernel_fn native_quantize_kernel(const graph::Graph& g, const graph::Op& op);

} // namespace troupe::kernels::cpu
