/// Deciding and building the CPU's native GRU steps (gru.hpp).
#include "kernels/cpu/gru.hpp"

#include <algorithm>

#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/native_recurrent.hpp"
#include "kernels/cpu/recurrent_packing.hpp"

namespace troupe::kernels::cpu {

bool build_native_gru(plan_builder& b, const graph::Op& op) {
  if (op.type != "GRU" || !native_avx512_available()) return false;
  const auto shape = native_recurrent_shape(b, op, 3, {"sigmoid", "tanh"});
  if (!shape) return false;
  const auto [T, N, I, H, D] = *shape;
  const bool lbr = op.attr_int("linear_before_reset", 0) != 0;
  const graph::ValueId W = op.inputs[1], R = op.inputs[2];
  const graph::ValueId B = op.input_count() > 3 ? op.inputs[3] : graph::no_value;
  const int64_t gzr = padded_gate_columns(2 * H), gh = padded_gate_columns(H), gp = gzr + gh;

  // W's columns: z and r from 0, the candidate's from gzr.
  std::vector<int64_t> w_rows(static_cast<std::size_t>(gp), -1);
  for (int64_t c = 0; c < 2 * H; ++c) w_rows[static_cast<std::size_t>(c)] = c;
  for (int64_t c = 0; c < H; ++c) w_rows[static_cast<std::size_t>(gzr + c)] = 2 * H + c;
  Tensor bias(element_type::f32, Shape{D, gp}), rb(element_type::f32, Shape{D, gh});
  std::fill(bias.data<float>(), bias.data<float>() + bias.get_size(), 0.0f);
  std::fill(rb.data<float>(), rb.data<float>() + rb.get_size(), 0.0f);
  if (B != graph::no_value) {
    const float* src = b.val(B).constant->data<float>();
    for (int64_t d = 0; d < D; ++d) {
      const float *wb = src + d * 6 * H, *rbs = wb + 3 * H;
      float* out = bias.data<float>() + d * gp;
      for (int64_t c = 0; c < 2 * H; ++c) out[c] = wb[c] + rbs[c];
      for (int64_t c = 0; c < H; ++c) {
        out[gzr + c] = wb[2 * H + c] + (lbr ? 0.0f : rbs[2 * H + c]);
        rb.data<float>()[d * gh + c] = rbs[2 * H + c];
      }
    }
  }
  const Tensor& r = *b.val(R).constant;
  std::vector<int> ins{b.input_plain(op.inputs[0]),
                       b.const_buffer(pack_gate_columns(*b.val(W).constant, w_rows, gp, input_block_columns)),
                       b.const_buffer(pack_gate_columns(r, gate_rows(0, 2 * H), gzr, recurrent_block_columns)),
                       b.const_buffer(pack_gate_columns(r, gate_rows(2 * H, H), gh, recurrent_block_columns)),
                       b.const_buffer(bias), b.const_buffer(rb), native_recurrent_state_input(b, op, 5)};
  graph::Op copy = op;
  copy.inputs.clear(); // the step's operands are `ins`, not the op's
  auto geometry = recurrent_geometry_attr(*shape, op);
  geometry.push_back(lbr ? 1 : 0);
  copy.attrs[gru_geometry_attr] = std::move(geometry);
  b.add_kernel_step(std::move(copy), gru_rows, "native:gru", std::move(ins), native_recurrent_outputs(b, op, 2));
  return true;
}

} // namespace troupe::kernels::cpu
