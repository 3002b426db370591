/// fuse_layer_norm: layer normalization as exporters spell it before opset 17 (ReduceMean,
/// Sub, Pow, ReduceMean, Add, Sqrt, Div [, Mul(gamma) [, Add(beta)]]) becomes one
/// LayerNormalization, which every device runs in one pass over each row.
#include <algorithm>

#include "graph/pass_utils.hpp"
#include "graph/passes.hpp"

namespace troupe::graph {

namespace {

using detail::scalar_constant;

std::size_t idx(ValueId v) { return static_cast<std::size_t>(v); }

class matcher : public detail::pattern_matcher {
public:
  using pattern_matcher::pattern_matcher;

  struct found {
    ValueId x = no_value, gamma = no_value, beta = no_value;
    int64_t axis = 0;
    float epsilon = 0;
    std::size_t last = 0; ///< the op whose output the LayerNormalization writes
  };

  /// `root_` is the Div (d / sqrt(var + eps)); then the Mul by gamma and Add of beta that
  /// follow it, when they do.
  std::optional<found> match(std::size_t root_index) {
    if (root_.type != "Div" || root_.input_count() != 2) return std::nullopt;
    found f;
    const ValueId d = root_.inputs[0];
    const Op* sqrt = take(root_.inputs[1], "Sqrt");
    const Op* add = sqrt ? take(sqrt->inputs[0], "Add") : nullptr;
    const auto eps = add ? detail::plus_epsilon(g_, *add) : std::nullopt;
    if (!eps) return std::nullopt;
    f.epsilon = eps->first;
    const Op* mean_sq = take(eps->second, "ReduceMean");
    if (!mean_sq) return std::nullopt;
    // d = x - mean(x), read by the square and the Div alone.
    const Op* sub = producer(d, "Sub");
    if (!sub || sub->input_count() != 2) return std::nullopt;
    f.x = sub->inputs[0];
    const Op* mean = take(sub->inputs[1], "ReduceMean");
    if (!mean || mean->inputs[0] != f.x || !squares(mean_sq->inputs[0], d)) return std::nullopt;
    const std::size_t d_readers = static_cast<std::size_t>(uses_[idx(d)]);
    if (d_readers != (square_is_mul_ ? 3u : 2u)) return std::nullopt;
    inside_.push_back(static_cast<std::size_t>(prod_[idx(d)]));
    const auto axes = detail::trailing_reduced_axes(g_, *mean), axes_sq = detail::trailing_reduced_axes(g_, *mean_sq);
    if (!axes || axes != axes_sq) return std::nullopt;
    f.axis = *axes;
    // Optionally * gamma, then + beta: constants over exactly the normalized dims.
    f.last = root_index;
    ValueId y = root_.outputs[0];
    if (auto [op, c] = affine_after(y, "Mul", f.axis); op) {
      f.gamma = c;
      inside_.push_back(f.last);
      f.last = *op;
      y = g_.ops[*op].outputs[0];
      if (auto [op2, c2] = affine_after(y, "Add", f.axis); op2) {
        f.beta = c2;
        inside_.push_back(f.last);
        f.last = *op2;
      }
    }
    return f;
  }

private:
  bool square_is_mul_ = false;

  /// `v` = Pow(d, 2) or Mul(d, d).
  bool squares(ValueId v, ValueId d) {
    if (const Op* pow = take(v, "Pow"))
      return pow->input_count() == 2 && pow->inputs[0] == d && scalar_constant(g_, pow->inputs[1]) == 2.0;
    if (const Op* mul = take(v, "Mul")) {
      square_is_mul_ = true;
      return mul->input_count() == 2 && mul->inputs[0] == d && mul->inputs[1] == d;
    }
    return false;
  }

  /// The sole reader of `y` when it is a `type` op of `y` and a constant whose shape, leading
  /// 1s aside, is the normalized dims'; its op index and the constant.
  std::pair<std::optional<std::size_t>, ValueId> affine_after(ValueId y, const char* type, int64_t axis) const {
    if (uses_[idx(y)] != 1) return {std::nullopt, no_value};
    for (std::size_t k = 0; k < g_.ops.size(); ++k) {
      const Op& op = g_.ops[k];
      if (op.type != type || !op.domain.empty() || op.input_count() != 2 || op.outputs.size() != 1) continue;
      const int at = op.inputs[0] == y ? 0 : op.inputs[1] == y ? 1 : -1;
      if (at < 0) continue;
      if (!detail::same_affinity(op, root_)) break;
      const ValueId c = op.inputs[static_cast<std::size_t>(1 - at)];
      if (!g_.is_constant(c) || g_.value(c).type != element_type::f32) break;
      Shape cs = g_.value(c).constant->get_shape();
      while (!cs.empty() && cs.front() == 1) cs.erase(cs.begin());
      const PartialShape& ys = g_.value(y).shape;
      if (!ys.is_static()) break;
      const Shape yd = ys.to_shape();
      if (cs != Shape(yd.begin() + axis, yd.end())) break;
      return {k, c};
    }
    return {std::nullopt, no_value};
  }
};

} // namespace

void fuse_layer_norm(Graph& g) {
  const auto prod = g.producers();
  const auto uses = g.use_counts();
  std::vector<bool> removed(g.ops.size(), false);
  std::vector<Op> fused;
  bool any = false;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (removed[i] || g.ops[i].type != "Div" || !g.ops[i].domain.empty()) continue;
    matcher m(g, g.ops[i], prod, uses);
    auto f = m.match(i);
    if (!f || !g.value(f->x).shape.is_static() || g.value(f->x).type != element_type::f32) continue;
    bool free = !removed[f->last];
    for (std::size_t k : m.inside()) free = free && !removed[k];
    if (!free) continue;
    Op& last = g.ops[f->last];
    for (std::size_t k : m.inside()) {
      removed[k] = true;
      detail::absorb(last, g.ops[k]);
    }
    if (f->gamma == no_value) { // LayerNormalization's scale is not optional
      const Shape xs = g.value(f->x).shape.to_shape();
      Tensor ones(element_type::f32, Shape(xs.begin() + f->axis, xs.end()));
      std::fill(ones.data<float>(), ones.data<float>() + ones.get_size(), 1.f);
      f->gamma = g.add_constant(last.name + "/scale", std::move(ones));
    }
    last.type = "LayerNormalization";
    last.inputs = {f->x, f->gamma};
    if (f->beta != no_value) last.inputs.push_back(f->beta);
    last.attrs.clear();
    last.attrs["axis"] = f->axis;
    last.attrs["epsilon"] = f->epsilon;
    any = true;
  }
  if (any) detail::remove_ops(g, removed);
}

} // namespace troupe::graph
