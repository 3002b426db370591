/// fuse_gelu: GELU as exporters spell it in elementary ops becomes one Gelu op (ONNX's, opset
/// 20), which every device runs in one pass (the CPU on oneDNN's gelu eltwise, fused into the
/// MatMul before it as a post-op).
#include <cmath>

#include "graph/pass_utils.hpp"
#include "graph/passes.hpp"

namespace troupe::graph {

namespace {

using detail::scalar_constant;


bool near(std::optional<double> v, double want) { return v && std::abs(*v - want) <= 1e-4 * std::abs(want); }

class matcher : public detail::pattern_matcher {
public:
  using pattern_matcher::pattern_matcher;

  /// The root Mul as x * 0.5 * (1 + Erf(x / sqrt 2)) or x * 0.5 * (1 + Tanh(sqrt(2 / pi) * (x +
  /// 0.044715 x^3))), its factors in any order and grouping: x and the approximation ("none",
  /// "tanh"); `inside` then lists the ops it replaces (the root excluded).
  std::optional<std::pair<ValueId, std::string>> match() {
    std::vector<ValueId> f;
    factors(root_, f);
    std::optional<ValueId> half_of;
    std::vector<ValueId> rest;
    for (ValueId v : f) {
      if (near(scalar_constant(g_, v), 0.5) && !half_of) half_of = v;
      else rest.push_back(v);
    }
    if (!half_of || rest.size() != 2) return std::nullopt;
    for (int k = 0; k < 2; ++k) {
      const ValueId x = rest[static_cast<std::size_t>(k)], sum = rest[static_cast<std::size_t>(1 - k)];
      const std::size_t mark = inside_.size();
      if (auto kind = one_plus_approximation(sum, x)) return std::make_pair(x, *kind);
      inside_.resize(mark);
    }
    return std::nullopt;
  }

private:
  /// The factors of a product: through Muls that only it reads.
  void factors(const Op& mul, std::vector<ValueId>& out) {
    if (mul.input_count() != 2) return out.push_back(no_value);
    for (ValueId v : mul.inputs) {
      const std::size_t mark = inside_.size();
      if (const Op* m = take(v, "Mul")) factors(*m, out);
      else {
        inside_.resize(mark);
        out.push_back(v);
      }
    }
  }

  /// `sum` = Add(1, Erf(x / sqrt 2)) or Add(1, Tanh(...)); the approximation's name.
  std::optional<std::string> one_plus_approximation(ValueId sum, ValueId x) {
    const Op* add = take(sum, "Add");
    if (!add || add->input_count() != 2) return std::nullopt;
    for (int k = 0; k < 2; ++k) {
      if (!near(scalar_constant(g_, add->inputs[static_cast<std::size_t>(k)]), 1.0)) continue;
      const ValueId e = add->inputs[static_cast<std::size_t>(1 - k)];
      const std::size_t mark = inside_.size();
      if (const Op* erf = take(e, "Erf"); erf && scaled(erf->inputs[0], x, 1 / std::sqrt(2.0))) return "none";
      inside_.resize(mark);
      if (const Op* th = take(e, "Tanh"); th && tanh_argument(th->inputs[0], x)) return "tanh";
      inside_.resize(mark);
    }
    return std::nullopt;
  }

  /// `v` = x * c, c * x or x / (1 / c).
  bool scaled(ValueId v, ValueId x, double c) {
    if (const Op* div = take(v, "Div"))
      return div->input_count() == 2 && div->inputs[0] == x && near(scalar_constant(g_, div->inputs[1]), 1 / c);
    if (const Op* mul = take(v, "Mul"))
      return mul->input_count() == 2 && ((mul->inputs[0] == x && near(scalar_constant(g_, mul->inputs[1]), c)) ||
                                         (mul->inputs[1] == x && near(scalar_constant(g_, mul->inputs[0]), c)));
    return false;
  }

  /// sqrt(2 / pi) * (x + 0.044715 * x^3), x^3 as Pow(x, 3) or x * x * x, the constants' products
  /// in any grouping.
  bool tanh_argument(ValueId v, ValueId x) {
    const Op* outer = take(v, "Mul");
    if (!outer) return false;
    std::vector<ValueId> f;
    factors(*outer, f);
    if (f.size() != 2) return false;
    for (int k = 0; k < 2; ++k) {
      if (!near(scalar_constant(g_, f[static_cast<std::size_t>(k)]), std::sqrt(2 / M_PI))) continue;
      const Op* add = take(f[static_cast<std::size_t>(1 - k)], "Add");
      if (!add || add->input_count() != 2) return false;
      for (int j = 0; j < 2; ++j)
        if (add->inputs[static_cast<std::size_t>(j)] == x) return cubic_term(add->inputs[static_cast<std::size_t>(1 - j)], x);
      return false;
    }
    return false;
  }

  /// 0.044715 * x^3.
  bool cubic_term(ValueId v, ValueId x) {
    const Op* mul = take(v, "Mul");
    if (!mul) return false;
    std::vector<ValueId> f;
    factors(*mul, f);
    int xs = 0, cubes = 0, coefficient = 0;
    for (ValueId u : f) {
      if (u == x) ++xs;
      else if (near(scalar_constant(g_, u), 0.044715)) ++coefficient;
      else if (const Op* pow = take(u, "Pow"); pow && pow->input_count() == 2 && pow->inputs[0] == x &&
                                                near(scalar_constant(g_, pow->inputs[1]), 3.0))
        ++cubes;
      else return false;
    }
    return coefficient == 1 && ((xs == 3 && cubes == 0) || (xs == 0 && cubes == 1));
  }
};

} // namespace

void fuse_gelu(Graph& g) {
  // Computed once: a match marks its ops removed, and later matches skip those.
  const auto prod = g.producers();
  const auto uses = g.use_counts();
  std::vector<bool> removed(g.ops.size(), false);
  bool any = false;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    Op& op = g.ops[i];
    if (removed[i] || op.type != "Mul" || !op.domain.empty() || op.outputs.size() != 1) continue;
    matcher m(g, op, prod, uses);
    auto found = m.match();
    if (!found || !detail::is_float_or_unknown(g.value(found->first).type)) continue;
    bool free = true; // none already taken by an earlier match
    for (std::size_t k : m.inside()) free = free && !removed[k] && k != i;
    if (!free) continue;
    for (std::size_t k : m.inside()) {
      removed[k] = true;
      detail::absorb(op, g.ops[k]);
    }
    op.type = "Gelu";
    op.inputs = {found->first};
    op.attrs.clear();
    op.attrs["approximate"] = found->second;
    any = true;
  }
  if (any) detail::remove_ops(g, removed);
}

} // namespace troupe::graph
