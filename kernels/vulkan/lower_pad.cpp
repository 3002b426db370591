/// Pad (shaders/pad.comp): every mode (constant, reflect, edge, wrap), pads from the opset < 11
/// attribute or a constant input (with constant axes, opset 18), negative pads cropping.
#include <cstring>

#include "kernels/vulkan/lowering.hpp"
#include "kernels/vulkan/lowering_shapes.hpp"

namespace troupe::kernels::vulkan {

namespace {

bool legacy(const graph::Op& op) { return op.has_attr("pads"); }

/// Begin and end pads of every dim (2 * rank values).
std::vector<int64_t> full_pads(const graph::Graph& g, const graph::Op& op, std::size_t rank) {
  if (legacy(op)) return op.attr_ints("pads");
  auto pads = const_ints(g, op, 1);
  if (!has_input(op, 3)) return pads;
  auto axes = const_ints(g, op, 3);
  std::vector<int64_t> full(2 * rank, 0);
  for (std::size_t i = 0; i < axes.size() && 2 * i < pads.size(); ++i) {
    auto a = axis_of(axes[i], rank);
    full[a] = pads[i];
    full[rank + a] = pads[axes.size() + i];
  }
  return full;
}

/// The pad value's bits: a float for float data, else the element's (up to two) words.
std::array<uint32_t, 2> value_words(const graph::Graph& g, const graph::Op& op, element_type t) {
  std::array<uint32_t, 2> w{0, 0};
  if (legacy(op)) {
    const double v = op.attr_float("value", 0.0f);
    uint64_t bits = 0;
    switch (t) {
    case element_type::f32: bits = float_bits(static_cast<float>(v)); break;
    case element_type::f64: std::memcpy(&bits, &v, 8); break;
    case element_type::u32: case element_type::u64: bits = static_cast<uint64_t>(v); break;
    default: bits = static_cast<uint64_t>(static_cast<int64_t>(v)); break;
    }
    return {static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)};
  }
  if (!has_input(op, 2) || !g.is_constant(op.inputs[2])) return w;
  const auto& c = *g.value(op.inputs[2]).constant;
  if (c.get_size() > 0) std::memcpy(w.data(), c.data(), element_size(t));
  return w;
}

std::string check(const graph::Graph& g, const graph::Op& op) {
  const auto t = g.value(op.inputs[0]).type;
  if (words_of(t) < 0) return "element type " + to_string(t) + " has no Vulkan Pad shader (32- and 64-bit types only)";
  const Shape x = shape_of(g, op.inputs[0]), y = shape_of(g, op.outputs[0]);
  if (x.size() > 6) return std::string("rank ") + std::to_string(x.size()) + " above 6 has no Vulkan shader";
  const auto mode = op.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") return "mode '" + mode + "' has no Vulkan shader";
  if (!legacy(op)) {
    if (!has_input(op, 1) || !g.is_constant(op.inputs[1])) return std::string("pads (input 1) is not a constant");
    if (has_input(op, 2)) {
      if (g.value(op.inputs[2]).type != t) return std::string("constant_value (input 2) is not of the data's type");
    }
    if (has_input(op, 3) && !g.is_constant(op.inputs[3])) return std::string("axes (input 3) is not a constant");
  }
  const auto pads = full_pads(g, op, x.size());
  if (pads.size() != 2 * x.size()) return "pads has " + std::to_string(pads.size()) + " values for rank " + std::to_string(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] + pads[i] + pads[x.size() + i] != y[i]) return "pads do not give the output shape at dim " + std::to_string(i);
    if (mode != "constant" && x[i] == 0 && y[i] > 0) return "mode '" + mode + "' cannot pad the empty dim " + std::to_string(i);
  }
  return "";
}

void lower(op_builder& b) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const Shape x = shape_of(g, op.inputs[0]), y = shape_of(g, op.outputs[0]);
  const auto t = g.value(op.inputs[0]).type;
  const int words = words_of(t);
  const uint32_t per = words == 2 ? 2 : 1;
  if (shape_size(y) == 0) return;
  const auto pads = full_pads(g, op, x.size());
  const auto mode = op.attr_string("mode", "constant");
  const auto value = value_words(g, op, t);
  spec_map s;
  s[0] = static_cast<uint32_t>(shape_size(y)) * per;
  s[1] = mode == "constant" ? 0 : mode == "reflect" ? 1 : mode == "edge" ? 2 : 3;
  s[2] = per;
  s[3] = words == 0 ? value[0] : 0u;
  s[4] = value[0];
  s[5] = value[1];
  const std::size_t lead = 6 - x.size();
  for (std::size_t i = 0; i < 6; ++i) {
    const bool real = i >= lead;
    s[static_cast<uint32_t>(6 + i)] = real ? static_cast<uint32_t>(y[i - lead]) : 1u;
    s[static_cast<uint32_t>(12 + i)] = real ? static_cast<uint32_t>(x[i - lead]) : 1u;
    s[static_cast<uint32_t>(18 + i)] = real ? static_cast<uint32_t>(static_cast<int32_t>(pads[i - lead])) : 0u;
  }
  // A constant_value given at run time is read from its buffer.
  const bool value_in_buffer = has_input(op, 2) && !g.is_constant(op.inputs[2]);
  s[24] = value_in_buffer ? 1u : 0u;
  // An empty input (constant mode only) is never read: y itself stands in as the binding, and
  // the input stands in for an unread value buffer.
  const buffer_ref src = shape_size(x) == 0 ? b.output(0) : b.input(0);
  const buffer_ref v = value_in_buffer ? b.input(2) : src;
  b.dispatch(words == 0 ? "pad" : "pad_words", std::move(s), {src, v, b.output(0)}, static_cast<uint64_t>(shape_size(y)) * per);
}

} // namespace

void add_pad_rules(rule_table& t) {
  t["Pad"] = {check, lower,
              "f32 or any 32- or 64-bit element type, rank <= 6; mode constant, reflect, edge or wrap; pads (and "
              "axes) constant inputs, or the opset < 11 attributes; constant_value a constant or a run-time input "
              "of the data's type; negative pads crop"};
}

} // namespace troupe::kernels::vulkan
