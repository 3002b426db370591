/// The CPU's attention step (kernels/cpu/attention.hpp): blocks as exporters write them
/// (BERT's Reshape/Transpose, Div and additive mask; a decoder's Transpose of K, Mul and causal
/// mask; GPT-2's select before the mask; rank 3; K and V shared by every head; cross attention), against the reference kernels
/// running every op, at sizes past each block of the kernel (6 rows; 1, 2, 3 and 4 chunks of 16
/// keys and of 16 value elements); and the blocks it must leave to the other steps.
#define BOOST_TEST_MODULE cpu_attention
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "tests/support/cpu_check.hpp"
#include "tests/support/graph_builder.hpp"
#include "kernels/cpu/native_ops.hpp"

using namespace troupe;
using graph::ValueId;
using tests::builder;
using tests::check;
using tests::count_steps;
using ints = std::vector<int64_t>;

namespace {

int count_type(const std::vector<kernels::op_profile>& prof, const std::string& node_type) {
  int n = 0;
  for (const auto& p : prof) n += p.node_type == node_type;
  return n;
}

/// Q, K and V projected and split into heads as BERT's exporters write it: [B, S, H*D] ->
/// Reshape [B, S, H, D] -> Transpose (0 2 1 3; K: 0 2 3 1), scores / sqrt(D) + mask [B, 1, 1, N]
/// -> Softmax -> x V -> Transpose -> Reshape [B, M, H*D]. M query rows, N keys.
builder bert_block(int64_t batch, int64_t heads, int64_t m, int64_t n, int64_t d, bool mask) {
  builder b;
  b.g.opset = 13;
  auto xq = b.input({batch, m, heads * d});
  auto xk = b.input({batch, n, heads * d});
  auto xv = b.input({batch, n, heads * d});
  auto split = [&](ValueId x, int64_t rows, ints perm) {
    return b.op("Transpose", {b.op("Reshape", {x, b.i64s({batch, rows, heads, d})})}, {{"perm", perm}});
  };
  auto q = split(xq, m, {0, 2, 1, 3}), k = split(xk, n, {0, 2, 3, 1}), v = split(xv, n, {0, 2, 1, 3});
  auto s = b.op("Div", {b.op("MatMul", {q, k}), b.scalar(std::sqrt(static_cast<float>(d)))});
  if (mask) s = b.op("Add", {s, b.input({batch, 1, 1, n})});
  auto p = b.op("Softmax", {s}, {{"axis", int64_t{-1}}});
  auto o = b.op("Transpose", {b.op("MatMul", {p, v})}, {{"perm", ints{0, 2, 1, 3}}});
  b.output(b.op("Reshape", {o, b.i64s({batch, m, heads * d})}));
  return b;
}

} // namespace

BOOST_AUTO_TEST_CASE(bert_blocks_run_as_one_step) {
  if (!kernels::cpu::native_avx512_available()) return; // the step is AVX-512 only
  struct size {
    int64_t batch, heads, m, n, d;
  };
  // Rows past one and several blocks of 6 (tails of 1 to 4 rows); keys and elements in 1, 2, 3
  // and 4 chunks of 16 and past 64.
  for (const auto& z : {size{1, 4, 64, 64, 64}, size{2, 3, 13, 13, 40}, size{1, 2, 1, 1, 8}, size{1, 1, 9, 300, 16},
                        size{2, 2, 37, 5, 72}, size{1, 12, 128, 128, 64}, size{1, 2, 11, 29, 24}}) {
    for (bool mask : {true, false}) {
      for (int threads : {1, 2}) {
        BOOST_TEST_CONTEXT("batch " << z.batch << " heads " << z.heads << " m " << z.m << " n " << z.n << " d " << z.d
                                    << (mask ? " mask" : "") << " threads " << threads) {
          auto b = bert_block(z.batch, z.heads, z.m, z.n, z.d, mask);
          const auto prof = check(b.g, 1e-5f, element_type::f32, threads);
          BOOST_TEST(count_steps(prof, "native:attention") == 1);
          // Nothing else of the block ran: its Reshapes, Transposes, MatMuls, scale and Softmax.
          BOOST_TEST(prof.size() == 1u);
        }
      }
    }
  }
}

/// A decoder's block: q and k after rotary ([1, H, S, D], no Transpose), K^T by Transpose(0 1 3
/// 2), Mul by a scale, a causal [S, S] mask of large negatives, V as it is.
BOOST_AUTO_TEST_CASE(decoder_block_with_causal_mask) {
  if (!kernels::cpu::native_avx512_available()) return;
  for (int64_t s : {1, 7, 33}) {
    BOOST_TEST_CONTEXT("seq " << s) {
      builder b;
      b.g.opset = 13;
      const int64_t h = 4, d = 32;
      auto q = b.input({1, h, s, d}), k = b.input({1, h, s, d}), v = b.input({1, h, s, d});
      Tensor causal(element_type::f32, Shape{s, s});
      for (int64_t i = 0; i < s; ++i)
        for (int64_t j = 0; j < s; ++j) causal.data<float>()[i * s + j] = j <= i ? 0.0f : -3.4028e38f;
      auto kt = b.op("Transpose", {k}, {{"perm", ints{0, 1, 3, 2}}});
      auto sc = b.op("Add", {b.op("Mul", {b.op("MatMul", {q, kt}), b.scalar(0.125f)}), b.constant(causal)});
      auto o = b.op("MatMul", {b.op("Softmax", {sc}, {{"axis", int64_t{-1}}}), v});
      b.output(b.op("Transpose", {o}, {{"perm", ints{0, 2, 1, 3}}}));
      const auto prof = check(b.g, 1e-5f);
      BOOST_TEST(count_steps(prof, "native:attention") == 1);
      BOOST_TEST(prof.size() == 1u);
    }
  }
}

