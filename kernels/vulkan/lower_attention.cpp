/// Attention as one dispatch (shaders/attention.comp): MatMul(q, K^T) -> [Mul/Div by a scalar]
/// -> Softmax(last axis) -> MatMul(., V), with an optional scalar Mul/Div on q and an optional
/// Transpose of K (last two axes swapped) folded in, when every intermediate value has exactly
/// one reader (the next op of the block) and is no graph output. On lavapipe an empty dispatch
/// costs ~50 us, more than PP-OCR rec's whole q x K^T (384 KFLOP); fusing saves 2-4 dispatches.
/// The fused dispatch is recorded on the head MatMul (or on the last MatMul when V is produced
/// after the head); the other ops of the block report optimized_out.
#include <algorithm>
#include <cstdlib>
#include <optional>

#include "graph/attention_pattern.hpp"
#include "kernels/vulkan/lowering.hpp"

namespace troupe::kernels::vulkan {

namespace {

/// Beyond these the per-invocation score/accumulator arrays get too large to be sensible.
constexpr int64_t max_keys = 1024;
constexpr int64_t max_depth = 256;

struct attention_block {
  std::vector<int> members; ///< op indices, head first
  int emit = -1;            ///< the op whose lowering records the dispatch
  graph::ValueId q = graph::no_value, k = graph::no_value, v = graph::no_value, y = graph::no_value;
  bool k_rows = false; ///< K given as [.., N, D] (a folded Transpose), else K^T as [.., D, N]
  float scale = 1.0f;
  uint32_t batch = 1, m = 1, n = 1, d = 1, dv = 1;
};

struct graph_facts {
  std::vector<int> producer, sole; ///< per value: Graph::producers(), Graph::sole_readers()
};

graph_facts facts_of(const graph::Graph& g) { return {g.producers(), g.sole_readers()}; }

/// The op reading `v` when it is v's only use (one input slot, no graph output), else -1.
int sole_reader(const graph_facts& f, graph::ValueId v) { return f.sole[static_cast<std::size_t>(v)]; }

bool is_f32(const graph::Graph& g, graph::ValueId v) { return v != graph::no_value && g.value(v).type == element_type::f32; }

bool plain_matmul(const graph::Graph& g, const graph::Op& op) {
  return op.type == "MatMul" && op.input_count() == 2 && !op.has_attr("activation") && is_f32(g, op.inputs[0]) &&
         is_f32(g, op.inputs[1]);
}

/// The block whose head is the MatMul at `head`, if the pattern and every condition hold.
std::optional<attention_block> match_at(const graph::Graph& g, const graph_facts& f, int head) {
  const auto& mm1 = g.ops[static_cast<std::size_t>(head)];
  if (!plain_matmul(g, mm1)) return std::nullopt;
  attention_block blk;
  blk.members.push_back(head);
  blk.q = mm1.inputs[0];
  graph::ValueId kt = mm1.inputs[1];
  // A scalar Mul/Div on q and a Transpose of K, each read only by the head.
  if (int p = f.producer[static_cast<std::size_t>(blk.q)]; p >= 0 && sole_reader(f, blk.q) == head) {
    if (auto s = graph::scalar_factor(g, g.ops[static_cast<std::size_t>(p)])) {
      blk.scale *= s->first;
      blk.q = s->second;
      blk.members.push_back(p);
    }
  }
  Shape qs = shape_of(g, blk.q), kts = shape_of(g, kt);
  const std::size_t r = qs.size();
  if (r < 2 || kts.size() != r) return std::nullopt;
  blk.k = kt;
  if (int p = f.producer[static_cast<std::size_t>(kt)]; p >= 0 && sole_reader(f, kt) == head) {
    const auto& t = g.ops[static_cast<std::size_t>(p)];
    if (t.type == "Transpose" && t.input_count() == 1 && is_f32(g, t.inputs[0])) {
      std::vector<int64_t> want(r);
      for (std::size_t i = 0; i < r; ++i) want[i] = static_cast<int64_t>(i);
      std::swap(want[r - 2], want[r - 1]);
      if (t.attr_ints("perm") == want) {
        blk.k = t.inputs[0];
        blk.k_rows = true;
        blk.members.push_back(p);
      }
    }
  }
  // Scores -> [scale] -> Softmax over the last axis -> the second MatMul's left operand.
  graph::ValueId cur = mm1.outputs[0];
  int next = sole_reader(f, cur);
  if (next < 0) return std::nullopt;
  if (auto s = graph::scalar_factor(g, g.ops[static_cast<std::size_t>(next)]); s && s->second == cur) {
    blk.scale *= s->first;
    blk.members.push_back(next);
    cur = g.ops[static_cast<std::size_t>(next)].outputs[0];
    next = sole_reader(f, cur);
    if (next < 0) return std::nullopt;
  }
  const auto& sm = g.ops[static_cast<std::size_t>(next)];
  if (sm.type != "Softmax" || sm.inputs[0] != cur || sm.has_attr("activation")) return std::nullopt;
  int64_t axis = sm.attr_int("axis", g.opset < 13 ? 1 : -1);
  if (axis < 0) axis += static_cast<int64_t>(r);
  if (axis != static_cast<int64_t>(r) - 1) return std::nullopt;
  blk.members.push_back(next);
  cur = sm.outputs[0];
  next = sole_reader(f, cur);
  if (next < 0) return std::nullopt;
  const auto& mm2 = g.ops[static_cast<std::size_t>(next)];
  if (!plain_matmul(g, mm2) || mm2.inputs[0] != cur) return std::nullopt;
  blk.members.push_back(next);
  blk.v = mm2.inputs[1];
  blk.y = mm2.outputs[0];
  // Shapes: q [B.., M, D], K^T [B.., D, N], V [B.., N, DV], the same batch dims everywhere.
  Shape vs = shape_of(g, blk.v), ys = shape_of(g, blk.y);
  if (vs.size() != r || ys.size() != r) return std::nullopt;
  for (std::size_t i = 0; i + 2 < r; ++i) {
    if (kts[i] != qs[i] || vs[i] != qs[i] || ys[i] != qs[i]) return std::nullopt;
    blk.batch *= static_cast<uint32_t>(qs[i]);
  }
  int64_t m = qs[r - 2], d = qs[r - 1], n = kts[r - 1], dv = vs[r - 1];
  if (kts[r - 2] != d || vs[r - 2] != n || ys[r - 2] != m || ys[r - 1] != dv) return std::nullopt;
  if (m < 1 || n < 1 || d < 1 || dv < 1 || n > max_keys || d > max_depth || dv > max_depth) return std::nullopt;
  blk.m = static_cast<uint32_t>(m);
  blk.n = static_cast<uint32_t>(n);
  blk.d = static_cast<uint32_t>(d);
  blk.dv = static_cast<uint32_t>(dv);
  // Record where every input is ready: at the head unless V comes later.
  blk.emit = f.producer[static_cast<std::size_t>(blk.v)] < head ? head : next;
  return blk;
}

/// Every fusable block, claimed greedily in graph order (an op belongs to one block at most).
std::vector<attention_block> find_blocks(const graph::Graph& g) {
  std::vector<attention_block> r;
  auto f = facts_of(g);
  std::vector<bool> claimed(g.ops.size(), false);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (claimed[i] || g.ops[i].type != "MatMul") continue;
    auto blk = match_at(g, f, static_cast<int>(i));
    if (!blk) continue;
    bool overlap = false;
    for (int o : blk->members) overlap = overlap || claimed[static_cast<std::size_t>(o)];
    if (overlap) continue;
    for (int o : blk->members) claimed[static_cast<std::size_t>(o)] = true;
    r.push_back(std::move(*blk));
  }
  return r;
}

buffer_ref value_or_constant(op_builder& b, graph::ValueId v) {
  const auto& g = b.graph();
  if (!g.is_constant(v)) return {buffer_ref::kind::value, v};
  const Tensor& t = *g.value(v).constant;
  return b.constant(std::vector<float>(t.data<float>(), t.data<float>() + t.get_size()));
}

void emit(op_builder& b, const attention_block& blk) {
  spec_map s;
  s[0] = blk.batch;
  s[1] = blk.m;
  s[2] = blk.n;
  s[3] = blk.d;
  s[4] = blk.dv;
  s[5] = blk.k_rows ? 1 : blk.n; // K^T element (d, n)
  s[6] = blk.k_rows ? blk.d : 1;
  s[7] = float_bits(blk.scale);
  // 4 rows per invocation: each K/V texel load serves 4 rows (lavapipe, rec 8x40x15: ~0.2 ms
  // with 1 row, ~0.15 ms with 4; 8 rows leave one workgroup for the whole block).
  const uint32_t rows = std::min<uint32_t>(4, blk.m);
  s[8] = rows;
  b.dispatch("attention", std::move(s),
             {texels(value_or_constant(b, blk.q), 1), texels(value_or_constant(b, blk.k), 1),
              texels(value_or_constant(b, blk.v), 1), texels(buffer_ref{buffer_ref::kind::value, blk.y}, 1)},
             uint64_t(blk.batch) * ((blk.m + rows - 1) / rows));
}

/// For A/B timing in one build: TROUPE_VULKAN_NO_ATTENTION_FUSION=1 keeps one dispatch per op.
bool attention_fusion_off() {
  const char* off = std::getenv("TROUPE_VULKAN_NO_ATTENTION_FUSION");
  return off && *off && *off != '0';
}

} // namespace

std::vector<int> attention_members(const graph::Graph& g) {
  std::vector<int> r;
  if (attention_fusion_off()) return r;
  for (const auto& blk : find_blocks(g)) r.insert(r.end(), blk.members.begin(), blk.members.end());
  return r;
}

void add_attention_rules(rule_table& t) {
  if (attention_fusion_off()) return;
  for (const char* type : {"MatMul", "Softmax", "Mul", "Div", "Transpose"}) {
    auto it = t.find(type);
    if (it == t.end()) continue;
    it->second.lower = [inner = it->second.lower](op_builder& b) {
      const auto& g = b.graph();
      const auto at = &b.op() - g.ops.data();
      if (at < 0 || at >= static_cast<std::ptrdiff_t>(g.ops.size())) return inner(b);
      const auto index = static_cast<int>(at);
      for (const auto& blk : find_blocks(g)) {
        if (std::find(blk.members.begin(), blk.members.end(), index) == blk.members.end()) continue;
        if (blk.emit == index) emit(b, blk);
        return; // a member of a fused block: no dispatch of its own
      }
      inner(b);
    };
  }
}

} // namespace troupe::kernels::vulkan
