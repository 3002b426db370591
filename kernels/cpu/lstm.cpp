/// Deciding and building the CPU's native LSTM steps (lstm.hpp).
#include "kernels/cpu/lstm.hpp"

#include <algorithm>

#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/native_recurrent.hpp"
#include "kernels/cpu/recurrent_packing.hpp"

namespace troupe::kernels::cpu {

bool build_native_lstm(plan_builder& b, const graph::Op& op) {
  if (op.type != "LSTM" || !native_avx512_available()) return false;
  const auto shape = native_recurrent_shape(b, op, 4, {"sigmoid", "tanh", "tanh"});
  if (!shape) return false;
  const auto [T, N, I, H, D] = *shape;
  const graph::ValueId W = op.inputs[1], R = op.inputs[2];
  const graph::ValueId B = op.input_count() > 3 ? op.inputs[3] : graph::no_value;
  const int64_t padded = padded_gate_columns(4 * H);
  Tensor bias(element_type::f32, Shape{D, padded});
  std::fill(bias.data<float>(), bias.data<float>() + bias.get_size(), 0.0f);
  if (B != graph::no_value) {
    const float* src = b.val(B).constant->data<float>();
    for (int64_t d = 0; d < D; ++d)
      for (int64_t j = 0; j < 4 * H; ++j) bias.data<float>()[d * padded + j] = src[d * 8 * H + j] + src[d * 8 * H + 4 * H + j];
  }
  const auto rows = gate_rows(0, 4 * H);
  std::vector<int> ins{b.input_plain(op.inputs[0]),
                       b.const_buffer(pack_gate_columns(*b.val(W).constant, rows, padded, input_block_columns)),
                       b.const_buffer(pack_gate_columns(*b.val(R).constant, rows, padded, recurrent_block_columns)),
                       b.const_buffer(bias), native_recurrent_state_input(b, op, 5), native_recurrent_state_input(b, op, 6)};
  graph::Op copy = op;
  copy.inputs.clear(); // the step's operands are `ins`, not the op's
  copy.attrs[lstm_geometry_attr] = recurrent_geometry_attr(*shape, op);
  b.add_kernel_step(std::move(copy), lstm_rows, "native:lstm", std::move(ins), native_recurrent_outputs(b, op, 3));
  return true;
}

} // namespace troupe::kernels::cpu
