#pragma once
/// Exact u8 x s8 -> s32 products on AVX2 CPUs without VNNI, in one pass with the zero points'
/// terms, the scale and the bias (integer_matmul.hpp's epilogue, fused).
///
/// oneDNN's int8 kernels on such CPUs add u8 x s8 pairs in saturating 16 bits (vpmaddubsw), so
/// integer_matmul.cpp took two products of split weights plus an epilogue pass. Here both
/// operands widen to s16 and vpmaddwd adds each pair in 32 bits: exact for every u8 and s8,
/// one product, no s32 round trip through memory. The weights are packed once per compiled
/// model into panels of 16 columns (s8, widened as they are loaded: no more bytes than s8).
#include <cstdint>

#include <troupe/tensor.hpp>

#include "kernels/reference/kernels.hpp"

namespace troupe::kernels::cpu {

/// Whether this CPU runs integer_gemm_s16's kernel (AVX2).
bool integer_gemm_s16_here();

/// B [K, N] (s8, row-major) as the kernel reads it: panel p (columns 16p .. 16p + 15), k-pair t
/// (rows 2t, 2t + 1) is 32 bytes, (B[2t][c], B[2t + 1][c]) for c = 16p .. 16p + 7, then for
/// c = 16p + 8 .. 16p + 15; a missing row or column is 0. i8 [panels, pairs, 32].
Tensor pack_s16_panels(const int8_t* b, int64_t k, int64_t n);

/// The step's kernel. in: [0] A (u8 [rows, K]), [1] A's zero point (u8, one value; empty: 0),
/// [2] the panels, [3] B's column sums (i32 [N]), [4] B's zero points (i32 [N]; empty: all 0),
/// [5] the scale (f32, one value or one per column; empty: no float chain), [6] the bias (f32
/// [N]; empty: none). out: [0] Y (i32 without a scale, else f32; [rows, N]), [1] scratch: A
/// widened (i16 [rows, K rounded up to even]), [2] scratch: A's row sums (i32 [rows]).
/// Y = float(sum_k (a - az)(b - bz[n])) * scale + bias, as the graph's ops compute it.
reference::kernel_fn integer_gemm_s16();

} // namespace troupe::kernels::cpu
