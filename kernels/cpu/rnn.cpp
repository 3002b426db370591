/// ONNX LSTM, GRU and RNN on oneDNN's RNN primitives (one layer, forward inference): the
/// gates regrouped into oneDNN's order once, at compile time, and the outputs written where
/// ONNX wants them. oneDNN computes every time step's matrix products as a few large GEMMs;
/// the reference kernel took 64 ms for one bidirectional LSTM of 80 steps and 256 units.
/// What oneDNN's cells do not have stays on the reference kernel: peepholes, clip,
/// input_forget, activations other than the defaults (RNN: Tanh, Relu, Sigmoid),
/// sequence_lens shorter than the sequence.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "kernels/cpu/plan_builder.hpp"
#include "kernels/reference/common.hpp"

namespace troupe::kernels::cpu {

namespace {

using tag = memory::format_tag;
using dt = memory::data_type;

struct cell {
  int gates = 0;
  std::vector<int> onnx_gate; ///< per oneDNN gate, the ONNX gate it takes its weights from
  dnnl::algorithm activation = dnnl::algorithm::eltwise_tanh; ///< vanilla RNN only
  bool lbr = false;           ///< GRU with linear_before_reset
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// The cell oneDNN runs for `op`, or false when its attributes ask for what oneDNN has not.
bool cell_of(const graph::Op& op, int dirs, cell& c) {
  if (op.has_attr("clip") || op.attr_int("input_forget", 0) != 0) return false;
  std::vector<std::string> defaults;
  if (op.type == "LSTM") {
    c.gates = 4;
    c.onnx_gate = {0, 2, 3, 1}; // oneDNN i, f, c~, o from ONNX's i, o, f, c
    defaults = {"sigmoid", "tanh", "tanh"};
  } else if (op.type == "GRU") {
    c.gates = 3;
    c.onnx_gate = {0, 1, 2}; // z(u), r, h(o): the same order
    c.lbr = op.attr_int("linear_before_reset", 0) != 0;
    defaults = {"sigmoid", "tanh"};
  } else if (op.type == "RNN") {
    c.gates = 1;
    c.onnx_gate = {0};
    defaults = {"tanh"};
  } else {
    return false;
  }
  if (!op.has_attr("activations")) return true;
  const auto& acts = std::get<std::vector<std::string>>(op.attrs.at("activations"));
  if (acts.size() != defaults.size() * static_cast<std::size_t>(dirs)) return false;
  if (op.type == "RNN") {
    // One activation for all directions: tanh, relu or sigmoid (no alpha/beta).
    if (op.has_attr("activation_alpha") || op.has_attr("activation_beta")) return false;
    for (const auto& a : acts)
      if (lower(a) != lower(acts[0])) return false;
    const std::string a = lower(acts[0]);
    if (a == "tanh") c.activation = dnnl::algorithm::eltwise_tanh;
    else if (a == "relu") c.activation = dnnl::algorithm::eltwise_relu;
    else if (a == "sigmoid") c.activation = dnnl::algorithm::eltwise_logistic;
    else return false;
    return true;
  }
  for (std::size_t i = 0; i < acts.size(); ++i)
    if (lower(acts[i]) != defaults[i % defaults.size()]) return false;
  return true;
}

/// W [D, G*H, K] (or R, K = H) as oneDNN's ldigo [1, D, K, G, H] in oneDNN's gate order.
Tensor ldigo_weights(const Tensor& w, const cell& c, int64_t dirs, int64_t hidden) {
  const int64_t k = w.get_shape()[2], g = c.gates;
  Tensor out(element_type::f32, Shape{1, dirs, k, g, hidden});
  const float* src = w.data<float>();
  float* dst = out.data<float>();
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t i = 0; i < k; ++i)
      for (int64_t gi = 0; gi < g; ++gi) {
        const int64_t og = c.onnx_gate[static_cast<std::size_t>(gi)];
        for (int64_t h = 0; h < hidden; ++h)
          dst[(((d * k) + i) * g + gi) * hidden + h] = src[((d * g + og) * hidden + h) * k + i];
      }
  return out;
}

/// B [D, 2*G*H] (Wb then Rb; absent: zeros) as oneDNN's ldgo bias: Wb + Rb per gate, and for
/// linear-before-reset GRU the output gate's Wb and a fourth gate holding its Rb.
Tensor ldgo_bias(const Tensor* b, const cell& c, int64_t dirs, int64_t hidden) {
  const int64_t g = c.gates, out_gates = c.lbr ? 4 : g;
  Tensor out(element_type::f32, Shape{1, dirs, out_gates, hidden});
  std::fill(out.data<float>(), out.data<float>() + out.get_size(), 0.0f);
  if (!b) return out;
  const float* src = b->data<float>();
  float* dst = out.data<float>();
  for (int64_t d = 0; d < dirs; ++d) {
    const float* wb = src + d * 2 * g * hidden;
    const float* rb = wb + g * hidden;
    for (int64_t gi = 0; gi < g; ++gi) {
      const int64_t og = c.onnx_gate[static_cast<std::size_t>(gi)];
      const bool apart = c.lbr && gi == 2; // o: W·x + Wb + r * (U·h + Rb)
      for (int64_t h = 0; h < hidden; ++h) {
        dst[(d * out_gates + gi) * hidden + h] = wb[og * hidden + h] + (apart ? 0.0f : rb[og * hidden + h]);
        if (apart) dst[(d * out_gates + 3) * hidden + h] = rb[og * hidden + h];
      }
    }
  }
  return out;
}

/// A desc of `dims` with explicit strides.
memory::desc strided(const memory::dims& dims, const memory::dims& strides) { return memory::desc(dims, dt::f32, strides); }

} // namespace

bool build_rnn(plan_builder& b, const graph::Op& op) {
  const auto n_in = op.input_count();
  if (n_in < 3) return false;
  for (std::size_t i = 0; i < op.inputs.size(); ++i)
    if (op.inputs[i] != graph::no_value && i != 4 && b.val(op.inputs[i]).type != element_type::f32) return false;
  if (n_in > 7 && op.inputs[7] != graph::no_value) return false; // peepholes
  const graph::ValueId X = op.inputs[0], W = op.inputs[1], R = op.inputs[2];
  if (!b.g.is_constant(W) || !b.g.is_constant(R)) return false;
  const graph::ValueId B = n_in > 3 ? op.inputs[3] : graph::no_value;
  if (B != graph::no_value && !b.g.is_constant(B)) return false;
  const bool batch_first = op.attr_int("layout", 0) != 0;
  const Shape xs = b.shape(X);
  if (xs.size() != 3) return false;
  const int64_t T = batch_first ? xs[1] : xs[0], N = batch_first ? xs[0] : xs[1], K = xs[2];
  const Shape ws = b.shape(W);
  if (ws.size() != 3 || T == 0 || N == 0 || K == 0) return false;
  const std::string direction = op.attr_string("direction", "forward");
  const int64_t D = direction == "bidirectional" ? 2 : 1;
  const int64_t H = op.attr_int("hidden_size", 0);
  cell c;
  if (H <= 0 || ws[0] != D || !cell_of(op, static_cast<int>(D), c) || ws[1] != c.gates * H || ws[2] != K) return false;
  // sequence_lens: only when every sequence is the whole length.
  if (n_in > 4 && op.inputs[4] != graph::no_value) {
    if (!b.g.is_constant(op.inputs[4])) return false;
    for (double l : reference::to_doubles(*b.val(op.inputs[4]).constant))
      if (l != static_cast<double>(T)) return false;
  }
  const auto dir = direction == "bidirectional" ? dnnl::rnn_direction::bidirectional_concat
                   : direction == "reverse"     ? dnnl::rnn_direction::unidirectional_right2left
                                                : dnnl::rnn_direction::unidirectional_left2right;
  const bool lstm = op.type == "LSTM";
  const graph::ValueId H0 = n_in > 5 ? op.inputs[5] : graph::no_value;
  const graph::ValueId C0 = lstm && n_in > 6 ? op.inputs[6] : graph::no_value;
  auto out_at = [&](std::size_t i) { return i < op.outputs.size() ? op.outputs[i] : graph::no_value; };
  const graph::ValueId Y = out_at(0), YH = out_at(1), YC = lstm ? out_at(2) : graph::no_value;

  // oneDNN's descriptors. The sequence: tnc (ONNX layout 0) or ntc (layout 1) over [T, N, C].
  const memory::dims seq_in{T, N, K}, seq_out{T, N, D * H}, state{1, D, N, H};
  const tag seq_tag = batch_first ? tag::ntc : tag::tnc;
  const memory::desc src_layer(seq_in, dt::f32, seq_tag), dst_layer(seq_out, dt::f32, seq_tag);
  const memory::desc state_md(state, dt::f32, tag::ldnc);
  const memory::desc src_iter = H0 != graph::no_value ? state_md : memory::desc();
  const memory::desc src_iter_c = C0 != graph::no_value ? state_md : memory::desc();
  const memory::desc dst_iter = YH != graph::no_value ? state_md : memory::desc();
  const memory::desc dst_iter_c = YC != graph::no_value ? state_md : memory::desc();
  const memory::desc wl(memory::dims{1, D, K, c.gates, H}, dt::f32, tag::any);
  const memory::desc wi(memory::dims{1, D, H, c.gates, H}, dt::f32, tag::any);
  const memory::desc bias(memory::dims{1, D, c.lbr ? 4 : c.gates, H}, dt::f32, tag::ldgo);
  const auto inference = dnnl::prop_kind::forward_inference;
  const auto attr = plan_builder::base_attr();
  // The descriptor as its base handle (a copy shares the one oneDNN object): the derived
  // classes add nothing, and none has a virtual destructor to delete it through.
  dnnl::primitive prim;
  dnnl::primitive_desc_base pd;
  if (lstm) {
    dnnl::lstm_forward::desc d(inference, dir, src_layer, src_iter, src_iter_c, wl, wi, bias, dst_layer, dst_iter, dst_iter_c);
    dnnl::lstm_forward::primitive_desc p(d, attr, b.p.eng);
    prim = dnnl::lstm_forward(p);
    pd = p;
  } else if (op.type == "GRU" && c.lbr) {
    dnnl::lbr_gru_forward::desc d(inference, dir, src_layer, src_iter, wl, wi, bias, dst_layer, dst_iter);
    dnnl::lbr_gru_forward::primitive_desc p(d, attr, b.p.eng);
    prim = dnnl::lbr_gru_forward(p);
    pd = p;
  } else if (op.type == "GRU") {
    dnnl::gru_forward::desc d(inference, dir, src_layer, src_iter, wl, wi, bias, dst_layer, dst_iter);
    dnnl::gru_forward::primitive_desc p(d, attr, b.p.eng);
    prim = dnnl::gru_forward(p);
    pd = p;
  } else {
    dnnl::vanilla_rnn_forward::desc d(inference, c.activation, dir, src_layer, src_iter, wl, wi, bias, dst_layer, dst_iter);
    dnnl::vanilla_rnn_forward::primitive_desc p(d, attr, b.p.eng);
    prim = dnnl::vanilla_rnn_forward(p);
    pd = p;
  }
  const memory::desc wl_want = pd.query_md(dnnl::query::weights_md, 0);
  const memory::desc wi_want = pd.query_md(dnnl::query::weights_md, 1);

  // Inputs. X's plain bytes are the sequence as oneDNN reads it, in either layout.
  std::vector<binding> args{{DNNL_ARG_SRC_LAYER, b.input(X, src_layer, &src_layer), src_layer}};
  // A state of layout 1 is [N, D, H]: oneDNN's [1, D, N, H] with the batch outermost.
  const memory::desc state_view = batch_first ? strided(state, {D * N * H, H, D * H, 1}) : state_md;
  if (H0 != graph::no_value) args.push_back({DNNL_ARG_SRC_ITER, b.input(H0, state_md, &state_view), state_md});
  if (C0 != graph::no_value) args.push_back({DNNL_ARG_SRC_ITER_C, b.input(C0, state_md, &state_view), state_md});
  const Tensor& w = *b.val(W).constant;
  const Tensor& r = *b.val(R).constant;
  const memory::desc wl_plain(memory::dims{1, D, K, c.gates, H}, dt::f32, tag::ldigo);
  const memory::desc wi_plain(memory::dims{1, D, H, c.gates, H}, dt::f32, tag::ldigo);
  const int wl_buf = b.const_buffer(b.reorder_constant(ldigo_weights(w, c, D, H), wl_plain, wl_want));
  const int wi_buf = b.const_buffer(b.reorder_constant(ldigo_weights(r, c, D, H), wi_plain, wi_want));
  args.push_back({DNNL_ARG_WEIGHTS_LAYER, wl_buf, wl_want});
  args.push_back({DNNL_ARG_WEIGHTS_ITER, wi_buf, wi_want});
  const Tensor* bt = B != graph::no_value ? &*b.val(B).constant : nullptr;
  args.push_back({DNNL_ARG_BIAS, b.const_buffer(ldgo_bias(bt, c, D, H)), bias});

  // Outputs, each where oneDNN writes it, described as the ONNX value it is: Y of layout 0 is
  // [T, D, N, H] over oneDNN's [T, N, D*H]; layout 1's [N, T, D, H] is oneDNN's ntc exactly.
  int y_buf;
  if (Y == graph::no_value) {
    y_buf = b.typed_buffer(element_type::f32, Shape{T, N, D * H});
  } else {
    const memory::desc y_home = batch_first ? memory::desc({N, T, D, H}, dt::f32, tag::abcd)
                                            : strided({T, D, N, H}, {N * D * H, H, D * H, 1});
    y_buf = b.output(Y, y_home);
  }
  args.push_back({DNNL_ARG_DST_LAYER, y_buf, dst_layer});
  // Y_h, Y_c: ONNX's [D, N, H] is ldnc; layout 1's [N, D, H] the batch-outermost view.
  const memory::desc state_home =
      batch_first ? strided({N, D, H}, {H, N * H, 1}) : memory::desc({D, N, H}, dt::f32, tag::abc);
  if (YH != graph::no_value) args.push_back({DNNL_ARG_DST_ITER, b.output(YH, state_home), state_md});
  if (YC != graph::no_value) args.push_back({DNNL_ARG_DST_ITER_C, b.output(YC, state_home), state_md});
  b.add_dnnl(op, pd, prim, std::move(args));
  // oneDNN names its GEMM-based RNN implementation "ref": say what it is, so that profiles do
  // not show it as troupe's reference kernel.
  auto& exec = b.p.steps.back().exec_type;
  if (exec.rfind("ref", 0) == 0) exec = "rnn_gemm:" + exec;
  return true;
}

} // namespace troupe::kernels::cpu
