/// MatMul (batched, numpy broadcasting of batch dims, 1-D operands) and Gemm on
/// shaders/matmul.comp; layouts and transposes are strides.
#include "kernels/vulkan/lowering.hpp"

namespace troupe::kernels::vulkan {

namespace {

std::string need_f32_all(const graph::Graph& g, const graph::Op& op) {
  for (std::size_t i = 0; i < op.inputs.size(); ++i)
    if (op.inputs[i] != graph::no_value && g.value(op.inputs[i]).type != element_type::f32)
      return "input " + std::to_string(i) + " is " + to_string(g.value(op.inputs[i]).type) + "; the shader is float32 only";
  return check_activation(op);
}

struct mm_plan {
  uint32_t m, n, k;
  std::array<uint32_t, 4> batch{1, 1, 1, 1}, sa{0, 0, 0, 0}, sb{0, 0, 0, 0};
};

/// Batch strides of an operand with batch dims `dims` against the output's 4 batch dims.
std::array<uint32_t, 4> batch_strides(const Shape& dims, uint64_t matrix, const std::array<uint32_t, 4>& out) {
  std::array<uint32_t, 4> s{0, 0, 0, 0};
  uint64_t stride = matrix;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    std::size_t i = dims.size() - 1 - k;
    s[3 - k] = (dims[i] == 1 && out[3 - k] != 1) ? 0 : static_cast<uint32_t>(stride);
    stride *= static_cast<uint64_t>(dims[i]);
  }
  return s;
}

std::optional<mm_plan> plan_matmul(const Shape& a0, const Shape& b0) {
  Shape a = a0, b = b0;
  if (a.empty() || b.empty()) return std::nullopt;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  mm_plan p;
  p.m = static_cast<uint32_t>(a[a.size() - 2]);
  p.k = static_cast<uint32_t>(a.back());
  p.n = static_cast<uint32_t>(b.back());
  if (static_cast<int64_t>(p.k) != b[b.size() - 2]) return std::nullopt;
  Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  std::size_t rank = std::max(ab.size(), bb.size());
  if (rank > 4) return std::nullopt;
  for (std::size_t k = 0; k < rank; ++k) {
    int64_t da = k < ab.size() ? ab[ab.size() - 1 - k] : 1, db = k < bb.size() ? bb[bb.size() - 1 - k] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    p.batch[3 - k] = static_cast<uint32_t>(std::max(da, db));
  }
  p.sa = batch_strides(ab, uint64_t(p.m) * p.k, p.batch);
  p.sb = batch_strides(bb, uint64_t(p.k) * p.n, p.batch);
  return p;
}

spec_map mm_spec(const mm_plan& p) {
  spec_map s;
  s[0] = p.m;
  s[1] = p.n;
  s[2] = p.k;
  for (uint32_t i = 0; i < 4; ++i) {
    s[3 + i] = p.batch[i];
    s[7 + i] = p.sa[i];
    s[11 + i] = p.sb[i];
  }
  s[15] = p.k; // A row-major [M, K]
  s[16] = 1;
  s[17] = p.n; // B row-major [K, N]
  s[18] = 1;
  s[19] = float_bits(1.0f);
  s[20] = float_bits(1.0f);
  s[21] = 0;
  return s;
}

/// Invocations of matmul.comp: `rows` x `cols` blocks of Y (4x4; 8x8 with B as rgba texels).
uint64_t invocations(const mm_plan& p, uint32_t rows = 4, uint32_t cols = 4) {
  return uint64_t(p.batch[0]) * p.batch[1] * p.batch[2] * p.batch[3] * ((p.m + rows - 1) / rows) * ((p.n + cols - 1) / cols);
}

/// MatMul with a right operand without batch dims (weights) as one GEMM over all rows of A
/// on shaders/gemm.comp; false when the shapes do not fit its texel layout.
bool try_gemm(op_builder& b, const mm_plan& p) {
  const auto& g = b.graph();
  const auto& op = b.op();
  if (p.k % 4 != 0 || p.sb != std::array<uint32_t, 4>{0, 0, 0, 0}) return false;
  uint32_t rows = p.batch[0] * p.batch[1] * p.batch[2] * p.batch[3] * p.m;
  uint32_t nt = (p.n + 3) / 4;
  gemm_args a;
  a.a = b.input(0);
  if (p.n % 4 == 0) {
    a.b = b.input(1);
  } else if (g.is_constant(op.inputs[1])) { // pad the weight rows to whole texels
    auto src = const_floats(g, op, 1);
    std::vector<float> padded(std::size_t(p.k) * nt * 4, 0.0f);
    for (uint32_t k = 0; k < p.k; ++k)
      for (uint32_t n = 0; n < p.n; ++n) padded[std::size_t(k) * nt * 4 + n] = src[std::size_t(k) * p.n + n];
    a.b = b.constant(std::move(padded));
  } else {
    return false;
  }
  a.bias = a.a;
  a.y = b.output(0);
  a.m = rows;
  a.n = p.n;
  a.k = p.k;
  a.nt = nt;
  dispatch_gemm(b, a);
  return true;
}

} // namespace