/// GPT-2's block: scores / sqrt(D), then Where(causal, scores, min) (a bool [S, S] read by every
/// head; or the condition inverted, Where(future, min, scores)), then + the attention mask.
BOOST_AUTO_TEST_CASE(gpt2_block_with_a_select_and_a_mask) {
  if (!kernels::cpu::native_avx512_available()) return;
  for (bool inverted : {false, true}) {
    for (int64_t s : {1, 5, 40}) {
      BOOST_TEST_CONTEXT((inverted ? "Where(future, min, scores)" : "Where(causal, scores, min)") << " seq " << s) {
        builder b;
        b.g.opset = 13;
        const int64_t h = 3, d = 24;
        auto q = b.input({2, h, s, d}), kt = b.input({2, h, d, s}), v = b.input({2, h, s, d});
        Tensor cond(element_type::boolean, Shape{1, 1, s, s});
        for (int64_t i = 0; i < s; ++i)
          for (int64_t j = 0; j < s; ++j) cond.data<bool>()[i * s + j] = (j <= i) != inverted;
        auto sc = b.op("Div", {b.op("MatMul", {q, kt}), b.scalar(std::sqrt(static_cast<float>(d)))});
        auto fill = b.scalar(-3.4028e38f);
        sc = inverted ? b.op("Where", {b.constant(cond), fill, sc}) : b.op("Where", {b.constant(cond), sc, fill});
        sc = b.op("Add", {sc, b.input({2, 1, 1, s})});
        b.output(b.op("MatMul", {b.op("Softmax", {sc}, {{"axis", int64_t{-1}}}), v}));
        const auto prof = check(b.g, 1e-5f);
        BOOST_TEST(count_steps(prof, "native:attention") == 1);
        BOOST_TEST(prof.size() == 1u);
      }
    }
  }
}

/// Rank 3 ([B*H, M, D]), no scale or mask, the output a graph output as the MatMul makes it; and
/// K and V with one head read by four query heads (ONNX MatMul broadcasting).
BOOST_AUTO_TEST_CASE(rank_three_and_shared_keys) {
  if (!kernels::cpu::native_avx512_available()) return;
  {
    builder b;
    b.g.opset = 13;
    auto q = b.input({6, 10, 24}), kt = b.input({6, 24, 19}), v = b.input({6, 19, 20});
    b.output(b.op("MatMul", {b.op("Softmax", {b.op("MatMul", {q, kt})}, {{"axis", int64_t{2}}}), v}));
    const auto prof = check(b.g, 1e-5f);
    BOOST_TEST(count_steps(prof, "native:attention") == 1);
    BOOST_TEST(prof.size() == 1u);
  }
  {
    builder b;
    b.g.opset = 13;
    auto q = b.input({2, 4, 9, 16}), kt = b.input({2, 1, 16, 11}), v = b.input({2, 1, 11, 16});
    auto p = b.op("Softmax", {b.op("MatMul", {q, kt})}, {{"axis", int64_t{-1}}});
    b.output(b.op("MatMul", {p, v}));
    const auto prof = check(b.g, 1e-5f);
    BOOST_TEST(count_steps(prof, "native:attention") == 1);
  }
}

/// Where a value inside the block is read elsewhere, or the Softmax is not over the keys, the
/// ops run as they are (and still agree with the reference).
BOOST_AUTO_TEST_CASE(blocks_it_leaves_alone) {
  if (!kernels::cpu::native_avx512_available()) return;
  {
    builder b = bert_block(1, 2, 8, 8, 16, true);
    // The probabilities are a graph output too: they must exist.
    for (const auto& op : b.g.ops)
      if (op.type == "Softmax") b.output(op.outputs[0]);
    const auto prof = check(b.g, 1e-5f);
    BOOST_TEST(count_steps(prof, "native:attention") == 0);
    BOOST_TEST(count_type(prof, "Softmax") == 1);
  }
  {
    builder b;
    b.g.opset = 13;
    auto q = b.input({1, 2, 8, 16}), kt = b.input({1, 2, 16, 8}), v = b.input({1, 2, 8, 16});
    auto p = b.op("Softmax", {b.op("MatMul", {q, kt})}, {{"axis", int64_t{2}}}); // over the query rows
    b.output(b.op("MatMul", {p, v}));
    const auto prof = check(b.g, 1e-5f);
    BOOST_TEST(count_steps(prof, "native:attention") == 0);
  }
}
