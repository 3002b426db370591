/// Finding and building the CPU's attention steps (attention.hpp).
#include "kernels/cpu/attention.hpp"

#include "kernels/cpu/native_ops.hpp"

namespace troupe::kernels::cpu {

attention_sites find_attention_sites(const plan_builder& b, const std::set<std::size_t>& taken) {
  if (!native_avx512_available()) return {};
  return claim_sites(graph::find_attention_patterns(b.g), taken);
}

void build_attention(plan_builder& b, const graph::Op& last, const graph::attention_pattern& a) {
  std::vector<int> ins{b.input_plain(a.q.source), b.input_plain(a.k.source), b.input_plain(a.v.source),
                       a.mask.source == graph::no_value ? -1 : b.input_plain(a.mask.source),
                       a.keep.source == graph::no_value ? -1 : b.input_plain(a.keep.source)};
  const int out = b.output(a.y.source, b.plain(a.y.source));
  graph::Op copy = last;
  copy.inputs.clear(); // the step's operands are `ins`, not the op's
  copy.type = "ScaledDotProductAttention";
  std::vector<int64_t> geo{a.batch, a.heads, a.rows, a.keys, a.depth, a.value_depth};
  for (const auto* o : {&a.q, &a.k, &a.v, &a.y, &a.mask, &a.keep}) geo.insert(geo.end(), o->strides.begin(), o->strides.end());
  geo.push_back(a.keep_if ? 1 : 0);
  copy.attrs[attention_geometry_attr] = geo;
  copy.attrs[attention_scale_attr] = std::vector<float>{a.scale, a.fill};
  b.add_kernel_step(std::move(copy), attention_rows, "native:attention", std::move(ins), {out});
}

} // namespace troupe::kernels::cpu
