/// The CPU's native LSTM, GRU and RNN steps (kernels/cpu/lstm.hpp, gru.hpp, vanilla_rnn.hpp)
/// against the reference kernel: sizes past each block of the kernels (6-row input blocks and
/// their tails, 64-column input blocks, 128-column recurrent blocks, hidden sizes that are no
/// multiple of 16), each direction, both layouts, with and without biases and initial states,
/// every output, GRU with and without linear_before_reset, on two and one threads, and
/// pre-activations large enough to saturate every gate; and what they leave to oneDNN.
#define BOOST_TEST_MODULE cpu_recurrent
#include <boost/test/unit_test.hpp>

#include "kernels/cpu/native_ops.hpp"
#include "tests/support/cpu_check.hpp"
#include "tests/support/graph_builder.hpp"

using namespace troupe;
using tests::builder;
using tests::check;
using tests::count_steps;

namespace {

struct rnn_case {
  int64_t T, N, I, H;
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true, initial = true, all_outputs = true;
  float input_scale = 1.0f; ///< X is multiplied by it first: 40 saturates the gates
};

/// An LSTM (gates 4), GRU (3) or RNN (1) of case `c` with every output (or Y alone).
builder rnn_graph(const std::string& type, const rnn_case& c, std::map<std::string, graph::AttributeValue> extra = {}) {
  const int64_t gates = type == "LSTM" ? 4 : type == "GRU" ? 3 : 1;
  builder b;
  b.g.opset = 14;
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  graph::ValueId x = b.input(c.layout ? Shape{c.N, c.T, c.I} : Shape{c.T, c.N, c.I});
  if (c.input_scale != 1.0f) {
    Tensor s(element_type::f32, Shape{});
    s.data<float>()[0] = c.input_scale;
    x = b.op("Mul", {x, b.constant(s)});
  }
  const Shape state = c.layout ? Shape{c.N, D, c.H} : Shape{D, c.N, c.H};
  std::vector<graph::ValueId> in{x, b.weights({D, gates * c.H, c.I}), b.weights({D, gates * c.H, c.H}),
                                 c.bias ? b.weights({D, 2 * gates * c.H}) : graph::no_value, graph::no_value};
  in.push_back(c.initial ? b.input(state) : graph::no_value);
  if (type == "LSTM") in.push_back(c.initial ? b.input(state) : graph::no_value);
  while (in.back() == graph::no_value) in.pop_back();
  extra["hidden_size"] = c.H;
  extra["direction"] = c.direction;
  extra["layout"] = c.layout;
  const int outs = type == "LSTM" ? 3 : 2;
  b.op(type, in, extra, outs);
  const auto made = b.g.ops.back().outputs;
  b.output(made[0]);
  if (c.all_outputs)
    for (int i = 1; i < outs; ++i) b.output(made[static_cast<std::size_t>(i)]);
  return b;
}

/// Shapes past every block and tail of the kernels.
const std::vector<rnn_case>& cases() {
  static const std::vector<rnn_case> all{
      {1, 1, 1, 1},                             // one of everything
      {13, 1, 33, 20},                          // rows: 2 blocks of 6 and a tail of 1; 80 gate columns
      {5, 2, 5, 7, "bidirectional"},            // 10 rows: a block and a tail of 4; 28 columns
      {4, 3, 17, 40, "reverse", 1},             // 160 columns: a full recurrent block and 2 chunks
      {7, 1, 64, 64, "bidirectional", 1},       // 256 columns: whole blocks only
      {3, 8, 9, 16, "bidirectional", 0, false}, // the largest native batch; no bias
      {6, 2, 11, 12, "forward", 0, true, false, false}, // zero initial state, Y alone
      {9, 1, 8, 24, "bidirectional", 0, true, true, true, 40.0f}, // saturated gates
      {37, 1, 40, 32, "forward", 1},            // one direction's input products shared by 2 threads: 24 + 13 rows
  };
  return all;
}

/// Each case on 2 and 1 threads at 1e-5 against the reference, run by one step `exec_type`. Two
/// threads first: scratch left by a 1-thread run of the same shape would hide a share of the
/// input products that no thread computed.
void check_native(const std::string& type, const std::map<std::string, graph::AttributeValue>& extra,
                  const std::string& exec_type) {
  for (const auto& c : cases())
    for (int threads : {2, 1})
      BOOST_TEST_CONTEXT(type << " T " << c.T << " N " << c.N << " I " << c.I << " H " << c.H << " " << c.direction
                              << " layout " << c.layout << " bias " << c.bias << " initial " << c.initial << " scale "
                              << c.input_scale << ", " << extra.size() << " extra attributes, " << threads << " threads") {
        const auto prof = check(rnn_graph(type, c, extra).g, 1e-5f, element_type::f32, threads);
        BOOST_TEST(count_steps(prof, exec_type) == 1);
      }
}

} // namespace

BOOST_AUTO_TEST_CASE(native_lstm_matches_the_reference) {
  if (!kernels::cpu::native_avx512_available()) return; // oneDNN's cell runs it (cpu_tests)
  check_native("LSTM", {}, "native:lstm");
}

BOOST_AUTO_TEST_CASE(native_gru_matches_the_reference) {
  if (!kernels::cpu::native_avx512_available()) return;
  check_native("GRU", {}, "native:gru");
  check_native("GRU", {{"linear_before_reset", int64_t{1}}}, "native:gru");
}

BOOST_AUTO_TEST_CASE(native_rnn_matches_the_reference) {
  if (!kernels::cpu::native_avx512_available()) return;
  check_native("RNN", {}, "native:rnn");
}

BOOST_AUTO_TEST_CASE(what_the_native_steps_leave_to_onednn) {
  if (!kernels::cpu::native_avx512_available()) return;
  using strs = std::vector<std::string>;
  // A batch past the native cut-over; clip; input_forget; another activation. Each still matches.
  struct left {
    rnn_case c;
    std::map<std::string, graph::AttributeValue> extra;
  };
  struct left_of {
    std::string type;
    left l;
  };
  const std::vector<left_of> cases{
      {"LSTM", {{3, 9, 5, 7}, {}}},
      {"LSTM", {{3, 2, 5, 7}, {{"clip", 0.5f}}}},
      {"LSTM", {{3, 2, 5, 7}, {{"input_forget", int64_t{1}}}}},
      {"LSTM", {{3, 2, 5, 7}, {{"activations", strs{"Sigmoid", "Tanh", "Relu"}}}}},
      {"GRU", {{3, 9, 5, 7}, {}}},
      {"GRU", {{3, 2, 5, 7}, {{"clip", 0.5f}}}},
      {"GRU", {{3, 2, 5, 7}, {{"activations", strs{"Sigmoid", "Relu"}}}}},
      {"RNN", {{3, 9, 5, 7}, {}}},
      {"RNN", {{3, 2, 5, 7}, {{"activations", strs{"Relu"}}}}},
  };
  for (const auto& [type, l] : cases)
    BOOST_TEST_CONTEXT(type << " batch " << l.c.N << ", " << l.extra.size() << " extra attributes") {
      const auto prof = check(rnn_graph(type, l.c, l.extra).g, 1e-5f);
      BOOST_TEST(count_steps(prof, "native:lstm") + count_steps(prof, "native:gru") + count_steps(prof, "native:rnn") == 0);
    }
}
