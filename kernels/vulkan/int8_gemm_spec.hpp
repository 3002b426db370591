#pragma once
/// The specialization constants 0..11 of quantize.comp's integer product (matmul_integer and
/// matmul_integer_w4): C = A [M, K] x B [K, N] of 8-bit operands with optional zero points.
/// MatMulInteger and the 1x1 ConvInteger (weights as A, each image as B) fill it differently.
#include <cstdint>

#include "kernels/vulkan/lowering.hpp"

namespace troupe::kernels::vulkan {

struct int8_gemm_spec {
  uint64_t invocations = 0;                      ///< 0: elements, or blocks for the _w4 shader
  element_type a = element_type::u8, b = element_type::u8;
  int64_t m = 0, n = 0, k = 0;
  bool a_zp = false, a_zp_per_row = false;       ///< 4, 7
  bool b_zp = false, b_zp_per_column = false;    ///< 9, 8
  int64_t b_batch_stride = 0;                    ///< 10: elements between B's matrices (0: one B)
  bool a_batched = true;                         ///< 11: false: one A for every B (a 1x1 conv)

  spec_map map() const {
    return {{0, static_cast<uint32_t>(invocations)},
            {1, static_cast<uint32_t>(element_kind(a))},
            {2, static_cast<uint32_t>(n)},
            {3, static_cast<uint32_t>(k)},
            {4, a_zp ? 1u : 0u},
            {5, static_cast<uint32_t>(element_kind(b))},
            {6, static_cast<uint32_t>(m)},
            {7, a_zp_per_row ? 1u : 0u},
            {8, b_zp_per_column ? 1u : 0u},
            {9, b_zp ? 1u : 0u},
            {10, static_cast<uint32_t>(b_batch_stride)},
            {11, a_batched ? 1u : 0u}};
  }
};

} // namespace troupe::kernels::vulkan
