#include "kernels/cpu/native_recurrent.hpp"

#include <algorithm>
#include <cctype>

#include "kernels/reference/common.hpp"

namespace troupe::kernels::cpu {

namespace {

/// Batches up to this run natively: per step the recurrent product is a matrix-vector product
/// per sequence, which oneDNN's GEMM-based cells only beat when there are many sequences.
constexpr int64_t max_native_batch = 8;

bool default_activations(const graph::Op& op, int64_t dirs, const std::vector<std::string>& defaults) {
  if (!op.has_attr("activations")) return true;
  const auto& acts = std::get<std::vector<std::string>>(op.attrs.at("activations"));
  if (acts.size() != defaults.size() * static_cast<std::size_t>(dirs)) return false;
  for (std::size_t i = 0; i < acts.size(); ++i) {
    std::string a = acts[i];
    std::transform(a.begin(), a.end(), a.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (a != defaults[i % defaults.size()]) return false;
  }
  return true;
}

} // namespace

std::optional<recurrent_shape> native_recurrent_shape(const plan_builder& b, const graph::Op& op, int64_t gates,
                                                      const std::vector<std::string>& defaults) {
  const auto n_in = op.input_count();
  if (n_in < 3 || op.has_attr("clip") || op.attr_int("input_forget", 0) != 0) return std::nullopt;
  if (n_in > 7 && op.inputs[7] != graph::no_value) return std::nullopt; // peepholes
  for (std::size_t i = 0; i < op.inputs.size(); ++i)
    if (op.inputs[i] != graph::no_value && i != 4 && b.val(op.inputs[i]).type != element_type::f32) return std::nullopt;
  const graph::ValueId X = op.inputs[0], W = op.inputs[1], R = op.inputs[2];
  const graph::ValueId B = n_in > 3 ? op.inputs[3] : graph::no_value;
  if (!b.g.is_constant(W) || !b.g.is_constant(R) || (B != graph::no_value && !b.g.is_constant(B))) return std::nullopt;
  if (b.is_dynamic(X)) return std::nullopt;
  const Shape xs = b.shape(X), ws = b.shape(W), rs = b.shape(R);
  const bool batch_first = op.attr_int("layout", 0) != 0;
  if (xs.size() != 3 || ws.size() != 3 || rs.size() != 3) return std::nullopt;
  const int64_t T = batch_first ? xs[1] : xs[0], N = batch_first ? xs[0] : xs[1], I = xs[2];
  const int64_t D = op.attr_string("direction", "forward") == "bidirectional" ? 2 : 1, H = rs[2];
  if (T <= 0 || N <= 0 || N > max_native_batch || I <= 0 || H <= 0 || op.attr_int("hidden_size", H) != H) return std::nullopt;
  if (ws[0] != D || ws[1] != gates * H || ws[2] != I || rs[0] != D || rs[1] != gates * H) return std::nullopt;
  if (!default_activations(op, D, defaults)) return std::nullopt;
  if (B != graph::no_value && b.shape(B) != Shape{D, 2 * gates * H}) return std::nullopt;
  if (n_in > 4 && op.inputs[4] != graph::no_value) { // sequence_lens: only the whole length
    if (!b.g.is_constant(op.inputs[4])) return std::nullopt;
    for (double l : reference::to_doubles(*b.val(op.inputs[4]).constant))
      if (l != static_cast<double>(T)) return std::nullopt;
  }
  const Shape state = batch_first ? Shape{N, D, H} : Shape{D, N, H};
  for (std::size_t i = 5; i < std::min<std::size_t>(n_in, 7); ++i) {
    const graph::ValueId v = op.inputs[i];
    if (v != graph::no_value && (b.is_dynamic(v) || b.shape(v) != state)) return std::nullopt;
  }
  return recurrent_shape{T, N, I, H, D};
}

std::vector<int64_t> recurrent_geometry_attr(const recurrent_shape& shape, const graph::Op& op) {
  const auto [T, N, I, H, D] = shape;
  return {T, N, I, H, D, op.attr_string("direction", "forward") == "reverse" ? 1 : 0, op.attr_int("layout", 0) != 0 ? 1 : 0};
}

recurrent_geometry::recurrent_geometry(const std::vector<int64_t>& a)
    : T(a.at(0)), N(a.at(1)), I(a.at(2)), H(a.at(3)), D(a.at(4)), reverse(a.at(5) != 0), batch_first(a.at(6) != 0) {}

void recurrent_geometry::load_states(int64_t d, const float* from, float* states) const {
  for (int64_t n = 0; n < N; ++n) {
    if (from) std::copy_n(from + state_row(n, d), H, states + n * H);
    else std::fill_n(states + n * H, H, 0.0f);
  }
}

void recurrent_geometry::store_states(int64_t d, const float* states, float* to) const {
  if (to)
    for (int64_t n = 0; n < N; ++n) std::copy_n(states + n * H, H, to + state_row(n, d));
}

int native_recurrent_state_input(plan_builder& b, const graph::Op& op, std::size_t i) {
  return i < op.inputs.size() && op.inputs[i] != graph::no_value ? b.input_plain(op.inputs[i]) : -1;
}

std::vector<int> native_recurrent_outputs(plan_builder& b, const graph::Op& op, std::size_t count) {
  std::vector<int> outs;
  for (std::size_t i = 0; i < count; ++i) {
    const graph::ValueId v = i < op.outputs.size() ? op.outputs[i] : graph::no_value;
    outs.push_back(v == graph::no_value ? -1 : b.output(v, b.plain(v)));
  }
  return outs;
}

} // namespace troupe::kernels::cpu
