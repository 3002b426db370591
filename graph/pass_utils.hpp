#pragma once
/// Internal to graph/: small helpers the rewrite passes share.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph::detail {

/// The value of a one-element numeric constant, or nullopt.
std::optional<double> scalar_constant(const Graph& g, ValueId v);

/// x + eps with eps a one-element constant >= 0 (either operand order), as normalizations add
/// it to the variance or mean square: eps and x.
std::optional<std::pair<float, ValueId>> plus_epsilon(const Graph& g, const Op& add);

/// The first of the reduced axes when a ReduceMean (keepdims 1, axes by attribute or constant
/// i64 input) reduces exactly the trailing axes of an input of known rank; nullopt otherwise.
std::optional<int64_t> trailing_reduced_axes(const Graph& g, const Op& mean);

/// Clip's (min, max) from attributes (opset < 11) or constant inputs; nullopt when an input
/// bound is computed at run time. Missing bounds are the float limits.
std::optional<std::pair<float, float>> clip_bounds(const Graph& g, const Op& clip);

/// The op's rt_info "affinity" (the device it is pinned to), or "" when it has none.
std::string affinity_of(const Op& op);

/// Whether `a` and `b` may become one op: the same `affinity` runtime info (or none on both),
/// so that no pass moves work to another device than the one the application chose.
bool same_affinity(const Op& a, const Op& b);

/// `into` takes over `gone`'s work: its runtime info "fused_from" lists `gone` (and what
/// `gone` had absorbed), so query_model can say where each original op went.
void absorb(Op& into, const Op& gone);

/// Drops the ops marked in `removed` (keeping order), then prunes unreferenced values.
void remove_ops(Graph& g, const std::vector<bool>& removed);

/// Per-channel values of constant `c` (f32) broadcast against a tensor of rank `rank` whose
/// dimension 1 has `channels` channels: a scalar or a [channels, 1, ...] shape; empty when c
/// varies along another dimension or would widen the tensor.
std::vector<float> per_channel(const Graph& g, ValueId c, std::size_t rank, int64_t channels);

/// Output channels of a Conv (W[Cout, Cin/g, ...]) or ConvTranspose (W[Cin, Cout/g, ...])
/// with weights of shape `ws`; 0 when the shape or the group does not fit.
int64_t output_channels(const Op& conv, const Shape& ws);

/// The weights `w` of a Conv or ConvTranspose with every output channel c multiplied by s[c]:
/// folding a per-channel scale after the op into it.
Tensor scale_output_channels(const Op& conv, const Tensor& w, const std::vector<float>& s);

/// True for element types an activation can run on (or not yet inferred).
bool is_float_or_unknown(element_type t);

/// What the pattern fusions (GELU, LayerNorm) share: walking from a root op up through the
/// producers of its inputs, collecting the ops a match replaces.
class pattern_matcher {
public:
  /// `prod` and `uses`: the graph's producers() and use_counts() (graph outputs count as uses).
  pattern_matcher(const Graph& g, const Op& root, const std::vector<int>& prod, const std::vector<int>& uses)
      : g_(g), root_(root), prod_(prod), uses_(uses) {}
  /// The ops (indices) the match replaces, the root excluded.
  const std::vector<std::size_t>& inside() const { return inside_; }

protected:
  const Graph& g_;
  const Op& root_;
  const std::vector<int>& prod_;
  const std::vector<int>& uses_;
  std::vector<std::size_t> inside_;

  /// The producer of `v` when it is a `type` op (default domain, one output) of the root's
  /// affinity; null otherwise.
  const Op* producer(ValueId v, const char* type) const;
  /// As producer(), and nothing else reads `v`: the op is marked as replaced.
  const Op* take(ValueId v, const char* type);
};

} // namespace troupe::graph::detail
