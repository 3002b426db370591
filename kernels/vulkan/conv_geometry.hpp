#pragma once
/// The geometry of a 2-D (or 1-D seen as 2-D) convolution that Conv, ConvTranspose and
/// ConvInteger's lowerings share: shapes, kernel, strides, dilations, groups and pads.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/vulkan/lowering.hpp"
#include "kernels/vulkan/window_1d.hpp"

namespace troupe::kernels::vulkan {

struct conv_geom {
  Shape x, w, y;
  std::vector<int64_t> k, s, d;
  std::vector<int64_t> pads; ///< begin h, begin w, end h, end w
  int64_t groups;
};

/// Shapes, kernel, strides, dilations and groups; pads differ between Conv and ConvTranspose.
inline conv_geom geometry_without_pads(const graph::Graph& g, const graph::Op& op) {
  conv_geom c;
  c.x = as_2d(shape_of(g, op.inputs[0]));
  c.w = as_2d(shape_of(g, op.inputs[1]));
  c.y = as_2d(shape_of(g, op.outputs[0]));
  c.k = {c.w[2], c.w[3]};
  const graph::Op op2 = op_as_2d(op, shape_of(g, op.inputs[0]).size());
  c.s = op2.attr_ints("strides", {1, 1});
  c.d = op2.attr_ints("dilations", {1, 1});
  c.groups = op.attr_int("group", 1);
  return c;
}

/// A convolution's geometry, pads from `pads`/`auto_pad` as Conv computes them.
inline conv_geom geometry(const graph::Graph& g, const graph::Op& op) {
  conv_geom c = geometry_without_pads(g, op);
  c.pads = window_pads(op_as_2d(op, shape_of(g, op.inputs[0]).size()), c.x, c.y, c.k, c.s, c.d);
  return c;
}

/// Empty when a convolution's ranks (3-D NCL, 4-D NCHW, up to `max_rank`) and spatial
/// attributes are well formed, else why not.
inline std::string check_window_attrs(const graph::Graph& g, const graph::Op& op, std::size_t max_rank) {
  const auto rank = shape_of(g, op.inputs[0]).size();
  if (rank < 3 || rank > max_rank || shape_of(g, op.inputs[1]).size() != rank)
    return max_rank == 5 ? "only 1-D, 2-D and 3-D convolution (3-D NCL, 4-D NCHW or 5-D NCDHW input and weights) have a Vulkan shader"
                         : "only 1-D and 2-D convolution (3-D NCL or 4-D NCHW input and weights) have a Vulkan shader";
  const auto spatial = rank - 2;
  for (const char* a : {"kernel_shape", "strides", "dilations", "output_padding"})
    if (op.has_attr(a) && op.attr_ints(a).size() != spatial)
      return std::string(a) + " must have " + std::to_string(spatial) + " values";
  if (op.has_attr("pads") && op.attr_ints("pads").size() != 2 * spatial)
    return "pads must have " + std::to_string(2 * spatial) + " values";
  auto ap = op.attr_string("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER") return "unknown auto_pad '" + ap + "'";
  return "";
}

/// Empty when the channels of x, w and y agree with `group`, else why not.
inline std::string check_groups(const conv_geom& c) {
  if (c.groups < 1 || c.x[1] % c.groups != 0 || c.y[1] % c.groups != 0 || c.w[1] * c.groups != c.x[1])
    return "channels do not match group=" + std::to_string(c.groups);
  if (c.s.size() != 2 || c.d.size() != 2) return "strides/dilations must have 2 values";
  return "";
}

} // namespace troupe::kernels::vulkan
