#pragma once
/// f32 MatMul by constant weights on weights packed once per compiled model into panels of 16
/// columns. Where oneDNN 2.6 is slow: wide weights (a language model's vocabulary head, 256 x
/// 49152), whose whole B its gemm:jit packs again on every call on AVX2 (24-32 GFLOP/s on one
/// core) and its brgemm runs at 70 GFLOP/s on AVX-512; and, on AVX-512, the short products of
/// a transformer at up to 64 tokens (brgemm at 55-84 GFLOP/s). AVX2: a 6 x 16 FMA tile reads
/// each panel from L1 for every 6 rows of A; AVX-512: a 12 x 32 tile (two panels). With the
/// bias Add of a linear layer, in the store.
#include <cstdint>

#include <troupe/tensor.hpp>

#include "kernels/reference/kernels.hpp"

namespace troupe::kernels::cpu {

/// Whether this CPU runs packed_gemm_f32: AVX2 and FMA (AVX-512 where it has it).
bool packed_gemm_f32_here();

/// Whether a MatMul of A [rows, K] by a constant B [K, N] goes to packed_gemm_f32 on this CPU:
/// wide B (N >= 4096) on either; on AVX-512 also N >= 64 at up to 64 rows.
bool packed_gemm_f32_pays(int64_t rows, int64_t k, int64_t n);

/// B [K, N] f32 row-major as panels of 16 columns: panel p holds B[k][16p .. 16p + 15] for k =
/// 0 .. K - 1 (a missing column is 0). f32 [panels, K, 16].
Tensor pack_f32_panels(const float* b, int64_t k, int64_t n);

/// The step's kernel. in: [0] A (f32 [rows, K]), [1] the panels, [2] N (i64, one value), and
/// optionally [3] a bias (f32 [N]) added to every row. out: [0] Y (f32 [rows, N]).
reference::kernel_fn packed_gemm_f32();

} // namespace troupe::kernels::cpu
