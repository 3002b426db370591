/// Deciding and building the CPU's native LSTM steps (lstm.hpp).
#include "kernels/cpu/lstm.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "kernels/cpu/native_ops.hpp"
#include "kernels/reference/common.hpp"

namespace troupe::kernels::cpu {

namespace {

/// Batches up to this run natively: per step the recurrent product is a matrix-vector product
/// per sequence, which oneDNN's GEMM-based cell only beats when there are many sequences.
constexpr int64_t max_native_batch = 8;

bool default_activations(const graph::Op& op, int64_t dirs) {
  if (!op.has_attr("activations")) return true;
  const auto& acts = std::get<std::vector<std::string>>(op.attrs.at("activations"));
  static const char* defaults[] = {"sigmoid", "tanh", "tanh"};
  if (acts.size() != 3 * static_cast<std::size_t>(dirs)) return false;
  for (std::size_t i = 0; i < acts.size(); ++i) {
    std::string a = acts[i];
    std::transform(a.begin(), a.end(), a.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (a != defaults[i % 3]) return false;
  }
  return true;
}

/// m [D, G, K] (W or R, G = 4H gate columns) as [D, G' / width, K, width]: for each block of
/// `width` gate columns, its K rows one after another (a block streams from memory in order,
/// where rows of all G columns lay 4 KB apart at 256 units), zeros past G up to
/// G' = lstm_padded_columns(G).
Tensor blocked_gates(const Tensor& m, int64_t width) {
  const Shape& s = m.get_shape();
  const int64_t dirs = s[0], rows = s[1], k = s[2], padded = lstm_padded_columns(rows), blocks = padded / width;
  Tensor t(element_type::f32, Shape{dirs, blocks, k, width});
  const float* src = m.data<float>();
  float* dst = t.data<float>();
  std::fill(dst, dst + t.get_size(), 0.0f);
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < k; ++i) dst[((d * blocks + r / width) * k + i) * width + r % width] = src[(d * rows + r) * k + i];
  return t;
}

} // namespace

bool build_native_lstm(plan_builder& b, const graph::Op& op) {
  if (op.type != "LSTM" || !native_avx512_available()) return false;
  const auto n_in = op.input_count();
  if (n_in < 3 || op.has_attr("clip") || op.attr_int("input_forget", 0) != 0) return false;
  if (n_in > 7 && op.inputs[7] != graph::no_value) return false; // peepholes
  for (std::size_t i = 0; i < op.inputs.size(); ++i)
    if (op.inputs[i] != graph::no_value && i != 4 && b.val(op.inputs[i]).type != element_type::f32) return false;
  const graph::ValueId X = op.inputs[0], W = op.inputs[1], R = op.inputs[2];
  const graph::ValueId B = n_in > 3 ? op.inputs[3] : graph::no_value;
  if (!b.g.is_constant(W) || !b.g.is_constant(R) || (B != graph::no_value && !b.g.is_constant(B))) return false;
  if (b.is_dynamic(X)) return false;
  const Shape xs = b.shape(X), ws = b.shape(W), rs = b.shape(R);
  const bool batch_first = op.attr_int("layout", 0) != 0;
  if (xs.size() != 3 || ws.size() != 3 || rs.size() != 3) return false;
  const int64_t T = batch_first ? xs[1] : xs[0], N = batch_first ? xs[0] : xs[1], I = xs[2];
  const std::string direction = op.attr_string("direction", "forward");
  const int64_t D = direction == "bidirectional" ? 2 : 1, H = rs[2];
  if (T <= 0 || N <= 0 || N > max_native_batch || I <= 0 || H <= 0 || op.attr_int("hidden_size", H) != H) return false;
  if (ws[0] != D || ws[1] != 4 * H || ws[2] != I || rs[0] != D || rs[1] != 4 * H) return false;
  if (!default_activations(op, D)) return false;
  if (B != graph::no_value && b.shape(B) != Shape{D, 8 * H}) return false;
  if (n_in > 4 && op.inputs[4] != graph::no_value) { // sequence_lens: only the whole length
    if (!b.g.is_constant(op.inputs[4])) return false;
    for (double l : reference::to_doubles(*b.val(op.inputs[4]).constant))
      if (l != static_cast<double>(T)) return false;
  }
  const graph::ValueId H0 = n_in > 5 ? op.inputs[5] : graph::no_value;
  const graph::ValueId C0 = n_in > 6 ? op.inputs[6] : graph::no_value;
  const Shape state = batch_first ? Shape{N, D, H} : Shape{D, N, H};
  for (graph::ValueId v : {H0, C0})
    if (v != graph::no_value && (b.is_dynamic(v) || b.shape(v) != state)) return false;

  const int64_t padded = lstm_padded_columns(4 * H);
  Tensor bias(element_type::f32, Shape{D, padded});
  std::fill(bias.data<float>(), bias.data<float>() + bias.get_size(), 0.0f);
  if (B != graph::no_value) {
    const float* src = b.val(B).constant->data<float>();
    for (int64_t d = 0; d < D; ++d)
      for (int64_t j = 0; j < 4 * H; ++j) bias.data<float>()[d * padded + j] = src[d * 8 * H + j] + src[d * 8 * H + 4 * H + j];
  }
  std::vector<int> ins{b.input_plain(X), b.const_buffer(blocked_gates(*b.val(W).constant, lstm_input_block)),
                       b.const_buffer(blocked_gates(*b.val(R).constant, lstm_recurrent_block)), b.const_buffer(bias),
                       H0 == graph::no_value ? -1 : b.input_plain(H0), C0 == graph::no_value ? -1 : b.input_plain(C0)};
  std::vector<int> outs;
  for (std::size_t i = 0; i < 3; ++i) {
    const graph::ValueId v = i < op.outputs.size() ? op.outputs[i] : graph::no_value;
    outs.push_back(v == graph::no_value ? -1 : b.output(v, b.plain(v)));
  }
  graph::Op copy = op;
  copy.inputs.clear(); // the step's operands are `ins`, not the op's
  copy.attrs[lstm_geometry_attr] = std::vector<int64_t>{T, N, I, H, D, direction == "reverse" ? 1 : 0, batch_first ? 1 : 0};
  b.add_kernel_step(std::move(copy), lstm_rows, "native:lstm", std::move(ins), std::move(outs));
  return true;
}

} // namespace troupe::kernels::cpu
