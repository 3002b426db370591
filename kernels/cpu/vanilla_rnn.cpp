/// Deciding and building the CPU's native RNN steps (vanilla_rnn.hpp).
#include "kernels/cpu/vanilla_rnn.hpp"

#include <algorithm>

#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/native_recurrent.hpp"
#include "kernels/cpu/recurrent_packing.hpp"

namespace troupe::kernels::cpu {

bool build_native_vanilla_rnn(plan_builder& b, const graph::Op& op) {
  if (op.type != "RNN" || !native_avx512_available()) return false;
  const auto shape = native_recurrent_shape(b, op, 1, {"tanh"});
  if (!shape) return false;
  const auto [T, N, I, H, D] = *shape;
  const graph::ValueId B = op.input_count() > 3 ? op.inputs[3] : graph::no_value;
  const int64_t padded = padded_gate_columns(H);
  Tensor bias(element_type::f32, Shape{D, padded});
  std::fill(bias.data<float>(), bias.data<float>() + bias.get_size(), 0.0f);
  if (B != graph::no_value) {
    const float* src = b.val(B).constant->data<float>();
    for (int64_t d = 0; d < D; ++d)
      for (int64_t j = 0; j < H; ++j) bias.data<float>()[d * padded + j] = src[d * 2 * H + j] + src[d * 2 * H + H + j];
  }
  const auto rows = gate_rows(0, H);
  std::vector<int> ins{b.input_plain(op.inputs[0]),
                       b.const_buffer(pack_gate_columns(*b.val(op.inputs[1]).constant, rows, padded, input_block_columns)),
                       b.const_buffer(pack_gate_columns(*b.val(op.inputs[2]).constant, rows, padded, recurrent_block_columns)),
                       b.const_buffer(bias), native_recurrent_state_input(b, op, 5)};
  graph::Op copy = op;
  copy.inputs.clear(); // the step's operands are `ins`, not the op's
  copy.attrs[vanilla_rnn_geometry_attr] = recurrent_geometry_attr(*shape, op);
  b.add_kernel_step(std::move(copy), vanilla_rnn_rows, "native:rnn", std::move(ins), native_recurrent_outputs(b, op, 2));
  return true;
}

} // namespace troupe::kernels::cpu
