/// Finding and building the CPU's RMS normalization steps (rms_norm.hpp).
#include "kernels/cpu/rms_norm.hpp"

#include "kernels/cpu/native_ops.hpp"

namespace troupe::kernels::cpu {

rms_norm_sites find_rms_norm_sites(const plan_builder& b, const std::set<std::size_t>& taken) {
  if (!native_avx512_available()) return {};
  return claim_sites(graph::find_rms_norm_patterns(b.g), taken);
}

void build_rms_norm(plan_builder& b, const graph::Op& last, const graph::rms_norm_pattern& p) {
  std::vector<int> ins{b.input_plain(p.x), p.gamma == graph::no_value ? -1 : b.input_plain(p.gamma)};
  const int out = b.output(p.y, b.plain(p.y));
  graph::Op copy = last;
  copy.inputs.clear(); // the step's operands are `ins`, not the op's
  copy.type = "RMSNormalization";
  copy.attrs[rms_norm_epsilon_attr] = p.epsilon;
  b.add_kernel_step(std::move(copy), rms_norm_rows, "native:rms_norm", std::move(ins), {out});
}

} // namespace troupe::kernels::cpu
