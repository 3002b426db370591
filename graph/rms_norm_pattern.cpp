#include "graph/rms_norm_pattern.hpp"

#include <algorithm>
#include <optional>

#include "graph/pass_utils.hpp"

namespace troupe::graph {

namespace {

using detail::scalar_constant;

class matcher : public detail::pattern_matcher {
public:
  using pattern_matcher::pattern_matcher;

  /// `root_` normalizes: Div(x, s) or Mul(x, Reciprocal(s)) (either order), s = Sqrt(mean + eps).
  std::optional<rms_norm_pattern> match(std::size_t root_index) {
    if (root_.input_count() != 2 || !root_.domain.empty() || root_.has_attr("activation")) return std::nullopt;
    rms_norm_pattern p;
    const Op* sqrt = nullptr;
    if (root_.type == "Div") {
      p.x = root_.inputs[0];
      sqrt = take(root_.inputs[1], "Sqrt");
    } else if (root_.type == "Mul") {
      for (int k = 0; k < 2 && !sqrt; ++k) {
        const ValueId r = root_.inputs[static_cast<std::size_t>(k)];
        if (uses_[static_cast<std::size_t>(r)] != 1 || !producer(r, "Reciprocal")) continue;
        const Op* rec = take(r, "Reciprocal");
        sqrt = take(rec->inputs[0], "Sqrt");
        p.x = root_.inputs[static_cast<std::size_t>(1 - k)];
        if (!sqrt) return std::nullopt;
      }
    }
    if (!sqrt) return std::nullopt;
    const Op* add = take(sqrt->inputs[0], "Add");
    const auto eps = add ? detail::plus_epsilon(g_, *add) : std::nullopt;
    if (!eps) return std::nullopt;
    p.epsilon = eps->first;
    const Op* reduce = take(eps->second, "ReduceMean");
    // Over the last axis alone.
    if (!reduce || detail::trailing_reduced_axes(g_, *reduce) !=
                       static_cast<int64_t>(g_.value(reduce->inputs[0]).shape.rank()) - 1)
      return std::nullopt;
    const ValueId sq = reduce->inputs[0];
    if (const Op* pow = take(sq, "Pow")) {
      if (pow->input_count() != 2 || pow->inputs[0] != p.x || scalar_constant(g_, pow->inputs[1]) != 2.0) return std::nullopt;
    } else if (const Op* mul = take(sq, "Mul")) {
      if (mul->input_count() != 2 || mul->inputs[0] != p.x || mul->inputs[1] != p.x) return std::nullopt;
    } else {
      return std::nullopt;
    }
    if (g_.value(p.x).type != element_type::f32 || !g_.value(p.x).shape.is_static() || g_.is_constant(p.x))
      return std::nullopt;
    p.last = root_index;
    p.y = root_.outputs[0];
    // Times gamma: a constant whose shape, leading 1s aside, is the last axis'.
    if (uses_[static_cast<std::size_t>(p.y)] == 1)
      for (std::size_t k = root_index + 1; k < g_.ops.size(); ++k) {
        const Op& mul = g_.ops[k];
        const int at = mul.input_count() == 2 ? (mul.inputs[0] == p.y ? 0 : mul.inputs[1] == p.y ? 1 : -1) : -1;
        if (at < 0) continue;
        const ValueId c = mul.inputs[static_cast<std::size_t>(1 - at)];
        if (mul.type != "Mul" || !mul.domain.empty() || mul.has_attr("activation") || !detail::same_affinity(mul, root_) ||
            !g_.is_constant(c) || g_.value(c).type != element_type::f32)
          break;
        Shape cs = g_.value(c).constant->get_shape();
        while (!cs.empty() && cs.front() == 1) cs.erase(cs.begin());
        const Shape xs = g_.value(p.x).shape.to_shape();
        if (xs.empty() || cs != Shape{xs.back()} || g_.value(mul.outputs[0]).shape.to_shape() != xs) break;
        p.gamma = c;
        inside_.push_back(p.last);
        p.last = k;
        p.y = mul.outputs[0];
        break;
      }
    return p;
  }

};

} // namespace

std::vector<rms_norm_pattern> find_rms_norm_patterns(const Graph& g) {
  const auto prod = g.producers();
  const auto uses = g.use_counts();
  std::vector<rms_norm_pattern> found;
  std::vector<bool> claimed(g.ops.size(), false);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].type != "Div" && g.ops[i].type != "Mul") continue;
    matcher m(g, g.ops[i], prod, uses);
    auto p = m.match(i);
    if (!p) continue;
    p->members = m.inside();
    p->members.push_back(p->last);
    std::sort(p->members.begin(), p->members.end());
    bool free = std::adjacent_find(p->members.begin(), p->members.end()) == p->members.end();
    for (auto o : p->members) free = free && !claimed[o];
    if (!free) continue;
    for (auto o : p->members) claimed[o] = true;
    found.push_back(std::move(*p));
  }
  return found;
}

} // namespace troupe::graph
