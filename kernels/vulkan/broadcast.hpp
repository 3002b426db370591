#pragma once
/// Numpy broadcasting as the element-wise shaders see it: the output's dims right-aligned into
/// 6, and per operand the element strides over those 6 (0 along a broadcast dim).
#include <array>
#include <cstdint>
#include <string>

#include <troupe/tensor.hpp>

#include "kernels/vulkan/lowering.hpp"

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

/// Empty when every input and output 0 have rank <= 6 (the shaders' broadcasting dims).
inline std::string check_rank(const graph::Graph& g, const graph::Op& op) {
  for (auto v : op.inputs)
    if (v != graph::no_value && shape_of(g, v).size() > 6) return "rank above 6 has no Vulkan shader";
  if (shape_of(g, op.outputs[0]).size() > 6) return "rank above 6 has no Vulkan shader";
  return "";
}

} // namespace troupe::kernels::vulkan
