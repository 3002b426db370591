#include "graph/attention_pattern.hpp"

#include <algorithm>
#include <optional>

namespace troupe::graph {

namespace {

struct graph_facts {
  std::vector<int> producer, sole; ///< per value: Graph::producers(), Graph::sole_readers()
};

graph_facts facts_of(const Graph& g) { return {g.producers(), g.sole_readers()}; }

/// The op reading `v` when it is v's only use (one input slot, no graph output), else -1.
int sole_reader(const graph_facts& f, ValueId v) { return f.sole[static_cast<std::size_t>(v)]; }

bool f32_static(const Graph& g, ValueId v) {
  return v != no_value && g.value(v).type == element_type::f32 && g.value(v).shape.is_static() && !g.value(v).sequence;
}

Shape shape_of(const Graph& g, ValueId v) { return g.value(v).shape.to_shape(); }

std::vector<int64_t> row_major(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

/// A plain op of the default domain with no fused activation.
bool plain(const Op& op, const char* type) { return op.type == type && op.domain.empty() && !op.has_attr("activation"); }

/// A MatMul operand read through the Transpose that makes it (when only `consumer` reads the
/// Transpose) and the Reshape under that Transpose (when only the Transpose reads it): the
/// strides per dim of the operand into the buffer they were made from.
struct operand_view {
  ValueId source = no_value;
  std::vector<int64_t> strides;
  std::vector<std::size_t> members;
};

operand_view view_of(const Graph& g, const graph_facts& f, ValueId x, int consumer) {
  operand_view w{x, row_major(shape_of(g, x)), {}};
  const int t = f.producer[static_cast<std::size_t>(x)];
  if (t < 0 || sole_reader(f, x) != consumer) return w;
  const Op& tr = g.ops[static_cast<std::size_t>(t)];
  if (!plain(tr, "Transpose") || tr.inputs.size() != 1 || !f32_static(g, tr.inputs[0])) return w;
  const Shape in = shape_of(g, tr.inputs[0]);
  std::vector<int64_t> perm = tr.attr_ints("perm");
  if (perm.empty())
    for (std::size_t i = in.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  if (perm.size() != in.size()) return w;
  const auto in_strides = row_major(in);
  for (std::size_t j = 0; j < perm.size(); ++j) w.strides[j] = in_strides[static_cast<std::size_t>(perm[j])];
  w.source = tr.inputs[0];
  w.members.push_back(static_cast<std::size_t>(t));
  // A Reshape's output is its input's bytes: read them where they are.
  const int r = f.producer[static_cast<std::size_t>(tr.inputs[0])];
  if (r >= 0 && sole_reader(f, tr.inputs[0]) == t) {
    const Op& rs = g.ops[static_cast<std::size_t>(r)];
    if (plain(rs, "Reshape") && !rs.inputs.empty() && f32_static(g, rs.inputs[0]) && !g.is_constant(rs.inputs[0])) {
      w.source = rs.inputs[0];
      w.members.push_back(static_cast<std::size_t>(r));
    }
  }
  return w;
}

/// `strides` of a rank-r operand whose dims are `dims` as (b, h, i, j): the leading dims padded
/// to four, a batch dim of 1 where the output's is larger read again (stride 0).
std::array<int64_t, 4> as_four(const std::vector<int64_t>& strides, const Shape& dims) {
  std::array<int64_t, 4> r{};
  const std::size_t pad = 4 - dims.size();
  for (std::size_t i = 0; i < dims.size(); ++i) r[pad + i] = dims[i] == 1 ? 0 : strides[i];
  return r;
}

/// The strides (b, h, i, n) of `m` broadcast against `scores` (rank <= 4): 0 along the dims it
/// repeats; nullopt when it does not broadcast.
std::optional<std::array<int64_t, 4>> broadcast_strides(const Graph& g, ValueId m, const Shape& scores) {
  const Shape ms = shape_of(g, m);
  if (ms.size() > scores.size()) return std::nullopt;
  for (std::size_t i = 0; i < ms.size(); ++i)
    if (ms[i] != 1 && ms[i] != scores[scores.size() - ms.size() + i]) return std::nullopt;
  Shape padded(scores.size() - ms.size(), 1);
  padded.insert(padded.end(), ms.begin(), ms.end());
  std::vector<int64_t> st(scores.size() - ms.size(), 0);
  const auto own = row_major(ms);
  st.insert(st.end(), own.begin(), own.end());
  return as_four(st, padded);
}

std::optional<attention_pattern> match_at(const Graph& g, const graph_facts& f, std::size_t softmax) {
  const Op& sm = g.ops[softmax];
  if (!plain(sm, "Softmax") || sm.inputs.size() != 1 || !f32_static(g, sm.inputs[0])) return std::nullopt;
  const Shape scores = shape_of(g, sm.inputs[0]);
  const auto r = static_cast<int64_t>(scores.size());
  if (r < 2 || r > 4) return std::nullopt;
  int64_t axis = sm.attr_int("axis", g.opset < 13 ? 1 : -1);
  if (axis < 0) axis += r;
  if (axis != r - 1) return std::nullopt;
  attention_pattern a;
  std::vector<std::size_t> members{softmax};
  // Back from the Softmax: [Add(mask)], [Where(keep, ., fill)], [Mul/Div by a scalar], the first MatMul.
  ValueId cur = sm.inputs[0];
  auto producer_of = [&](ValueId v, std::size_t reader) -> int {
    const int p = f.producer[static_cast<std::size_t>(v)];
    return p >= 0 && sole_reader(f, v) == static_cast<int>(reader) ? p : -1;
  };
  int p = producer_of(cur, softmax);
  if (p < 0) return std::nullopt;
  if (const Op& add = g.ops[static_cast<std::size_t>(p)]; plain(add, "Add") && add.inputs.size() == 2) {
    // The scores side is the one made by a select, a scale or the MatMul and read only here.
    int side = -1;
    for (int s = 0; s < 2 && side < 0; ++s) {
      const ValueId x = add.inputs[static_cast<std::size_t>(s)];
      const int q = producer_of(x, static_cast<std::size_t>(p));
      if (q < 0 || !f32_static(g, x) || shape_of(g, x) != scores) continue;
      const Op& qo = g.ops[static_cast<std::size_t>(q)];
      if (plain(qo, "MatMul") || plain(qo, "Where") || scalar_factor(g, qo)) side = s;
    }
    if (side < 0) return std::nullopt;
    const ValueId m = add.inputs[static_cast<std::size_t>(1 - side)];
    if (!f32_static(g, m)) return std::nullopt;
    const auto st = broadcast_strides(g, m, scores);
    if (!st) return std::nullopt;
    a.mask = {m, *st};
    members.push_back(static_cast<std::size_t>(p));
    cur = add.inputs[static_cast<std::size_t>(side)];
    p = producer_of(cur, static_cast<std::size_t>(p));
  }
  // A select before it, Where(keep, scores, fill) or Where(drop, fill, scores), fill a scalar
  // constant: GPT-2's causal mask.
  if (p >= 0) {
    if (const Op& w = g.ops[static_cast<std::size_t>(p)]; plain(w, "Where") && w.inputs.size() == 3) {
      const ValueId cond = w.inputs[0];
      const auto one = [&](ValueId c) {
        return g.is_constant(c) && g.value(c).type == element_type::f32 && g.value(c).constant->get_size() == 1;
      };
      int side = -1;
      for (int s = 1; s <= 2 && side < 0; ++s) {
        const ValueId x = w.inputs[static_cast<std::size_t>(s)], other = w.inputs[static_cast<std::size_t>(3 - s)];
        if (f32_static(g, x) && shape_of(g, x) == scores && one(other) && producer_of(x, static_cast<std::size_t>(p)) >= 0)
          side = s;
      }
      const auto st = g.value(cond).type == element_type::boolean && g.value(cond).shape.is_static()
                          ? broadcast_strides(g, cond, scores)
                          : std::nullopt;
      if (side < 0 || !st) return std::nullopt;
      a.keep = {cond, *st};
      a.keep_if = side == 1;
      a.fill = g.value(w.inputs[static_cast<std::size_t>(3 - side)]).constant->data<float>()[0];
      members.push_back(static_cast<std::size_t>(p));
      cur = w.inputs[static_cast<std::size_t>(side)];
      p = producer_of(cur, static_cast<std::size_t>(p));
    }
  }
  if (p < 0) return std::nullopt;
  if (auto s = scalar_factor(g, g.ops[static_cast<std::size_t>(p)]); s) {
    a.scale = s->first;
    members.push_back(static_cast<std::size_t>(p));
    cur = s->second;
    p = producer_of(cur, static_cast<std::size_t>(p));
    if (p < 0) return std::nullopt;
  }
  const auto mm1_index = static_cast<std::size_t>(p);
  const Op& mm1 = g.ops[mm1_index];
  if (!plain(mm1, "MatMul") || mm1.inputs.size() != 2) return std::nullopt;
  members.push_back(mm1_index);
  // Forward: the second MatMul reads the probabilities as its left operand.
  const int mm2_reader = sole_reader(f, sm.outputs[0]);
  if (mm2_reader < 0) return std::nullopt;
  const auto mm2_index = static_cast<std::size_t>(mm2_reader);
  const Op& mm2 = g.ops[mm2_index];
  if (!plain(mm2, "MatMul") || mm2.inputs.size() != 2 || mm2.inputs[0] != sm.outputs[0]) return std::nullopt;
  members.push_back(mm2_index);
  const ValueId q = mm1.inputs[0], kt = mm1.inputs[1], v = mm2.inputs[1], out = mm2.outputs[0];
  for (ValueId x : {q, kt, v, out})
    if (!f32_static(g, x) || g.is_constant(x)) return std::nullopt;
  const Shape qs = shape_of(g, q), ks = shape_of(g, kt), vs = shape_of(g, v), os = shape_of(g, out);
  if (static_cast<int64_t>(qs.size()) != r || ks.size() != qs.size() || vs.size() != qs.size() || os.size() != qs.size())
    return std::nullopt;
  const std::size_t n = qs.size();
  const int64_t m = qs[n - 2], d = qs[n - 1], keys = ks[n - 1], e = vs[n - 1];
  if (ks[n - 2] != d || vs[n - 2] != keys || os[n - 2] != m || os[n - 1] != e || scores[n - 2] != m || scores[n - 1] != keys)
    return std::nullopt;
  for (std::size_t i = 0; i + 2 < n; ++i) {
    if (os[i] != qs[i] || (ks[i] != qs[i] && ks[i] != 1) || (vs[i] != qs[i] && vs[i] != 1)) return std::nullopt;
  }
  if (m < 1 || d < 1 || keys < 1 || e < 1) return std::nullopt;
  a.rows = m;
  a.depth = d;
  a.keys = keys;
  a.value_depth = e;
  a.batch = n == 4 ? qs[0] : 1;
  a.heads = n >= 3 ? qs[n - 3] : 1;
  const auto qv = view_of(g, f, q, static_cast<int>(mm1_index));
  const auto kv = view_of(g, f, kt, static_cast<int>(mm1_index));
  const auto vv = view_of(g, f, v, static_cast<int>(mm2_index));
  a.q = {qv.source, as_four(qv.strides, qs)};
  a.k = {kv.source, as_four(kv.strides, ks)};
  std::swap(a.k.strides[2], a.k.strides[3]); // K^T's (d, n) read as key rows (n, d)
  a.v = {vv.source, as_four(vv.strides, vs)};
  for (const auto* w : {&qv, &kv, &vv}) members.insert(members.end(), w->members.begin(), w->members.end());
  // The output, through a Transpose and a Reshape that only the block reads.
  std::vector<int64_t> ys = row_major(os);
  ValueId y = out;
  if (const int t = sole_reader(f, out); t >= 0) {
    const Op& tr = g.ops[static_cast<std::size_t>(t)];
    std::vector<int64_t> perm = tr.attr_ints("perm");
    if (plain(tr, "Transpose") && tr.inputs.size() == 1 && perm.size() == n && f32_static(g, tr.outputs[0])) {
      const auto ts = row_major(shape_of(g, tr.outputs[0]));
      for (std::size_t j = 0; j < n; ++j) ys[static_cast<std::size_t>(perm[j])] = ts[j];
      y = tr.outputs[0];
      members.push_back(static_cast<std::size_t>(t));
      if (const int rs = sole_reader(f, y); rs >= 0) {
        const Op& re = g.ops[static_cast<std::size_t>(rs)];
        if (plain(re, "Reshape") && re.inputs[0] == y && f32_static(g, re.outputs[0])) {
          y = re.outputs[0];
          members.push_back(static_cast<std::size_t>(rs));
        }
      }
    }
  }
  a.y = {y, as_four(ys, os)};
  std::sort(members.begin(), members.end());
  if (std::adjacent_find(members.begin(), members.end()) != members.end()) return std::nullopt;
  a.members = std::move(members);
  a.last = a.members.back();
  return a;
}

} // namespace

std::optional<std::pair<float, ValueId>> scalar_factor(const Graph& g, const Op& op) {
  if ((!plain(op, "Mul") && !plain(op, "Div")) || op.inputs.size() != 2) return std::nullopt;
  for (std::size_t ci = 0; ci < 2; ++ci) {
    const ValueId c = op.inputs[ci], x = op.inputs[1 - ci];
    if (op.type == "Div" && ci == 0) continue;
    if (!g.is_constant(c) || g.value(c).type != element_type::f32 || g.value(c).constant->get_size() != 1) continue;
    if (g.is_constant(x) || !f32_static(g, x) || shape_of(g, x) != shape_of(g, op.outputs[0])) continue;
    float s = g.value(c).constant->data<float>()[0];
    if (op.type == "Div") {
      if (s == 0.0f) return std::nullopt;
      s = 1.0f / s;
    }
    return std::make_pair(s, x);
  }
  return std::nullopt;
}

std::vector<attention_pattern> find_attention_patterns(const Graph& g) {
  std::vector<attention_pattern> found;
  const auto f = facts_of(g);
  std::vector<bool> claimed(g.ops.size(), false);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].type != "Softmax") continue;
    auto a = match_at(g, f, i);
    if (!a) continue;
    bool overlap = false;
    for (auto o : a->members) overlap = overlap || claimed[o];
    if (overlap) continue;
    for (auto o : a->members) claimed[o] = true;
    found.push_back(std::move(*a));
  }
  std::sort(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.last < y.last; });
  return found;
}

} // namespace troupe::graph
