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

/// The first entries of a native step's geometry attribute: T, N, I, H, D, reverse (one
/// direction run backwards), layout (1: batch first).
std::vector<int64_t> recurrent_geometry_attr(const recurrent_shape& shape, const graph::Op& op);

/// What the native kernels read back from that attribute, and where a sequence's rows lie.
struct recurrent_geometry {
  int64_t T, N, I, H, D;
  bool reverse, batch_first;
  explicit recurrent_geometry(const std::vector<int64_t>& a);
  bool backwards(int64_t d) const { return reverse || d == 1; }
  /// Y's row of step t, sequence n, direction d: Y is [T, D, N, H] ([N, T, D, H] batch first).
  int64_t y_row(int64_t t, int64_t n, int64_t d) const { return (batch_first ? (n * T + t) * D + d : (t * D + d) * N + n) * H; }
  /// A state's row (initial_h, Y_h, ...) of sequence n, direction d: [D, N, H] ([N, D, H]).
  int64_t state_row(int64_t n, int64_t d) const { return (batch_first ? n * D + d : d * N + n) * H; }
  /// Direction d's states [N, H] from `from` (laid out as a state input; null: zeros).
  void load_states(int64_t d, const float* from, float* states) const;
  /// Direction d's states [N, H] into `to` (laid out as a state output; null: nothing).
  void store_states(int64_t d, const float* states, float* to) const;
};

/// A kernel's tensor `t` as floats, or null when empty (an omitted input or output).
inline const float* floats_or_null(const Tensor& t) { return t.empty() ? nullptr : t.data<float>(); }
inline float* floats_or_null(std::vector<Tensor>& v, std::size_t i) {
  return i < v.size() && !v[i].empty() ? v[i].data<float>() : nullptr;
}
inline const float* floats_or_null(const std::vector<Tensor>& v, std::size_t i) {
  return i < v.size() ? floats_or_null(v[i]) : nullptr;
}

/// The op's input `i` (an initial state) bound plain, or -1 when absent.
int native_recurrent_state_input(plan_builder& b, const graph::Op& op, std::size_t i);

/// The op's first `count` outputs bound plain (-1 for those absent).
std::vector<int> native_recurrent_outputs(plan_builder& b, const graph::Op& op, std::size_t count);

} // namespace troupe::kernels::cpu
