#pragma once
/// RMS normalization (graph/rms_norm_pattern.hpp) as one native step on AVX-512: per row of the
/// last axis, the mean square, then x / sqrt(mean + eps) [* gamma] in a second pass over the
/// row while it is in the cache. oneDNN ran the spelled-out form as five or six steps (Pow,
/// ReduceMean, Add, Sqrt, Div, Mul), each a primitive per sequence length.
#include <set>

#include "graph/rms_norm_pattern.hpp"
#include "kernels/cpu/native_sites.hpp"
#include "kernels/cpu/plan_builder.hpp"

namespace troupe::kernels::cpu {

using rms_norm_sites = native_sites<graph::rms_norm_pattern>;

/// The patterns this CPU runs as one step; none of `taken` (ops other sites run).
rms_norm_sites find_rms_norm_sites(const plan_builder& b, const std::set<std::size_t>& taken);

/// At the pattern's last op: the step. Its kernel: in x, gamma (or empty); out y; attribute
/// rms_norm_epsilon_attr.
void build_rms_norm(plan_builder& b, const graph::Op& last, const graph::rms_norm_pattern& p);

inline constexpr const char* rms_norm_epsilon_attr = "troupe_rms_norm_epsilon";
void rms_norm_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out);

} // namespace troupe::kernels::cpu
