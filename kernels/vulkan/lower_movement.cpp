/// Data movement: Reshape/Squeeze/Unsqueeze/Flatten/Identity/Dropout alias their input's
/// buffer (no dispatch); Concat, Transpose, Slice, Split, Expand, Tile, DepthToSpace and
/// SpaceToDepth are strided copies on shaders/copy.comp (any 32-bit element type).
#include <numeric>

#include "kernels/vulkan/lowering.hpp"
#include "kernels/vulkan/lowering_shapes.hpp"

namespace troupe::kernels::vulkan {

void strided_copy(op_builder& b, buffer_ref src, buffer_ref dst, const Shape& dims, const std::vector<int64_t>& in_strides,
                  int64_t in_off, const std::vector<int64_t>& out_strides, int64_t out_off) {
  spec_map s;
  int64_t total = shape_size(dims);
  if (total == 0) return;
  s[0] = static_cast<uint32_t>(total);
  std::size_t pad = 6 - dims.size();
  for (std::size_t i = 0; i < 6; ++i) {
    bool real = i >= pad;
    s[static_cast<uint32_t>(1 + i)] = real ? static_cast<uint32_t>(dims[i - pad]) : 1u;
    s[static_cast<uint32_t>(7 + i)] = real ? static_cast<uint32_t>(static_cast<int32_t>(in_strides[i - pad])) : 0u;
    s[static_cast<uint32_t>(13 + i)] = real ? static_cast<uint32_t>(out_strides[i - pad]) : 0u;
  }
  s[19] = static_cast<uint32_t>(static_cast<int32_t>(in_off));
  s[20] = static_cast<uint32_t>(out_off);
  b.dispatch("copy", std::move(s), {src, dst}, static_cast<uint64_t>(total));
}

namespace {

std::string check_words(const graph::Graph& g, const graph::Op& op) {
  for (auto v : op.outputs) {
    if (v == graph::no_value) continue;
    if (element_size(g.value(v).type) != 4) return "element type " + to_string(g.value(v).type) + " has no Vulkan copy shader (32-bit types only)";
    if (shape_of(g, v).size() > 6) return std::string("rank above 6 has no Vulkan shader");
  }
  if (!op.inputs.empty() && op.inputs[0] != graph::no_value && shape_of(g, op.inputs[0]).size() > 6)
    return std::string("rank above 6 has no Vulkan shader");
  return "";
}

/// Dropout is an identity only in inference mode or with ratio 0; training mode with a ratio
/// draws a random mask, which no device can reproduce (the reference refuses it too).
std::string dropout_check(const graph::Graph& g, const graph::Op& op) {
  if (op.type != "Dropout" || op.inputs.size() < 3 || op.inputs[2] == graph::no_value) return "";
  const auto& mode = g.value(op.inputs[2]);
  if (!mode.constant) return "training_mode is not a constant";
  const bool training = mode.constant->get_size() > 0 && mode.constant->get_element_type() == element_type::boolean &&
                        mode.constant->data<bool>()[0];
  if (!training) return "";
  bool zero_ratio = false;
  if (op.inputs.size() > 1 && op.inputs[1] != graph::no_value) {
    const auto& r = g.value(op.inputs[1]);
    zero_ratio = r.constant && r.constant->get_size() > 0 && r.constant->get_element_type() == element_type::f32 &&
                 r.constant->data<float>()[0] == 0.0f;
  }
  return zero_ratio ? "" : "training_mode with ratio > 0 draws a random mask";
}

} // namespace

void add_movement_rules(rule_table& t) {
  op_rule alias{[](const graph::Graph& g, const graph::Op& op) {
                  if (op.inputs.empty() || op.inputs[0] == graph::no_value) return std::string("expects an input");
                  for (std::size_t i = 1; i < op.outputs.size(); ++i)
                    if (op.outputs[i] != graph::no_value) return std::string("a second output has no Vulkan shader");
                  if (g.is_constant(op.inputs[0])) return std::string("a constant input should have been folded");
                  if (g.value(op.inputs[0]).type != g.value(op.outputs[0]).type) return std::string("type changes");
                  return dropout_check(g, op);
                },
                [](op_builder& b) { b.alias_output(); },
                "no dispatch, the output shares the input's buffer: a non-constant input of the output's type, one "
                "output"};
  for (const char* n : {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Dropout"}) t[n] = alias;
  t["Dropout"].conditions += "; not training mode with a ratio > 0";

  const std::string words = "32-bit element types (f32, i32, u32), rank <= 6";
  t["Concat"] = {check_words, [](op_builder& b) {
                   const auto& g = b.graph();
                   const auto& op = b.op();
                   Shape y = shape_of(g, op.outputs[0]);
                   const auto axis = axis_of(op.attr_int("axis", 0), y.size());
                   auto ys = row_strides(y);
                   int64_t off = 0;
                   for (std::size_t i = 0; i < op.inputs.size(); ++i) {
                     if (op.inputs[i] == graph::no_value) continue;
                     Shape x = shape_of(g, op.inputs[i]);
                     strided_copy(b, b.input(i), b.output(0), x, row_strides(x), 0, ys, off * ys[axis]);
                     off += x[axis];
                   }
                 },
                 words};

  t["Transpose"] = {check_words, [](op_builder& b) {
                      const auto& g = b.graph();
                      const auto& op = b.op();
                      Shape x = shape_of(g, op.inputs[0]), y = shape_of(g, op.outputs[0]);
                      std::vector<int64_t> perm(x.size());
                      std::iota(perm.rbegin(), perm.rend(), 0);
                      perm = op.attr_ints("perm", perm);
                      auto xs = row_strides(x);
                      std::vector<int64_t> in(y.size());
                      for (std::size_t i = 0; i < y.size(); ++i) in[i] = xs[static_cast<std::size_t>(perm[i])];
                      strided_copy(b, b.input(0), b.output(0), y, in, 0, row_strides(y), 0);
                    },
                    words};

  t["Slice"] = {[](const graph::Graph& g, const graph::Op& op) {
                  auto w = check_words(g, op);
                  if (!w.empty()) return w;
                  for (std::size_t i = 1; i < op.inputs.size(); ++i)
                    if (op.inputs[i] != graph::no_value && !g.is_constant(op.inputs[i]))
                      return std::string("starts/ends/axes/steps must be constants");
                  return std::string();
                },
                [](op_builder& b) {
                  const auto& g = b.graph();
                  const auto& op = b.op();
                  Shape x = shape_of(g, op.inputs[0]), y = shape_of(g, op.outputs[0]);
                  std::vector<int64_t> starts, axes, steps;
                  if (g.opset < 10) {
                    starts = op.attr_ints("starts");
                    axes = op.attr_ints("axes");
                  } else {
                    starts = const_ints(g, op, 1);
                    axes = const_ints(g, op, 3);
                    steps = const_ints(g, op, 4);
                  }
                  if (axes.empty())
                    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
                  if (steps.empty()) steps.assign(starts.size(), 1);
                  auto xs = row_strides(x);
                  std::vector<int64_t> in = xs;
                  int64_t off = 0;
                  for (std::size_t i = 0; i < axes.size(); ++i) {
                    auto a = axis_of(axes[i], x.size());
                    int64_t dim = x[a], st = starts[i], step = steps[i];
                    if (st < 0) st += dim;
                    st = step > 0 ? std::clamp<int64_t>(st, 0, dim) : std::clamp<int64_t>(st, 0, dim - 1);
                    off += st * xs[a];
                    in[a] = xs[a] * step;
                  }
                  strided_copy(b, b.input(0), b.output(0), y, in, off, row_strides(y), 0);
                },
                words + "; starts, ends, axes and steps constant"};

  t["Split"] = {check_words, [](op_builder& b) {
                  const auto& g = b.graph();
                  const auto& op = b.op();
                  Shape x = shape_of(g, op.inputs[0]);
                  auto axis = axis_of(op.attr_int("axis", 0), x.size());
                  auto xs = row_strides(x);
                  int64_t off = 0;
                  for (std::size_t j = 0; j < op.outputs.size(); ++j) {
                    if (op.outputs[j] == graph::no_value) continue;
                    Shape y = shape_of(g, op.outputs[j]);
                    strided_copy(b, b.input(0), b.output(j), y, xs, off * xs[axis], row_strides(y), 0);
                    off += y[axis];
                  }
                },
                words};

  t["Expand"] = {[](const graph::Graph& g, const graph::Op& op) {
                   auto w = check_words(g, op);
                   if (!w.empty()) return w;
                   if (!g.is_constant(op.inputs[1])) return std::string("shape must be a constant");
                   return std::string();
                 },
                 [](op_builder& b) {
                   const auto& g = b.graph();
                   const auto& op = b.op();
                   Shape x = shape_of(g, op.inputs[0]), y = shape_of(g, op.outputs[0]);
                   auto xs = row_strides(x);
                   std::vector<int64_t> in(y.size(), 0);
                   for (std::size_t k = 0; k < x.size(); ++k) {
                     std::size_t i = x.size() - 1 - k, o = y.size() - 1 - k;
                     in[o] = x[i] == 1 ? 0 : xs[i];
                   }
                   strided_copy(b, b.input(0), b.output(0), y, in, 0, row_strides(y), 0);
                 },
                 words + "; shape constant"};

  // Tile: one copy over (repeat, dim) pairs for each repeated dim, (dim) for the others.
  t["Tile"] = {[](const graph::Graph& g, const graph::Op& op) {
                 auto w = check_words(g, op);
                 if (!w.empty()) return w;
                 if (!g.is_constant(op.inputs[1])) return std::string("repeats must be a constant");
                 if (shape_of(g, op.inputs[0]).size() > 5) {
                   for (auto r : const_ints(g, op, 1))
                     if (r > 1) return std::string("a repeated dim of a 6-D input has no Vulkan shader");
                 }
                 return std::string();
               },
               [](op_builder& b) {
                 const auto& g = b.graph();
                 const auto& op = b.op();
                 Shape x = shape_of(g, op.inputs[0]), y = shape_of(g, op.outputs[0]);
                 if (shape_size(y) == 0) return; // a repeat of 0: nothing to write
                 const auto reps = const_ints(g, op, 1);
                 const auto xs = row_strides(x), ys = row_strides(y);
                 Shape dims;
                 std::vector<int64_t> in, out;
                 for (std::size_t i = 0; i < x.size(); ++i) {
                   if (reps[i] > 1) {
                     dims.push_back(reps[i]);
                     in.push_back(0);
                     out.push_back(x[i] * ys[i]);
                   }
                   dims.push_back(x[i]);
                   in.push_back(xs[i]);
                   out.push_back(ys[i]);
                 }
                 if (dims.size() <= 6) return strided_copy(b, b.input(0), b.output(0), dims, in, 0, out, 0);
                 // More dims than the copy shader has: x into the output's first tile, then
                 // one dim at a time, the filled part copied to the dim's other repeats.
                 strided_copy(b, b.input(0), b.output(0), x, xs, 0, ys, 0);
                 Shape filled = x;
                 for (std::size_t d = x.size(); d-- > 0;) {
                   if (reps[d] <= 1) continue;
                   Shape rdims{reps[d] - 1};
                   std::vector<int64_t> rin{0}, rout{x[d] * ys[d]};
                   for (std::size_t i = 0; i < x.size(); ++i) {
                     rdims.push_back(filled[i]);
                     rin.push_back(ys[i]);
                     rout.push_back(ys[i]);
                   }
                   strided_copy(b, b.output(0), b.output(0), rdims, rin, 0, rout, x[d] * ys[d]);
                   filled[d] = y[d];
                 }
               },
               words + "; repeats constant; no repeated dim in a 6-D input"};

  // DepthToSpace and SpaceToDepth: one 6-D copy over [N, C, H, block, W, block].
  op_rule space_depth{
      [](const graph::Graph& g, const graph::Op& op) {
        auto w = check_words(g, op);
        if (!w.empty()) return w;
        if (shape_of(g, op.inputs[0]).size() != 4) return std::string("only 4-D inputs have a Vulkan shader");
        return std::string();
      },
      [](op_builder& b) {
        const auto& g = b.graph();
        const auto& op = b.op();
        Shape x = shape_of(g, op.inputs[0]), y = shape_of(g, op.outputs[0]);
        const int64_t bs = op.attr_int("blocksize", 1);
        const auto xs = row_strides(x), ys = row_strides(y);
        if (op.type == "DepthToSpace") {
          const int64_t c = y[1];
          const bool crd = op.attr_string("mode", "DCR") == "CRD";
          // y[n, c, h*bs + i, w*bs + j] = x[n, DCR: (i*bs + j)*C' + c, CRD: c*bs*bs + i*bs + j, h, w]
          strided_copy(b, b.input(0), b.output(0), Shape{y[0], c, x[2], bs, x[3], bs},
               {xs[0], crd ? bs * bs * xs[1] : xs[1], xs[2], crd ? bs * xs[1] : bs * c * xs[1], xs[3], crd ? xs[1] : c * xs[1]},
               0, {ys[0], ys[1], bs * ys[2], ys[2], bs * ys[3], ys[3]}, 0);
        } else {
          const int64_t c = x[1];
          // y[n, (i*bs + j)*C + c, h, w] = x[n, c, h*bs + i, w*bs + j]
          strided_copy(b, b.input(0), b.output(0), Shape{x[0], c, y[2], bs, y[3], bs},
               {xs[0], xs[1], bs * xs[2], xs[2], bs * xs[3], xs[3]}, 0,
               {ys[0], ys[1], ys[2], bs * c * ys[1], ys[3], c * ys[1]}, 0);
        }
      },
      words + "; 4-D"};
  t["DepthToSpace"] = space_depth;
  t["SpaceToDepth"] = space_depth;

  // GatherElements (shaders/gather.comp): f32 data, int32 or int64 indices.
  op_rule gather{[](const graph::Graph& g, const graph::Op& op) {
                   if (g.value(op.inputs[0]).type != element_type::f32) return std::string("the shader gathers float32 data only");
                   const auto it = g.value(op.inputs[1]).type;
                   if (it != element_type::i64 && it != element_type::i32) return std::string("indices must be int32 or int64");
                   if (shape_of(g, op.inputs[0]).size() > 6 || shape_of(g, op.outputs[0]).size() > 6)
                     return std::string("rank above 6 has no Vulkan shader");
                   return std::string();
                 },
                 [](op_builder& b) {
                   const auto& g = b.graph();
                   const auto& op = b.op();
                   const Shape x = shape_of(g, op.inputs[0]), y = shape_of(g, op.outputs[0]);
                   const auto axis = axis_of(op.attr_int("axis", 0), x.size());
                   spec_map s{{0, static_cast<uint32_t>(shape_size(y))},
                              {1, g.value(op.inputs[1]).type == element_type::i64 ? 2u : 1u},
                              {2, static_cast<uint32_t>(x[axis])}};
                   const std::size_t pad = 6 - y.size();
                   const auto xs = row_strides(x);
                   s[3] = static_cast<uint32_t>(pad + axis);
                   for (std::size_t i = 0; i < 6; ++i) {
                     s[static_cast<uint32_t>(4 + i)] = i >= pad ? static_cast<uint32_t>(y[i - pad]) : 1u;
                     s[static_cast<uint32_t>(10 + i)] = i >= pad ? static_cast<uint32_t>(xs[i - pad]) : 0u;
                   }
                   b.dispatch("gather_elements", std::move(s), {b.input(0), b.input(1), b.output(0)},
                              static_cast<uint64_t>(shape_size(y)));
                 },
                 "f32 data, int32 or int64 indices, rank <= 6; an index out of range gives 0"};
  // Gather (shaders/gather_words.comp): data of any 1-, 2-, 4- or 8-byte type moved as raw
  // words; an index out of range fails the run naming the op, the index and the axis length.
  op_rule gather_any{
      [](const graph::Graph& g, const graph::Op& op) {
        const auto dt = g.value(op.inputs[0]).type;
        const auto es = dt == element_type::string ? 0 : element_size(dt);
        if (es != 1 && es != 2 && es != 4 && es != 8)
          return "data of type " + to_string(dt) + " has no Vulkan gather (1-, 2-, 4- or 8-byte elements)";
        const auto it = g.value(op.inputs[1]).type;
        if (it != element_type::i64 && it != element_type::i32) return std::string("indices must be int32 or int64");
        return std::string();
      },
      [](op_builder& b) {
        const auto& g = b.graph();
        const auto& op = b.op();
        const Shape x = shape_of(g, op.inputs[0]), idx = shape_of(g, op.inputs[1]), y = shape_of(g, op.outputs[0]);
        const auto axis = axis_of(op.attr_int("axis", 0), x.size());
        const uint64_t total = static_cast<uint64_t>(shape_size(y));
        if (total == 0) return;
        const auto dt = g.value(op.inputs[0]).type;
        const uint32_t es = static_cast<uint32_t>(element_size(dt));
        auto [status, tag] = b.status(graph::describe(op) + ": index {index} is out of range for axis " + std::to_string(axis) +
                                      " of the data (" + std::to_string(x[axis]) + " entries, data shape " + to_string(x) + ")");
        spec_map s{{0, static_cast<uint32_t>(total)},
                   {1, g.value(op.inputs[1]).type == element_type::i64 ? 2u : 1u},
                   {2, static_cast<uint32_t>(x[axis])},
                   {3, static_cast<uint32_t>(shape_size(Shape(x.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.end())))},
                   {4, static_cast<uint32_t>(shape_size(idx))},
                   {5, es},
                   {6, tag}};
        // One invocation per output word (f32 data in float16 storage: the shader returns past the halves).
        const uint64_t words = es >= 4 ? total * (es / 4) : (total * es + 3) / 4;
        b.dispatch("gather_words", std::move(s), {b.input(0), b.input(1), status, b.output(0)}, words, 1, 2);
      },
      "data of any 1-, 2-, 4- or 8-byte type, int32 or int64 indices; an index out of range fails the request "
      "naming the op, the index and the axis length"};
  t["Gather"] = gather_any;
  t["GatherElements"] = gather;
}

} // namespace troupe::kernels::vulkan
