#pragma once
/// 1-D window ops (Conv, ConvTranspose, MaxPool, AveragePool over N, C, L) run the 2-D shaders
/// with H = 1: their tensors and attributes seen as 2-D.
#include <string>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::kernels::vulkan {

/// (N, C, L) as (N, C, 1, L), weights (OC, ICg, K) as (OC, ICg, 1, K); other ranks unchanged.
inline Shape as_2d(Shape s) {
  if (s.size() == 3) s.insert(s.begin() + 2, 1);
  return s;
}

/// A copy of a 1-D window op whose spatial attributes have the H = 1 dim in front: kernel_shape,
/// strides, dilations [1, v], pads [0, begin, 0, end], output_padding [0, p], output_shape
/// [1, l]. A 2-D op comes back as it is.
inline graph::Op op_as_2d(const graph::Op& op, std::size_t input_rank) {
  graph::Op r = op;
  if (input_rank != 3) return r;
  auto widen = [&](const char* name, int64_t front) {
    if (!op.has_attr(name)) return;
    auto v = op.attr_ints(name);
    if (std::string(name) == "pads" && v.size() == 2) v = {0, v[0], 0, v[1]};
    else if (v.size() == 1) v.insert(v.begin(), front);
    r.attrs[name] = v;
  };
  widen("kernel_shape", 1);
  widen("strides", 1);
  widen("dilations", 1);
  widen("pads", 0);
  widen("output_padding", 0);
  widen("output_shape", 1);
  return r;
}

} // namespace troupe::kernels::vulkan
