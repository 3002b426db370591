#pragma once
/// ONNX GRU as one native step on AVX-512 at small batches, as lstm.hpp: the input products of
/// every step as one GEMM over the team, then per direction (a thread each) per step the update and
/// reset gates' recurrent product, the candidate's (over r * h, or r * (h R^T + Rb) with
/// linear_before_reset) and the new state. oneDNN 2.6's GRU took a 256-unit, 80-step forward
/// GRU (batch 1) to 0.80 ms on 2 threads where onnxruntime took 0.45 (2026-11-29, Zen 5). Only
/// the default activations, without clip or a sequence_lens shorter than the sequence.
#include "kernels/cpu/plan_builder.hpp"

namespace troupe::kernels::cpu {

/// Adds the step when the GRU qualifies; false (nothing added) otherwise.
bool build_native_gru(plan_builder& b, const graph::Op& op);

/// The step's kernel. in: X, W^T packed [D, G' / 64, I, 64] with the z and r columns first and
/// the candidate's from Gzr = padded_gate_columns(2H) (recurrent_packing.hpp), R^T of z and r
/// packed [D, Gzr / 128, H, 128], R^T of the candidate packed [D, Gh / 128, H, 128]
/// (Gh = padded_gate_columns(H)), the input products' bias [D, G'] (Wb + Rb; the candidate's
/// Rb only without linear_before_reset), the candidate's Rb [D, Gh], initial_h (or empty);
/// out: Y, Y_h (each may be empty). The op copy carries gru_geometry_attr: T, N, I, H, D,
/// reverse, layout, linear_before_reset.
inline constexpr const char* gru_geometry_attr = "troupe_gru_geometry";
void gru_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out);

} // namespace troupe::kernels::cpu
