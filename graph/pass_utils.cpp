#include "graph/pass_utils.hpp"

#include <algorithm>
#include <limits>

namespace troupe::graph::detail {

std::optional<double> scalar_constant(const Graph& g, ValueId v) {
  if (!g.is_constant(v)) return std::nullopt;
  const Tensor& t = *g.value(v).constant;
  if (t.get_size() != 1) return std::nullopt;
  switch (t.get_element_type()) {
  case element_type::f32: return *t.data<float>();
  case element_type::f64: return *t.data<double>();
  case element_type::i64: return static_cast<double>(*t.data<int64_t>());
  case element_type::i32: return *t.data<int32_t>();
  default: return std::nullopt;
  }
}

std::optional<std::pair<float, ValueId>> plus_epsilon(const Graph& g, const Op& add) {
  if (add.input_count() != 2) return std::nullopt;
  for (std::size_t k = 0; k < 2; ++k)
    if (auto eps = scalar_constant(g, add.inputs[k]); eps && *eps >= 0)
      return std::pair{static_cast<float>(*eps), add.inputs[1 - k]};
  return std::nullopt;
}

std::optional<int64_t> trailing_reduced_axes(const Graph& g, const Op& mean) {
  if (mean.attr_int("keepdims", 1) != 1 || !g.value(mean.inputs[0]).shape.rank_known) return std::nullopt;
  std::vector<int64_t> axes;
  if (mean.has_attr("axes")) axes = mean.attr_ints("axes");
  else if (mean.input_count() > 1 && g.is_constant(mean.inputs[1])) {
    const Tensor& t = *g.value(mean.inputs[1]).constant;
    if (t.get_element_type() != element_type::i64) return std::nullopt;
    axes.assign(t.data<int64_t>(), t.data<int64_t>() + t.get_size());
  }
  const int64_t r = static_cast<int64_t>(g.value(mean.inputs[0]).shape.rank());
  if (axes.empty() || r == 0) return std::nullopt;
  for (auto& a : axes) a = a < 0 ? a + r : a;
  std::sort(axes.begin(), axes.end());
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != r - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i)) return std::nullopt;
  return axes.front();
}

std::optional<std::pair<float, float>> clip_bounds(const Graph& g, const Op& clip) {
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (g.opset < 11) return std::pair{clip.attr_float("min", lo), clip.attr_float("max", hi)};
  for (std::size_t i = 1; i < 3; ++i) {
    if (i >= clip.inputs.size() || clip.inputs[i] == no_value) continue;
    auto v = scalar_constant(g, clip.inputs[i]);
    if (!v) return std::nullopt;
    (i == 1 ? lo : hi) = static_cast<float>(*v);
  }
  return std::pair{lo, hi};
}

std::string affinity_of(const Op& op) {
  auto it = op.rt_info.find("affinity");
  return it == op.rt_info.end() ? std::string() : it->second;
}

bool same_affinity(const Op& a, const Op& b) { return affinity_of(a) == affinity_of(b); }

void absorb(Op& into, const Op& gone) {
  std::string& list = into.rt_info["fused_from"];
  list += (list.empty() ? "" : ",") + gone.name;
  if (auto it = gone.rt_info.find("fused_from"); it != gone.rt_info.end() && !it->second.empty())
    list += "," + it->second;
}

void remove_ops(Graph& g, const std::vector<bool>& removed) {
  std::vector<Op> kept;
  kept.reserve(g.ops.size());
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(g.ops[i]));
  g.ops = std::move(kept);
  g.prune();
}

int64_t output_channels(const Op& conv, const Shape& ws) {
  const int64_t group = conv.attr_int("group", 1);
  if (ws.size() < 3 || group < 1 || ws[0] % group != 0) return 0;
  return conv.type == "ConvTranspose" ? ws[1] * group : ws[0];
}

Tensor scale_output_channels(const Op& conv, const Tensor& w, const std::vector<float>& s) {
  const Shape& ws = w.get_shape();
  const bool transposed = conv.type == "ConvTranspose";
  const int64_t group = conv.attr_int("group", 1);
  Tensor nw(element_type::f32, ws);
  const float* src = w.data<float>();
  float* dst = nw.data<float>();
  int64_t inner = 1; // elements per (dim0, dim1) pair
  for (std::size_t i = 2; i < ws.size(); ++i) inner *= ws[i];
  for (int64_t a = 0; a < ws[0]; ++a)
    for (int64_t b = 0; b < ws[1]; ++b) {
      // Conv: W[Cout, Cin/g, ...]; ConvTranspose: W[Cin, Cout/g, ...], out channel = group * Cout/g + b.
      const int64_t oc = transposed ? (a / (ws[0] / group)) * ws[1] + b : a;
      const float f = s[static_cast<std::size_t>(oc)];
      const int64_t off = (a * ws[1] + b) * inner;
      for (int64_t k = 0; k < inner; ++k) dst[off + k] = src[off + k] * f;
    }
  return nw;
}

bool is_float_or_unknown(element_type t) {
  return t == element_type::undefined || t == element_type::f32 || t == element_type::f16 ||
         t == element_type::bf16 || t == element_type::f64;
}

std::vector<float> per_channel(const Graph& g, ValueId c, std::size_t rank, int64_t channels) {
  if (!g.is_constant(c)) return {};
  const Tensor& t = *g.value(c).constant;
  if (t.get_element_type() != element_type::f32) return {};
  const Shape& s = t.get_shape();
  if (s.size() > rank) return {};
  bool along_channels = false;
  for (std::size_t j = 0; j < s.size(); ++j) {
    std::size_t out_dim = j + (rank - s.size());
    if (s[j] == 1) continue;
    if (out_dim != 1 || s[j] != channels) return {};
    along_channels = true;
  }
  std::vector<float> v(static_cast<std::size_t>(channels));
  for (int64_t k = 0; k < channels; ++k) v[static_cast<std::size_t>(k)] = t.data<float>()[along_channels ? k : 0];
  return v;
}

const Op* pattern_matcher::producer(ValueId v, const char* type) const {
  if (v == no_value) return nullptr;
  const int p = prod_[static_cast<std::size_t>(v)];
  if (p < 0) return nullptr;
  const Op& op = g_.ops[static_cast<std::size_t>(p)];
  if (op.type != type || !op.domain.empty() || op.outputs.size() != 1 || !same_affinity(op, root_)) return nullptr;
  return &op;
}

const Op* pattern_matcher::take(ValueId v, const char* type) {
  if (v == no_value || uses_[static_cast<std::size_t>(v)] != 1) return nullptr;
  const Op* op = producer(v, type);
  if (op) inside_.push_back(static_cast<std::size_t>(prod_[static_cast<std::size_t>(v)]));
  return op;
}

} // namespace troupe::graph::detail
