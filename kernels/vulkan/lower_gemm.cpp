/// The shared GEMM dispatch (shaders/gemm.comp) behind 1x1 convolutions and MatMul.
#include "kernels/vulkan/lowering.hpp"

namespace troupe::kernels::vulkan {

void dispatch_gemm(op_builder& b, const gemm_args& g) {
  // 16 rows per invocation reuse each B load 16 times; measured on lavapipe, that only pays for
  // large M without a partial block (MatMul's 40 rows ran faster with 8).
  uint32_t mb = g.m >= 64 && g.m % 16 == 0 ? 16 : 8;
  spec_map spec;
  spec[0] = g.m;
  spec[1] = g.n;
  spec[2] = g.k;
  spec[3] = g.nt;
  spec[4] = g.batch;
  spec[5] = g.sab;
  spec[6] = g.sbb;
  spec[7] = g.syb;
  spec[8] = g.bias_mode;
  spec[9] = g.taps;
  spec[10] = g.kw;
  spec[11] = g.in_w;
  spec[12] = g.out_w;
  spec[13] = g.out_hw;
  add_activation(b.op(), spec);
  uint32_t mblocks = (g.m + mb - 1) / mb;
  b.dispatch(mb == 16 ? "gemm_m16" : "gemm_m8", std::move(spec), {texels(g.a, 4), texels(g.b, 4), g.bias, texels(g.y, 1)},
             g.nt, g.batch * mblocks);
}

} // namespace troupe::kernels::vulkan
