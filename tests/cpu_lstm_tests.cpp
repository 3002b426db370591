/// The CPU's native LSTM step (kernels/cpu/lstm.hpp) against the reference kernel: sizes past
/// each block of the kernel (6-row input blocks and their tails, 64-column input blocks,
/// 128-column recurrent blocks, hidden sizes that are no multiple of 16), each direction, both
/// layouts, with and without biases and initial states, every output, on one and two threads,
/// and pre-activations large enough to saturate every gate; and what it leaves to oneDNN.
#define BOOST_TEST_MODULE cpu_lstm
#include <boost/test/unit_test.hpp>

#include "kernels/cpu/native_ops.hpp"
#include "tests/support/cpu_check.hpp"
#include "tests/support/graph_builder.hpp"

using namespace troupe;
using tests::builder;
using tests::check;
using tests::count_steps;

namespace {

struct lstm_case {
  int64_t T, N, I, H;
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true, initial = true, all_outputs = true;
  float input_scale = 1.0f; ///< X is multiplied by it first: 40 saturates the gates
};

builder lstm_graph(const lstm_case& c, std::map<std::string, graph::AttributeValue> extra = {}) {
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
  std::vector<graph::ValueId> in{x, b.weights({D, 4 * c.H, c.I}), b.weights({D, 4 * c.H, c.H}),
                                 c.bias ? b.weights({D, 8 * c.H}) : graph::no_value, graph::no_value};
  in.push_back(c.initial ? b.input(state) : graph::no_value);
  in.push_back(c.initial ? b.input(state) : graph::no_value);
  while (in.back() == graph::no_value) in.pop_back();
  extra["hidden_size"] = c.H;
  extra["direction"] = c.direction;
  extra["layout"] = c.layout;
  b.op("LSTM", in, extra, 3);
  const auto made = b.g.ops.back().outputs;
  b.output(made[0]);
  if (c.all_outputs) {
    b.output(made[1]);
    b.output(made[2]);
  }
  return b;
}

} // namespace

BOOST_AUTO_TEST_CASE(native_lstm_matches_the_reference) {
  if (!kernels::cpu::native_avx512_available()) return; // oneDNN's cell runs it (cpu_tests)
  const std::vector<lstm_case> cases{
      {1, 1, 1, 1},                             // one of everything
      {13, 1, 33, 20},                          // rows: 2 blocks of 6 and a tail of 1; 80 gate columns
      {5, 2, 5, 7, "bidirectional"},            // 10 rows: a block and a tail of 4; 28 columns
      {4, 3, 17, 40, "reverse", 1},             // 160 columns: a full recurrent block and 2 chunks
      {7, 1, 64, 64, "bidirectional", 1},       // 256 columns: whole blocks only
      {3, 8, 9, 16, "bidirectional", 0, false}, // the largest native batch; no bias
      {6, 2, 11, 12, "forward", 0, true, false, false}, // zero initial state, Y alone
      {9, 1, 8, 24, "bidirectional", 0, true, true, true, 40.0f}, // saturated gates
  };
  for (const auto& c : cases)
    for (int threads : {1, 2})
      BOOST_TEST_CONTEXT("T " << c.T << " N " << c.N << " I " << c.I << " H " << c.H << " " << c.direction << " layout "
                              << c.layout << " bias " << c.bias << " initial " << c.initial << " scale "
                              << c.input_scale << ", " << threads << " threads") {
        const auto prof = check(lstm_graph(c).g, 1e-5f, element_type::f32, threads);
        BOOST_TEST(count_steps(prof, "native:lstm") == 1);
      }
}

BOOST_AUTO_TEST_CASE(what_the_native_step_leaves_to_onednn) {
  if (!kernels::cpu::native_avx512_available()) return;
  using strs = std::vector<std::string>;
  // A batch past the native cut-over; clip; input_forget; another activation. Each still matches.
  struct left {
    lstm_case c;
    std::map<std::string, graph::AttributeValue> extra;
  };
  const std::vector<left> cases{
      {{3, 9, 5, 7}, {}},
      {{3, 2, 5, 7}, {{"clip", 0.5f}}},
      {{3, 2, 5, 7}, {{"input_forget", int64_t{1}}}},
      {{3, 2, 5, 7}, {{"activations", strs{"Sigmoid", "Tanh", "Relu"}}}},
  };
  for (const auto& l : cases)
    BOOST_TEST_CONTEXT("batch " << l.c.N << ", " << l.extra.size() << " extra attributes") {
      const auto prof = check(lstm_graph(l.c, l.extra).g, 1e-5f);
      BOOST_TEST(count_steps(prof, "native:lstm") == 0);
    }
}
