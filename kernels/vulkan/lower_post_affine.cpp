/// Scalar affine chains after a conv: Conv/ConvTranspose (with or without a fused activation)
/// -> Mul/Div/Add/Sub by one-element constants, each the only reader of the value before it
/// (PP-OCRv4's learnable affine blocks after HardSwish), become y = act(conv) * scale + shift in
/// the conv's own store (shaders/common.glsl activate()). The conv writes the chain's last
/// value; the chain's ops record no dispatch and report optimized_out. This is the GPU's
/// counterpart of the CPU's oneDNN post-op chains; a lavapipe dispatch costs ~40 us plus a pass
/// over the tensor.
#include <algorithm>
#include <functional>
#include <initializer_list>
#include <optional>
#include <tuple>

#include <troupe/exception.hpp>

#include "kernels/vulkan/fused_builder.hpp"

namespace troupe::kernels::vulkan {

namespace {

struct affine_chain {
  int producer = -1;
  std::vector<int> members;
  graph::ValueId y = graph::no_value; ///< the last member's output: what the conv writes
  float scale = 1.0f, shift = 0.0f;
};

/// y = x (op) c with c a one-element f32 constant and y shaped like x: x's new (scale, shift).
std::optional<std::pair<float, float>> step(const graph::Graph& g, const graph::Op& op, graph::ValueId x, float scale,
                                            float shift) {
  if (op.input_count() != 2 || op.outputs.size() != 1 || op.has_attr("activation") || !op.domain.empty()) return std::nullopt;
  std::size_t xi = op.inputs[0] == x ? 0 : 1;
  if (op.inputs[xi] != x || op.inputs[1 - xi] == x) return std::nullopt;
  graph::ValueId c = op.inputs[1 - xi];
  if (!g.is_constant(c) || g.value(c).type != element_type::f32 || g.value(c).constant->get_size() != 1) return std::nullopt;
  if (g.value(op.outputs[0]).type != element_type::f32 || shape_of(g, op.outputs[0]) != shape_of(g, x)) return std::nullopt;
  float k = g.value(c).constant->data<float>()[0];
  if (op.type == "Mul") return std::make_pair(scale * k, shift * k);
  if (op.type == "Add") return std::make_pair(scale, shift + k);
  if (xi != 0) return std::nullopt; // c / x and c - x are not affine in x
  if (op.type == "Div" && k != 0.0f) return std::make_pair(scale / k, shift / k);
  if (op.type == "Sub") return std::make_pair(scale, shift - k);
  return std::nullopt;
}

std::vector<affine_chain> find_chains(const graph::Graph& g) {
  auto uses = g.use_counts();
  std::vector<int> reader(g.values.size(), -1);
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    for (auto v : g.ops[i].inputs)
      if (v != graph::no_value) reader[static_cast<std::size_t>(v)] = static_cast<int>(i);
  auto taken = attention_members(g);
  std::vector<affine_chain> r;
  for (std::size_t p = 0; p < g.ops.size(); ++p) {
    const auto& conv = g.ops[p];
    if ((conv.type != "Conv" && conv.type != "ConvTranspose") || conv.outputs.size() != 1) continue;
    affine_chain c;
    c.producer = static_cast<int>(p);
    graph::ValueId v = conv.outputs[0];
    while (uses[static_cast<std::size_t>(v)] == 1) {
      int next = reader[static_cast<std::size_t>(v)];
      if (next < 0 || std::find(taken.begin(), taken.end(), next) != taken.end()) break;
      auto s = step(g, g.ops[static_cast<std::size_t>(next)], v, c.scale, c.shift);
      if (!s) break;
      std::tie(c.scale, c.shift) = *s;
      c.members.push_back(next);
      v = g.ops[static_cast<std::size_t>(next)].outputs[0];
    }
    if (c.members.empty()) continue;
    c.y = v;
    r.push_back(std::move(c));
  }
  return r;
}

} // namespace

void add_post_affine_rules(rule_table& t) {
  using lower_fn = std::function<void(op_builder&)>;
  auto wrap = [&t](std::initializer_list<const char*> types, void (*with)(const lower_fn&, op_builder&)) {
    for (const char* type : types)
      if (auto it = t.find(type); it != t.end())
        it->second.lower = [inner = it->second.lower, with](op_builder& b) { with(inner, b); };
  };
  wrap({"Conv", "ConvTranspose"}, [](const lower_fn& inner, op_builder& b) {
    if (int index = index_of(b); index >= 0)
      for (const auto& c : find_chains(b.graph()))
        if (c.producer == index) {
          // The conv's op carries the affine map; its output is the chain's last value.
          graph::Op op = b.op();
          op.attrs[post_affine_attr] = std::vector<float>{c.scale, c.shift};
          fused_builder fb(b, std::move(op), c.y);
          return inner(fb);
        }
    inner(b);
  });
  wrap({"Mul", "Div", "Add", "Sub"}, [](const lower_fn& inner, op_builder& b) {
    if (int index = index_of(b); index >= 0)
      for (const auto& c : find_chains(b.graph()))
        if (std::find(c.members.begin(), c.members.end(), index) != c.members.end()) return; // in the conv's store
    inner(b);
  });
}

} // namespace troupe::kernels::vulkan
