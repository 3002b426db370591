#pragma once
/// Numpy broadcasting as the element-wise shaders see it: the output's dims right-aligned into
/// 6, and per operand the element strides over those 6 (0 along a broadcast dim).
#include <array>
#include <cstdint>

#include <troupe/tensor.hpp>

#include "kernels/vulkan/lowering.hpp"
#include "kernels/vulkan/lowering_shapes.hpp"

namespace troupe::kernels::vulkan {

/// Dims of `out` right-aligned into 6.
inline std::array<uint32_t, 6> dims6(const Shape& out) {
  std::array<uint32_t, 6> d{1, 1, 1, 1, 1, 1};
  for (std::size_t i = 0; i < out.size(); ++i) d[6 - out.size() + i] = static_cast<uint32_t>(out[i]);
  return d;
}

/// Broadcasting strides of `in` (right-aligned in 6 dims, like the output's).
inline std::array<uint32_t, 6> bstrides(const Shape& in) {
  std::array<uint32_t, 6> s{0, 0, 0, 0, 0, 0};
  uint32_t stride = 1;
  for (std::size_t k = 0; k < in.size(); ++k) {
    std::size_t i = in.size() - 1 - k;
    s[5 - k] = in[i] == 1 ? 0 : stride;
    stride *= static_cast<uint32_t>(in[i]);
  }
  return s;
}

} // namespace troupe::kernels::vulkan
