#pragma once
/// f32 MatMul by wide constant weights (a language model's vocabulary head: 256 x 49152) on
/// AVX2 CPUs without AVX-512, where oneDNN 2.6's matmul runs its gemm:jit and packs all of B again
/// on every call (lm_tiny's head: 24-32 GFLOP/s on one core, against 54 for a 256 x 1024 B). The
/// weights are packed once per compiled model into panels of 16 columns; a 6 x 16 FMA tile
/// reads each panel from L1 for every 6 rows of A.
#include <cstdint>

#include <troupe/tensor.hpp>

#include "kernels/reference/kernels.hpp"

namespace troupe::kernels::cpu {

/// Whether this CPU runs packed_gemm_f32 and it is the faster choice here: AVX2 and FMA without
/// AVX-512 (where oneDNN's brgemm kernels take pre-packed weights themselves).
bool packed_gemm_f32_here();

/// Whether a MatMul of A [..., K] by a constant B [K, N] goes to packed_gemm_f32: wide B only,
/// where oneDNN's per-call packing is the cost.
bool packed_gemm_f32_pays(int64_t rows, int64_t k, int64_t n);

/// B [K, N] f32 row-major as panels of 16 columns: panel p holds B[k][16p .. 16p + 15] for k =
/// 0 .. K - 1 (a missing column is 0). f32 [panels, K, 16].
Tensor pack_f32_panels(const float* b, int64_t k, int64_t n);

/// The step's kernel. in: [0] A (f32 [rows, K]), [1] the panels, [2] N (i64, one value).
/// out: [0] Y (f32 [rows, N]).
reference::kernel_fn packed_gemm_f32();

} // namespace troupe::kernels::cpu