void add_matmul_rules(rule_table& t) {
  t["MatMul"] = {[](const graph::Graph& g, const graph::Op& op) {
                   if (op.input_count() != 2) return std::string("expects 2 inputs");
                   auto w = need_f32_all(g, op);
                   if (!w.empty()) return w;
                   if (!plan_matmul(shape_of(g, op.inputs[0]), shape_of(g, op.inputs[1])))
                     return std::string("shapes need more than 4 batch dims or do not broadcast");
                   return std::string();
                 },
                 [](op_builder& b) {
                   const auto& g = b.graph();
                   const auto& op = b.op();
                   auto p = *plan_matmul(shape_of(g, op.inputs[0]), shape_of(g, op.inputs[1]));
                   if (try_gemm(b, p)) return;
                   spec_map spec = mm_spec(p);
                   add_activation(op, spec);
                   buffer_ref a = b.input(0);
                   // Rows of B in whole texels (so are its batch strides, multiples of K x N).
                   bool b4 = p.n % 4 == 0;
                   b.dispatch(b4 ? "matmul_b4" : "matmul", std::move(spec),
                              {texels(a, 1), texels(b.input(1), b4 ? 4 : 1), a, texels(b.output(0), b4 ? 4 : 1)},
                              b4 ? invocations(p, 4, 8) : invocations(p));
                 },
                 "two f32 inputs; at most 4 batch dims, which broadcast"};

  t["Gemm"] = {[](const graph::Graph& g, const graph::Op& op) {
                 if (op.input_count() < 2) return std::string("expects A and B");
                 auto w = need_f32_all(g, op);
                 if (!w.empty()) return w;
                 if (shape_of(g, op.inputs[0]).size() != 2 || shape_of(g, op.inputs[1]).size() != 2)
                   return std::string("A and B must be 2-D");
                 if (op.input_count() > 2 && shape_of(g, op.inputs[2]).size() > 2) return std::string("C must be at most 2-D");
                 return std::string();
               },
               [](op_builder& b) {
                 const auto& g = b.graph();
                 const auto& op = b.op();
                 Shape a = shape_of(g, op.inputs[0]), bs = shape_of(g, op.inputs[1]);
                 bool ta = op.attr_int("transA", 0) != 0, tb = op.attr_int("transB", 0) != 0;
                 mm_plan p;
                 p.m = static_cast<uint32_t>(ta ? a[1] : a[0]);
                 p.k = static_cast<uint32_t>(ta ? a[0] : a[1]);
                 p.n = static_cast<uint32_t>(tb ? bs[0] : bs[1]);
                 spec_map spec = mm_spec(p);
                 spec[15] = ta ? 1 : p.k;
                 spec[16] = ta ? p.m : 1;
                 spec[17] = tb ? 1 : p.n;
                 spec[18] = tb ? p.k : 1;
                 spec[19] = float_bits(op.attr_float("alpha", 1.0f));
                 spec[20] = float_bits(op.attr_float("beta", 1.0f));
                 buffer_ref ar = b.input(0);
                 buffer_ref c = ar;
                 if (op.input_count() > 2) {
                   Shape cs = shape_of(g, op.inputs[2]);
                   spec[21] = 1;
                   spec[22] = (cs.size() == 2 && cs[0] != 1) ? static_cast<uint32_t>(cs[1]) : 0;
                   spec[23] = (!cs.empty() && cs.back() != 1) ? 1 : 0;
                   c = b.input(2);
                 }
                 add_activation(op, spec);
                 b.dispatch("matmul", std::move(spec), {texels(ar, 1), texels(b.input(1), 1), c, texels(b.output(0), 1)},
                            invocations(p));
               },
               "f32; A and B 2-D, C at most 2-D"};
  // One loop over K (the texel GEMM: K / 4).
  t["MatMul"].trips = [](const graph::Graph& g, const graph::Op& op) {
    const auto p = plan_matmul(shape_of(g, op.inputs[0]), shape_of(g, op.inputs[1]));
    if (!p) return uint64_t{0};
    const bool gemm = p->k % 4 == 0 && p->sb == std::array<uint32_t, 4>{0, 0, 0, 0} && (p->n % 4 == 0 || g.is_constant(op.inputs[1]));
    return gemm ? uint64_t{p->k} / 4 + 8 : uint64_t{p->k} + 8;
  };
  t["Gemm"].trips = [](const graph::Graph& g, const graph::Op& op) {
    const Shape a = shape_of(g, op.inputs[0]);
    return static_cast<uint64_t>(op.attr_int("transA", 0) != 0 ? a[0] : a[1]) + 8;
  };
}

} // namespace troupe::kernels::vulkan
