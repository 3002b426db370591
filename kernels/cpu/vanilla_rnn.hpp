#pragma once
/// ONNX RNN (tanh) as one native step on AVX-512 at small batches, as lstm.hpp: the input
/// products of every step as one GEMM over the team, then per direction (a thread each) per
/// step h = tanh(pre + h R^T). oneDNN 2.6's cell took a 256-unit, 80-step forward RNN (batch 1)
/// to 0.23 ms on 2 threads and 5071-5213 /s on 2 streams, where onnxruntime made 5367-5433 /s
/// (2026-11-29, Zen 5). Only the default activation (Tanh), without clip or a sequence_lens
/// shorter than the sequence.
#include "kernels/cpu/plan_builder.hpp"

namespace troupe::kernels::cpu {

/// Adds the step when the RNN qualifies; false (nothing added) otherwise.
bool build_native_vanilla_rnn(plan_builder& b, const graph::Op& op);

/// The step's kernel. in: X, W^T packed [D, G' / 64, I, 64], R^T packed [D, G' / 128, H, 128]
/// (G' = padded_gate_columns(H), recurrent_packing.hpp), Wb + Rb [D, G'], initial_h (or
/// empty); out: Y, Y_h (each may be empty). The op copy carries vanilla_rnn_geometry_attr: T,
/// N, I, H, D, reverse, layout.
inline constexpr const char* vanilla_rnn_geometry_attr = "troupe_vanilla_rnn_geometry";
void vanilla_rnn_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out);

} // namespace troupe::kernels::cpu
