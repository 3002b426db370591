#pragma once
/// packed_gemm_f32's bf16 form (its header says where the packed products pay), for a model
/// compiled with INFERENCE_PRECISION_HINT bf16 on a CPU with AVX512_BF16: the weights packed once
/// as bf16 pairs (two rows of K per 32-bit lane), A rounded to bf16 per call, vdpbf16ps with f32
/// sums; a 12 x 32 tile as the f32 kernel's, twice the multiplies per instruction. Rounds as
/// oneDNN's bf16 matmul does (operands to nearest even bf16, f32 accumulation).
#include <cstdint>

#include <troupe/tensor.hpp>

#include "kernels/reference/kernels.hpp"

namespace troupe::kernels::cpu {

/// Whether this CPU runs packed_gemm_bf16: AVX-512 with AVX512_BF16.
bool packed_gemm_bf16_here();

/// B [K, N] f32 row-major as bf16 panels of 16 columns by pairs of rows: panel p, pair t holds
/// B[2t][16p + j] and B[2t + 1][16p + j] at [p][t][j][0] and [p][t][j][1] (a missing row or
/// column is 0). bf16 [panels, ceil(K / 2), 32].
Tensor pack_bf16_pair_panels(const float* b, int64_t k, int64_t n);

/// The step's kernel. in: [0] A (f32 [rows, K]), [1] the panels, [2] N (i64, one value), and
/// optionally [3] a bias (f32 [N]) added to every row. out: [0] Y (f32 [rows, N]).
reference::kernel_fn packed_gemm_bf16();

} // namespace troupe::kernels::cpu
