#pragma once
/// What the native LSTM and GRU steps (lstm.hpp, gru.hpp) check and bind alike.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/plan_builder.hpp"

namespace troupe::kernels::cpu {

/// T, N (batch), I (input size), H (hidden), D (directions).
using recurrent_shape = std::array<int64_t, 5>;

/// The op's shape when a native step can run it: f32, W, R and B constant, X static, at most
/// 8 sequences, `gates` gate rows per unit, the default activations (`defaults`, per
/// direction; any case), no clip, no input_forget, no peepholes, sequence_lens absent or the
/// whole length, initial states static of [D, N, H] ([N, D, H] in layout 1).
std::optional<recurrent_shape> native_recurrent_shape(const plan_builder& b, const graph::Op& op, int64_t gates,
                                                      const std::vector<std::string>& defaults);

/// The op's input `i` (an initial state) bound plain, or -1 when absent.
int native_recurrent_state_input(plan_builder& b, const graph::Op& op, std::size_t i);

/// The op's first `count` outputs bound plain (-1 for those absent).
std::vector<int> native_recurrent_outputs(plan_builder& b, const graph::Op& op, std::size_t count);

} // namespace troupe::kernels::cpu
