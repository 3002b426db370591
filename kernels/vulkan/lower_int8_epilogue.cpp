/// quantize_dynamic's float epilogue in the integer op's store: MatMulInteger / ConvInteger ->
/// Cast(float) -> Mul(scale) [-> Add(bias)], each the only reader of the value before it, becomes
/// one dispatch writing y = float(acc) * scale + bias (rounded as the separate ops round). The
/// scale is a run-time value (the activations' scale times the weights'), computed after the
/// integer op in the graph's order, so the fused dispatch is recorded at the chain's last op,
/// whose profiling row reports it; the integer op and the Cast record nothing (optimized out).
/// On lavapipe, PP-OCR det's 58 chains were a Cast and two element-wise passes each.
#include <algorithm>
#include <functional>
#include <initializer_list>

#include "kernels/vulkan/fused_builder.hpp"
#include "kernels/vulkan/int8_epilogue.hpp"

namespace troupe::kernels::vulkan {

namespace {

struct epilogue {
  int producer = -1;
  std::vector<int> members; ///< Cast, Mul[, Add]; the last one records the dispatch
  graph::ValueId y = graph::no_value, scale = graph::no_value, bias = graph::no_value;
};

/// The axis of the producer's output that per-channel scales and biases run along, or -1 when
/// its lowering has no float store for this shape.
int channel_axis(const graph::Graph& g, const graph::Op& op) {
  const Shape y = shape_of(g, op.outputs[0]);
  if (op.type == "ConvInteger") return 1;
  // MatMulInteger: only the word-texel shader (K and N multiples of 4) has the float store.
  const Shape a = shape_of(g, op.inputs[0]);
  if (a.empty() || a.back() % 4 != 0 || y.empty() || y.back() % 4 != 0) return -1;
  return static_cast<int>(y.size()) - 1;
}

/// Op `r` is Mul/Add(x, other) (either order) with an f32 `other` broadcasting along `axis` of
/// `y`, its output shaped as y: `other`, else no_value.
graph::ValueId affine_operand(const graph::Graph& g, const graph::Op& r, const char* type, graph::ValueId x, const Shape& y,
                              int axis) {
  if (r.type != type || r.input_count() != 2 || r.outputs.size() != 1 || r.has_attr("activation") || !r.domain.empty())
    return graph::no_value;
  const std::size_t xi = r.inputs[0] == x ? 0 : 1;
  const graph::ValueId other = r.inputs[1 - xi];
  if (r.inputs[xi] != x || other == x || other == graph::no_value) return graph::no_value;
  if (g.value(other).type != element_type::f32 || g.value(r.outputs[0]).type != element_type::f32) return graph::no_value;
  const auto& ov = g.value(other);
  if (!ov.constant && (!ov.shape.rank_known || !ov.shape.is_static())) return graph::no_value;
  if (shape_of(g, r.outputs[0]) != y || per_axis_mode(shape_of(g, other), y, static_cast<std::size_t>(axis)) < 0)
    return graph::no_value;
  return other;
}

std::vector<epilogue> find_epilogues(const graph::Graph& g) {
  const auto uses = g.use_counts();
  std::vector<int> reader(g.values.size(), -1);
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    for (auto v : g.ops[i].inputs)
      if (v != graph::no_value) reader[static_cast<std::size_t>(v)] = static_cast<int>(i);
  const auto taken = attention_members(g);
  auto only_reader = [&](graph::ValueId v) -> const graph::Op* {
    if (uses[static_cast<std::size_t>(v)] != 1) return nullptr;
    const int r = reader[static_cast<std::size_t>(v)];
    if (r < 0 || std::find(taken.begin(), taken.end(), r) != taken.end()) return nullptr;
    return &g.ops[static_cast<std::size_t>(r)];
  };
  auto index = [&](const graph::Op* op) { return static_cast<int>(op - g.ops.data()); };
  std::vector<epilogue> r;
  for (std::size_t p = 0; p < g.ops.size(); ++p) {
    const auto& op = g.ops[p];
    if ((op.type != "MatMulInteger" && op.type != "ConvInteger") || op.outputs.size() != 1 || op.inputs.size() > 4) continue;
    const int axis = channel_axis(g, op);
    if (axis < 0) continue;
    const graph::Op* cast = only_reader(op.outputs[0]);
    if (!cast || cast->type != "Cast" || cast->attr_int("to", 0) != 1 || cast->outputs.size() != 1) continue;
    const Shape y = shape_of(g, cast->outputs[0]);
    const graph::Op* mul = only_reader(cast->outputs[0]);
    if (!mul) continue;
    epilogue e;
    e.producer = static_cast<int>(p);
    e.scale = affine_operand(g, *mul, "Mul", cast->outputs[0], y, axis);
    if (e.scale == graph::no_value) continue;
    e.members = {index(cast), index(mul)};
    e.y = mul->outputs[0];
    if (const graph::Op* add = only_reader(mul->outputs[0])) {
      const graph::ValueId b = affine_operand(g, *add, "Add", mul->outputs[0], y, axis);
      if (b != graph::no_value && g.is_constant(b)) {
        e.bias = b;
        e.members.push_back(index(add));
        e.y = add->outputs[0];
      }
    }
    r.push_back(std::move(e));
  }
  return r;
}

} // namespace

void add_int8_epilogue_rules(rule_table& t) {
  using lower_fn = std::function<void(op_builder&)>;
  // The integer ops' own lowerings, which know the float store.
  std::map<std::string, lower_fn> producers;
  for (const char* type : {"MatMulInteger", "ConvInteger"}) producers[type] = t.at(type).lower;
  for (const char* type : {"MatMulInteger", "ConvInteger"})
    t.at(type).lower = [inner = t.at(type).lower](op_builder& b) {
      if (int index = index_of(b); index >= 0)
        for (const auto& e : find_epilogues(b.graph()))
          if (e.producer == index) return; // lowered with its chain's last op
      inner(b);
    };
  for (const char* type : {"Cast", "Mul", "Add"})
    t.at(type).lower = [inner = t.at(type).lower, producers](op_builder& b) {
      if (int index = index_of(b); index >= 0)
        for (const auto& e : find_epilogues(b.graph())) {
          const auto at = std::find(e.members.begin(), e.members.end(), index);
          if (at == e.members.end()) continue;
          if (index != e.members.back()) return; // in the integer op's store
          // The integer op, with the scale and bias as inputs 4 and 5, writing the chain's last value.
          graph::Op op = b.graph().ops[static_cast<std::size_t>(e.producer)];
          op.inputs.resize(epilogue_bias_input + 1, graph::no_value);
          op.inputs[epilogue_scale_input] = e.scale;
          op.inputs[epilogue_bias_input] = e.bias;
          fused_builder fb(b, std::move(op), e.y);
          return producers.at(fb.op().type)(fb);
        }
      inner(b);
    };
}

} // namespace troupe::kernels::vulkan
