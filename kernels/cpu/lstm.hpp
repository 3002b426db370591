#pragma once
/// ONNX LSTM as one native step on AVX-512 at small batches: every time step's input product
/// X W^T + Wb + Rb as one blocked GEMM over the team first, then per direction (a thread each)
/// per step
/// the recurrent product h R^T (one pass over R^T per step, in blocks of 128 gate columns
/// laid out one after another) and the cell
/// (sigmoid, tanh) on 16 units at a time. oneDNN 2.6's RNN primitive took a CRNN-sized
/// bidirectional LSTM (80 steps, 256 units, batch 1) to 1.66 ms on 2 threads where
/// onnxruntime took 1.35 (2026-11-29, Zen 5). Only the default activations, without
/// peepholes, clip, input_forget or a sequence_lens shorter than the sequence: the rest stays
/// on oneDNN (or the reference kernel).
#include "kernels/cpu/plan_builder.hpp"

namespace troupe::kernels::cpu {

/// Adds the step when the LSTM qualifies; false (nothing added) otherwise.
bool build_native_lstm(plan_builder& b, const graph::Op& op);

/// The step's kernel. in: X, W^T packed [D, G' / 64, I, 64], R^T packed [D, G' / 128, H, 128]
/// (recurrent_packing.hpp), Wb + Rb [D, G'] (G' = padded_gate_columns(4H)), initial_h, initial_c (or empty); out: Y,
/// Y_h, Y_c (each may be empty). The op copy carries lstm_geometry_attr: T, N, I, H, D,
/// reverse (one direction run backwards), layout.
inline constexpr const char* lstm_geometry_attr = "troupe_lstm_geometry";
void lstm_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out);

} // namespace troupe::kernels::cpu
