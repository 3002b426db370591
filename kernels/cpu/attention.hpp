#pragma once
/// Scaled dot-product attention (graph/attention_pattern.hpp) as one native step on AVX-512:
/// per batch, head and block of query rows, the scores against every key, the scale and mask,
/// the Softmax and the product with V, without the [.., M, N] scores or probabilities ever
/// leaving the cache, and with the block's Transposes and Reshapes read as strides. oneDNN ran
/// each block as 6-9 steps (two MatMuls, three or four reorders, Softmax, mask Add, Reshape
/// copies): each a primitive per sequence length, so a stream of lengths kept their code and
/// descriptors cold.
#include <set>

#include "graph/attention_pattern.hpp"
#include "kernels/cpu/native_sites.hpp"
#include "kernels/cpu/plan_builder.hpp"

namespace troupe::kernels::cpu {

using attention_sites = native_sites<graph::attention_pattern>;

/// The attention blocks this CPU runs as one step; none of `taken` (ops other sites run).
attention_sites find_attention_sites(const plan_builder& b, const std::set<std::size_t>& taken);

/// At the block's last op: the step, reading q, k, v and the mask where their producers put them.
void build_attention(plan_builder& b, const graph::Op& last, const graph::attention_pattern& a);

/// The step's kernel. in: q, k, v, mask (or empty), keep (bool, or empty); out: y. The op copy
/// carries the geometry (attention_geometry_attr: batch, heads, rows, keys, depth, value depth,
/// then the strides (b, h, i|n, d|e|n) of q, k, v, y, the mask and keep, 0 along broadcast
/// dims, then keep_if) and attention_scale_attr: the scores' factor and the select's fill.
inline constexpr const char* attention_geometry_attr = "troupe_attention_geometry";
inline constexpr const char* attention_scale_attr = "troupe_attention_scale";
void attention_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out);

} // namespace troupe::kernels::cpu
