/// IR recurrent sequences and cells -> ONNX RNN / GRU / LSTM in their batch-first layout
/// (layout 1). LSTMSequence-5 (and LSTMCell-4 and -1, one step of it; -1 with peepholes) keeps its gates as f, i, c, o in W, R and B (ONNX: i, o, f, c), GRUSequence-5
/// as z, r, h (ONNX's order too; GRUCell-3) with one bias per gate, plus R's h bias under
/// linear_before_reset (ONNX: W's biases, then R's), RNNSequence-5 (RNNCell-1) one gate. IR's
/// Y [batch, dirs, seq, hidden] is ONNX's [batch, seq, dirs, hidden] transposed; Ho and Co are
/// ONNX's Y_h and Y_c as they are. Weights are regrouped by ops (Split, Concat), which constant
/// folding turns into constants when the model is compiled.
#include "graph/ir_op_mapping.hpp"

#include <algorithm>
#include <cctype>

namespace troupe::graph::ir {

namespace {

struct recurrent_kind {
  const char* onnx;
  int64_t gates;
  std::vector<int64_t> order; ///< gate k of ONNX's order is gate order[k] of IR's
  std::vector<std::string> activations; ///< ONNX's defaults
};

/// x [dirs, gates * hidden, ...] with its gate blocks in ONNX's order.
ValueId regroup(builder& b, ValueId x, const recurrent_kind& k, int64_t hidden) {
  if (k.gates == 1 || std::is_sorted(k.order.begin(), k.order.end())) return x;
  auto parts = b.op_n("Split", {x, b.i64s(std::vector<int64_t>(static_cast<std::size_t>(k.gates), hidden))}, {{"axis", int64_t{1}}},
                      static_cast<std::size_t>(k.gates));
  std::vector<ValueId> in;
  for (auto g : k.order) in.push_back(parts[static_cast<std::size_t>(g)]);
  return b.op("Concat", in, {{"axis", int64_t{1}}});
}

ValueId zeros(builder& b, element_type t, int64_t dirs, int64_t n) {
  return b.constant(builder::make_tensor(std::vector<double>(static_cast<std::size_t>(dirs * n), 0.0), t, Shape{dirs, n}));
}

ValueId slice_cols(builder& b, ValueId x, int64_t from, int64_t to) {
  return b.op("Slice", {x, b.i64s({from}), b.i64s({to}), b.i64s({1})});
}

/// A sequence op (seq_len steps, inputs X, H0, [C0,] sequence_lengths, W, R, B) or a cell (one
/// step, no directions: X [batch, input], H, [C,] W, R, B, outputs Ho [, Co]): a cell is the
/// sequence op of one forward step, its inputs unsqueezed and its states squeezed back.
mapper recurrent(recurrent_kind k, bool cell) {
  return [k, cell](builder& b) -> std::vector<ValueId> {
    const bool lstm = std::string(k.onnx) == "LSTM", gru = std::string(k.onnx) == "GRU";
    const std::size_t h0 = 1, c0 = 2, lens = lstm ? 3 : 2;
    const std::size_t w = cell ? lens : lens + 1, r = w + 1, bias = w + 2;
    const int64_t hidden = b.i64("hidden_size");
    if (hidden <= 0) b.fail("hidden_size " + std::to_string(hidden) + " must be positive");
    const std::string direction = cell ? "forward" : b.str("direction");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      b.fail("direction '" + direction + "' is not forward, reverse or bidirectional");
    const int64_t dirs = direction == "bidirectional" ? 2 : 1;
    std::map<std::string, AttributeValue> a{{"hidden_size", hidden}, {"direction", direction}, {"layout", int64_t{1}}};
    // Activations: IR spells them in lower case, once for both directions.
    std::vector<std::string> acts;
    std::string text = b.str("activations", "");
    for (std::size_t at = 0; at < text.size();) {
      std::size_t end = text.find(',', at);
      if (end == std::string::npos) end = text.size();
      std::string name = text.substr(at, end - at);
      if (name == "sigmoid") name = "Sigmoid";
      else if (name == "tanh") name = "Tanh";
      else if (name == "relu") name = "Relu";
      else b.fail("activation '" + name + "' is not sigmoid, tanh or relu");
      acts.push_back(name);
      at = end + 1;
    }
    if (!acts.empty()) {
      if (acts.size() != k.activations.size())
        b.fail(std::to_string(acts.size()) + " activations given; " + k.onnx + " takes " + std::to_string(k.activations.size()));
      std::vector<std::string> all = acts;
      if (dirs == 2) all.insert(all.end(), acts.begin(), acts.end());
      a["activations"] = all;
    }
    for (const char* name : {"activations_alpha", "activations_beta"})
      if (auto f = b.floats(name); !f.empty()) a[name] = f;
    if (const double clip = b.f64("clip", 0.0); clip > 0) a["clip"] = static_cast<float>(clip);
    const bool lbr = gru && b.flag("linear_before_reset", false);
    if (gru) a["linear_before_reset"] = int64_t{lbr};
    // A cell's operands with the sequence op's leading axes: X and states [batch, 1, ...],
    // weights and biases [1, ...].
    auto unsqueezed = [&](std::size_t i, int64_t axis) { return cell ? b.op("Unsqueeze", {b.input(i), b.i64s({axis})}) : b.input(i); };
    // W and R regrouped; B as ONNX's [dirs, 2 * gates * hidden]: W's biases, then R's.
    const ValueId W = regroup(b, unsqueezed(w, 0), k, hidden), R = regroup(b, unsqueezed(r, 0), k, hidden), Bin = unsqueezed(bias, 0);
    const element_type bt = b.in_type(bias) == element_type::undefined ? element_type::f32 : b.in_type(bias);
    const int64_t gh = k.gates * hidden;
    ValueId B;
    if (lbr) { // [z, r, h of W (z and r: both biases summed), h of R]
      const ValueId rb = b.op("Concat", {zeros(b, bt, dirs, 2 * hidden), slice_cols(b, Bin, 3 * hidden, 4 * hidden)}, {{"axis", int64_t{1}}});
      B = b.op("Concat", {slice_cols(b, Bin, 0, 3 * hidden), rb}, {{"axis", int64_t{1}}});
    } else {
      B = b.op("Concat", {regroup(b, Bin, k, hidden), zeros(b, bt, dirs, gh)}, {{"axis", int64_t{1}}});
    }
    ValueId seq = no_value;
    if (!cell) {
      seq = b.input(lens);
      if (b.in_type(lens) != element_type::i32) seq = b.op("Cast", {seq}, {{"to", static_cast<int64_t>(element_type::i32)}});
    }
    std::vector<ValueId> in{unsqueezed(0, 1), W, R, B, seq, unsqueezed(h0, 1)};
    if (lstm) in.push_back(unsqueezed(c0, 1));
    // LSTMCell-1's peepholes [3 * hidden]: input, output, forget, ONNX's order too.
    if (lstm && cell && b.inputs() > bias + 1) in.push_back(unsqueezed(bias + 1, 0));
    if (lstm && b.flag("input_forget", false)) a["input_forget"] = int64_t{1};
    auto out = b.op_n(k.onnx, in, a, lstm ? 3 : 2);
    if (cell) { // Ho (and Co): the states of the one direction
      std::vector<ValueId> states;
      for (std::size_t i = 1; i < out.size(); ++i) states.push_back(b.op("Squeeze", {out[i], b.i64s({1})}));
      return states;
    }
    out[0] = b.op("Transpose", {out[0]}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    return out;
  };
}

} // namespace

void add_recurrent_ops(op_table& t) {
  const std::vector<std::string> v5{"opset5"};
  const recurrent_kind lstm{"LSTM", 4, {1, 3, 0, 2}, {"Sigmoid", "Tanh", "Tanh"}}, gru{"GRU", 3, {0, 1, 2}, {"Sigmoid", "Tanh"}},
      rnn{"RNN", 1, {0}, {"Tanh"}};
  t["LSTMSequence"].push_back({v5, recurrent(lstm, false)});
  t["GRUSequence"].push_back({v5, recurrent(gru, false)});
  t["RNNSequence"].push_back({v5, recurrent(rnn, false)});
  t["LSTMCell"].push_back({{"opset1", "opset4"}, recurrent(lstm, true)});
  t["GRUCell"].push_back({{"opset3"}, recurrent(gru, true)});
  t["RNNCell"].push_back({{"opset1"}, recurrent(rnn, true)});
}

} // namespace troupe::graph::ir
