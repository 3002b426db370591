#include "kernels/cpu/integer_matmul.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include <troupe/exception.hpp>

#include "kernels/cpu/int8_ops.hpp"
#include "kernels/cpu/integer_gemm_s16.hpp"
#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/team.hpp"
#include "kernels/reference/common.hpp"
#include "kernels/reference/interpreter.hpp"

namespace troupe::kernels::cpu {

namespace {

using graph::no_value;
using graph::Op;
using graph::ValueId;
using dt = memory::data_type;
using tag = memory::format_tag;


/// in: [0] the s32 product, [1] the activation's zero point (u8, one value; empty: 0), [2] the
/// weights' column sums, [3] the weights' zero points (empty: 0), [4] (only with [3]) the u8
/// activation, whose row sums the pass takes, or those sums given, s32, less the zero point's
/// (a convolution's window sums: G per row, one per group of n / G columns), [5] the scale (one value or one per column; empty: 1), [6] the
/// bias (empty: none), [7] the product with the high part of split weights (empty: none),
/// [8] (optional; AVX-512 only) a residual of the result's shape added after the bias.
/// out[0]: s32 or f32, the product's shape (in place over [0] for s32).
template <bool with_wz, bool per_column, bool with_bias, bool to_float, bool split>
void epilogue_rows(const std::vector<Tensor>& in, std::vector<Tensor>& out, epilogue_activation act) {
  const Tensor& acc = in[0];
  const int64_t n = static_cast<int64_t>(in[2].get_size());
  const int64_t rows = n ? static_cast<int64_t>(acc.get_size()) / n : 0;
  const int32_t az = in[1].empty() ? 0 : static_cast<int32_t>(in[1].data<uint8_t>()[0]);
  const int32_t* cs = in[2].data<int32_t>();
  const int32_t* wz = with_wz ? in[3].data<int32_t>() : nullptr;
  const bool given = with_wz && in[4].get_element_type() == element_type::i32;
  const uint8_t* a = with_wz && !given ? in[4].data<uint8_t>() : nullptr;
  const int32_t* sums = given ? in[4].data<int32_t>() : nullptr;
  const int64_t k = with_wz && !given && rows ? static_cast<int64_t>(in[4].get_size()) / rows : 0;
  const int64_t groups = given && rows ? std::max<int64_t>(1, static_cast<int64_t>(in[4].get_size()) / rows) : 1;
  const int64_t per_group = n / groups;
  const float* sc = in[5].empty() ? nullptr : in[5].data<float>();
  const float s0 = sc ? sc[0] : 1.f;
  const float* bias = with_bias ? in[6].data<float>() : nullptr;
  const int32_t* accp = acc.data<int32_t>();
  const int32_t* highp = split ? in[7].data<int32_t>() : nullptr;
  const float* residual = in.size() > 8 && !in[8].empty() ? in[8].data<float>() : nullptr;
  const bool avx512 = to_float && !split && native_avx512_available();
  if ((act != epilogue_activation::none || residual) && (!avx512 || given))
    throw Exception("internal: an integer product's Gelu or residual needs the AVX-512 epilogue");
  auto one_row = [&](int64_t m) {
    const int32_t* r = accp + m * n;
    const int32_t* h = split ? highp + m * n : nullptr;
    // Columns [j0, j1), whose weight zero points multiply the row sum rs.
    auto columns = [&](int64_t j0, int64_t j1, int32_t rs) {
      auto exact = [&](int64_t j) { // the integer product with the zero points' terms taken off
        int32_t v = r[j] - az * cs[j];
        if constexpr (split) v += h[j] * 64;
        if constexpr (with_wz) v -= wz[j] * rs;
        return v;
      };
      if constexpr (to_float) {
        float* y = out[0].data<float>() + m * n;
        // A convolution's narrow groups (depthwise: one column each) stay on the generic loop:
        // a call per group costs more than the AVX-512 pass saves.
        if (avx512 && (j1 - j0 >= 16 || act != epilogue_activation::none || residual)) {
          epilogue_row e;
          e.acc = r + j0;
          e.y = y + j0;
          e.n = j1 - j0;
          e.az = az;
          e.column_sums = cs + j0;
          e.weight_zp = with_wz ? wz + j0 : nullptr;
          e.rs = rs;
          e.scale = per_column ? sc + j0 : nullptr;
          e.s0 = s0;
          e.bias = with_bias ? bias + j0 : nullptr;
          e.residual = residual ? residual + m * n + j0 : nullptr;
          integer_epilogue_row_512(e, act);
          return;
        }
#pragma omp simd
        for (int64_t j = j0; j < j1; ++j) {
          float f = static_cast<float>(exact(j)) * (per_column ? sc[j] : s0);
          if constexpr (with_bias) f += bias[j];
          y[j] = f;
        }
      } else {
        int32_t* y = out[0].data<int32_t>() + m * n;
#pragma omp simd
        for (int64_t j = j0; j < j1; ++j) y[j] = exact(j);
      }
    };
    if (given) {
      for (int64_t g = 0; g < groups; ++g) columns(g * per_group, (g + 1) * per_group, sums[m * groups + g]);
    } else {
      int32_t rs = 0;
      if constexpr (with_wz) {
        int32_t sum = 0;
        const uint8_t* ar = a + m * k;
#pragma omp simd reduction(+ : sum)
        for (int64_t i = 0; i < k; ++i) sum += ar[i];
        rs = sum - static_cast<int32_t>(k) * az;
      }
      columns(0, n, rs);
    }
  };
  TROUPE_TEAM_FOR(m, rows, rows * n > 32768, one_row(m));
}

template <bool with_wz, bool per_column, bool with_bias, bool split>
void epilogue_out(const std::vector<Tensor>& in, std::vector<Tensor>& out, epilogue_activation act) {
  if (out[0].get_element_type() == element_type::f32) epilogue_rows<with_wz, per_column, with_bias, true, split>(in, out, act);
  else epilogue_rows<with_wz, per_column, with_bias, false, split>(in, out, act);
}

template <bool with_wz, bool per_column, bool with_bias>
void epilogue_split(const std::vector<Tensor>& in, std::vector<Tensor>& out, epilogue_activation act) {
  if (!in[7].empty()) epilogue_out<with_wz, per_column, with_bias, true>(in, out, act);
  else epilogue_out<with_wz, per_column, with_bias, false>(in, out, act);
}

template <bool with_wz>
void epilogue_scale(const std::vector<Tensor>& in, std::vector<Tensor>& out, epilogue_activation act) {
  const bool per_column = !in[5].empty() && in[5].get_size() > 1, bias = !in[6].empty();
  if (per_column) bias ? epilogue_split<with_wz, true, true>(in, out, act) : epilogue_split<with_wz, true, false>(in, out, act);
  else bias ? epilogue_split<with_wz, false, true>(in, out, act) : epilogue_split<with_wz, false, false>(in, out, act);
}

template <epilogue_activation act>
void integer_matmul_epilogue(const reference::context&, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  if (!in[3].empty()) epilogue_scale<true>(in, out, act);
  else epilogue_scale<false>(in, out, act);
}

reference::kernel_fn epilogue_kernel(epilogue_activation act) {
  switch (act) {
  case epilogue_activation::gelu_erf: return integer_matmul_epilogue<epilogue_activation::gelu_erf>;
  case epilogue_activation::gelu_tanh: return integer_matmul_epilogue<epilogue_activation::gelu_tanh>;
  default: return integer_matmul_epilogue<epilogue_activation::none>;
  }
}

} // namespace

reference::kernel_fn integer_product_epilogue() { return integer_matmul_epilogue<epilogue_activation::none>; }

bool integer_gemm_s16_chosen() {
  const char* off = std::getenv("TROUPE_CPU_NO_INT8_S16"); // read per compile: tests switch it
  return !int8_exact_here() && integer_gemm_s16_here() && !(off && *off && *off != '0');
}

namespace {

/// One reader, not a graph output: the value may live only inside the fused step.
bool sole_reader(const plan_builder& b, ValueId v, std::size_t& reader) {
  const auto& rd = b.readers(v);
  if (rd.size() != 1 || b.is_graph_output(v)) return false;
  reader = rd[0];
  return true;
}

/// `v` is f32 with one value, or one per channel along `axis` of an `rank`-dim result
/// (numpy broadcasting: [C], [C, 1, 1], [1, C, 1, 1] for axis 1 of 4).
bool channel_operand(const plan_builder& b, ValueId v, int64_t channels, std::size_t axis, std::size_t rank,
                     bool one_ok) {
  if (v == no_value || b.val(v).type != element_type::f32 || !b.val(v).shape.is_static()) return false;
  const Shape s = b.shape(v);
  const int64_t size = shape_size(s);
  if (size == 1) return one_ok;
  if (size != channels || s.size() > rank) return false;
  const std::size_t at = rank - s.size(); // s's dim i is the result's dim at + i
  return axis >= at && s[axis - at] == channels;
}

} // namespace

float_chain follow_float_chain(const plan_builder& b, ValueId y, int64_t channels, std::size_t axis, bool take_more) {
  float_chain c;
  const auto& g = b.g;
  std::size_t cast = 0, mul = 0, add = 0;
  if (!sole_reader(b, y, cast)) return c;
  const Op& ct = g.ops[cast];
  if (ct.type != "Cast" || !ct.domain.empty() || ct.outputs.size() != 1 || b.val(ct.outputs[0]).type != element_type::f32)
    return c;
  c.ops = {cast};
  const Shape ys = b.shape(y);
  auto same_shape = [&](const Op& o) {
    return o.outputs.size() == 1 && b.val(o.outputs[0]).shape.is_static() && b.shape(o.outputs[0]) == ys &&
           !o.has_attr("activation");
  };
  if (!sole_reader(b, ct.outputs[0], mul)) return c;
  const Op& m = g.ops[mul];
  if (m.type != "Mul" || !m.domain.empty() || m.inputs.size() != 2 || !same_shape(m)) return c;
  const ValueId scale = m.inputs[0] == ct.outputs[0] ? m.inputs[1] : m.inputs[0];
  if (!channel_operand(b, scale, channels, axis, ys.size(), true)) return c;
  c.scale = scale;
  c.ops.push_back(mul);
  if (!sole_reader(b, m.outputs[0], add)) return c;
  const Op& a = g.ops[add];
  if (a.type != "Add" || !a.domain.empty() || a.inputs.size() != 2 || !same_shape(a)) return c;
  const ValueId bias = a.inputs[0] == m.outputs[0] ? a.inputs[1] : a.inputs[0];
  if (!g.is_constant(bias) || !channel_operand(b, bias, channels, axis, ys.size(), false)) return c;
  c.bias = bias;
  c.ops.push_back(add);
  // Where the AVX-512 pass runs, what a transformer puts after the bias: a Gelu (the
  // feed-forward layer's first product) or the residual connection's Add (its second, and the
  // attention's output projection), a pass over the activation less each.
  std::size_t next = 0;
  if (!take_more || !native_avx512_available() || !sole_reader(b, a.outputs[0], next)) return c;
  const Op& o = g.ops[next];
  if (!o.domain.empty() || !same_shape(o) || b.val(o.outputs[0]).type != element_type::f32) return c;
  if (o.type == "Gelu") {
    const std::string form = o.attr_string("approximate", "none");
    if (form != "none" && form != "tanh") return c;
    c.activation = form == "tanh" ? epilogue_activation::gelu_tanh : epilogue_activation::gelu_erf;
    c.ops.push_back(next);
  } else if (o.type == "Add" && o.inputs.size() == 2) {
    const ValueId other = o.inputs[0] == a.outputs[0] ? o.inputs[1] : o.inputs[0];
    if (other == a.outputs[0] || g.is_constant(other) || b.val(other).type != element_type::f32 ||
        !b.val(other).shape.is_static() || b.shape(other) != ys)
      return c;
    c.residual = other;
    c.ops.push_back(next);
  }
  return c;
}

namespace {

/// What integer_matmul_site takes from the weights (its fields of the same names).
struct integer_weights {
  Tensor weights, weights_high, column_sums, weight_zp, panels;
};


/// B [K, N] (u8 or s8) and its zero points (one, or one per column; null: none) as the site
/// wants them: s8 weights (u8 shifted by 128), split into l and h where oneDNN's int8 products
/// are not exact, the s8 column sums and the zero points per column (empty when all 0); for
/// integer_gemm_s16 (`native`) the s8 weights in its panels instead.
integer_weights derive_integer_weights(const Tensor& w, const Tensor* zero_points, int64_t k, int64_t n, bool native) {
  const bool u8 = w.get_element_type() == element_type::u8;
  const std::vector<double> zp = zero_points ? reference::to_doubles(*zero_points) : std::vector<double>{};
  auto raw = [&](int64_t i) { return u8 ? static_cast<int32_t>(w.data<uint8_t>()[i]) : static_cast<int32_t>(w.data<int8_t>()[i]); };
  // Stored as q = w - shift (s8), the shift going into the zero points. Without exact int8
  // products, weights with max - min <= 128 (7-bit ones, as quantize_dynamic's reduce_range
  // writes) are shifted into [-64, 64], where no 16-bit pair sum saturates (255 x 128 < 2^15):
  // one product then, not two of split weights.
  int32_t shift = u8 ? 128 : 0;
  bool split = !int8_exact_here() && !native;
  if (split && k * n > 0) {
    int32_t lo = raw(0), hi = lo;
    for (int64_t i = 1; i < k * n; ++i) {
      const int32_t v = raw(i);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (hi - lo <= 128) {
      shift = lo + 64;
      split = false;
    }
  }
  integer_weights r;
  r.weights = Tensor(element_type::i8, Shape{k, n});
  r.column_sums = Tensor(element_type::i32, Shape{n});
  auto* q = r.weights.data<int8_t>();
  auto* cs = r.column_sums.data<int32_t>();
  std::fill(cs, cs + n, 0);
  auto shifted = [&](const auto* src) { // row by row: the column sums without a division
    for (int64_t row = 0; row < k; ++row)
      for (int64_t j = 0; j < n; ++j) {
        const int32_t v = static_cast<int32_t>(src[row * n + j]) - shift;
        q[row * n + j] = static_cast<int8_t>(v);
        cs[j] += v;
      }
  };
  if (u8) shifted(w.data<uint8_t>());
  else shifted(w.data<int8_t>());
  bool any = false;
  Tensor wz(element_type::i32, Shape{n});
  for (int64_t j = 0; j < n; ++j) {
    const double z = zp.empty() ? 0.0 : zp[zp.size() == 1 ? 0 : static_cast<std::size_t>(j)];
    wz.data<int32_t>()[j] = static_cast<int32_t>(z) - shift;
    any = any || wz.data<int32_t>()[j] != 0;
  }
  if (any) r.weight_zp = std::move(wz);
  if (native) {
    r.panels = pack_s16_panels(q, k, n);
    r.weights = Tensor();
    return r;
  }
  if (split) { // w = 64 h + l: l in [0, 63], h in [-2, 1]
    r.weights_high = Tensor(element_type::i8, Shape{k, n});
    auto* h = r.weights_high.data<int8_t>();
    for (int64_t i = 0; i < k * n; ++i) {
      const int32_t v = q[i], l = v & 63;
      h[i] = static_cast<int8_t>((v - l) / 64);
      q[i] = static_cast<int8_t>(l);
    }
  }
  return r;
}

class finder {
public:
  explicit finder(plan_builder& b) : b_(b), g_(b.g) {}

  std::optional<integer_matmul_site> site(std::size_t k) {
    const Op& op = g_.ops[k];
    if (op.type != "MatMulInteger" || !op.domain.empty() || op.outputs.size() != 1) return std::nullopt;
    const ValueId A = input_or_none(op, 0), B = input_or_none(op, 1), AZ = input_or_none(op, 2), BZ = input_or_none(op, 3), Y = op.outputs[0];
    if (A == no_value || g_.is_constant(A) || b_.val(A).type != element_type::u8 || !b_.val(A).shape.is_static())
      return std::nullopt;
    if (!g_.is_constant(B) || b_.shape(B).size() != 2 || !b_.val(Y).shape.is_static() ||
        b_.val(Y).type != element_type::i32)
      return std::nullopt;
    const element_type bt = b_.val(B).type;
    if (bt != element_type::u8 && bt != element_type::i8) return std::nullopt;
    const Shape as = b_.shape(A), ws = b_.shape(B), ys = b_.shape(Y);
    if (as.size() < 2 || as.back() != ws[0] || ys.size() != as.size() || ys.back() != ws[1]) return std::nullopt;
    integer_matmul_site s;
    s.matmul = s.last = k;
    s.k = ws[0];
    s.n = ws[1];
    s.rows = shape_size(as) / std::max<int64_t>(1, s.k);
    if (s.rows == 0 || s.k == 0 || s.n == 0) return std::nullopt;
    // The activation's zero point: one u8 value, known now or at run time.
    if (AZ != no_value && (b_.val(AZ).type != element_type::u8 || !b_.val(AZ).shape.is_static() ||
                           shape_size(b_.shape(AZ)) != 1))
      return std::nullopt;
    if (!weights(B, BZ, s)) return std::nullopt;
    // The AVX-512 pass takes a Gelu or a residual Add; integer_gemm_s16 (AVX2, no VNNI) and
    // split weights' two products (AVX-512 without VNNI) end at the bias.
    const auto c = follow_float_chain(b_, Y, s.n, ys.size() - 1, s.panels.empty() && s.weights_high.empty());
    s.chain = c.ops;
    s.scale = c.scale;
    s.bias = c.bias;
    s.activation = c.activation;
    s.residual = c.residual;
    if (!s.chain.empty()) s.last = s.chain.back();
    return s;
  }

private:
  plan_builder& b_;
  const graph::Graph& g_;

  /// The weights as s8 (u8 ones shifted by 128, their zero points with them), their column
  /// sums and the zero points per column; derived once per compiled model (b_.derived).
  bool weights(ValueId B, ValueId BZ, integer_matmul_site& s) const {
    const Tensor& w = *g_.value(B).constant;
    std::vector<Tensor> sources{w};
    if (BZ != no_value) {
      if (!g_.is_constant(BZ) || b_.val(BZ).type != w.get_element_type()) return false;
      const int64_t zn = shape_size(b_.shape(BZ));
      if (zn != 1 && zn != s.n) return false;
      sources.push_back(*g_.value(BZ).constant);
    }
    const int64_t k = s.k, n = s.n;
    const bool native = integer_gemm_s16_chosen();
    const std::function<integer_weights()> make = [&] {
      return derive_integer_weights(w, BZ == no_value ? nullptr : &sources[1], k, n, native);
    };
    const std::string kind = std::string(native ? "cpu integer_matmul s16 panels " : "cpu integer_matmul weights ") +
                             std::to_string(k) + "x" + std::to_string(n);
    const integer_weights iw = b_.derived ? *b_.derived->get<integer_weights>(kind, sources, make) : make();
    s.weights = iw.weights;
    s.weights_high = iw.weights_high;
    s.column_sums = iw.column_sums;
    s.weight_zp = iw.weight_zp;
    s.panels = iw.panels;
    return true;
  }
};

memory::desc rows_md(int64_t rows, int64_t cols, dt type) { return memory::desc({rows, cols}, type, tag::ab); }

} // namespace

integer_products find_integer_products(plan_builder& b, const std::set<std::size_t>& taken) {
  integer_products r;
  finder f(b);
  for (std::size_t k = 0; k < b.g.ops.size(); ++k) {
    if (taken.count(k) || reference::interpreter::is_dynamic(b.g, b.g.ops[k])) continue;
    if (auto c = find_integer_conv(b, k)) {
      for (auto j : c->chain.ops)
        if (j != c->last) r.inside.insert(j);
      if (c->last != k) r.inside.insert(k);
      r.convs.emplace(c->last, std::move(*c));
      continue;
    }
    auto s = f.site(k);
    if (!s) continue;
    if (s->panels.empty()) try {
      dnnl::matmul::desc d(rows_md(s->rows, s->k, dt::u8), memory::desc({s->k, s->n}, dt::s8, tag::any),
                           rows_md(s->rows, s->n, dt::s32));
      s->pd = dnnl::matmul::primitive_desc(d, plan_builder::base_attr(), b.p.eng);
    } catch (const dnnl::error&) {
      continue; // no int8 product here: the reference kernel runs the op
    }
    // The chain's ops before its last make no step of their own.
    for (auto j : s->chain)
      if (j != s->last) r.inside.insert(j);
    r.matmul_by_last.emplace(s->last, k);
    r.matmuls.emplace(k, std::move(*s));
  }
  return r;
}

void build_integer_matmul(plan_builder& b, const graph::Op& op, integer_matmul_site& s) {
  if (!s.panels.empty()) return; // one step, at the chain's last op
  const memory::desc src = s.pd.src_desc(), wei = s.pd.weights_desc(), dst = s.pd.dst_desc();
  const ValueId A = op.inputs[0], Y = op.outputs[0];
  const int a_buf = b.input_plain(A);
  auto product = [&](const Tensor& w, int into) {
    const int w_buf = b.const_buffer(b.reorder_constant(w, rows_md(s.k, s.n, dt::s8), wei));
    b.add_dnnl(op, s.pd, dnnl::matmul(s.pd), {{DNNL_ARG_SRC, a_buf, src}, {DNNL_ARG_WEIGHTS, w_buf, wei}, {DNNL_ARG_DST, into, dst}});
    b.p.steps.back().exec_type += " int8";
  };
  product(s.weights, b.output(Y, b.plain(Y)));
  if (s.weights_high.empty()) return;
  s.high_buffer = b.typed_buffer(element_type::i32, b.shape(Y));
  product(s.weights_high, s.high_buffer);
  b.p.steps.back().name += "/high";
}

namespace {

/// The product and the epilogue in one integer_gemm_s16 step.
void build_integer_gemm_s16(plan_builder& b, const graph::Op& last, const integer_matmul_site& s) {
  const Op& mm = b.g.ops[s.matmul];
  const ValueId AZ = input_or_none(mm, 2);
  std::vector<int> ins{b.input_plain(mm.inputs[0]), AZ == no_value ? -1 : b.input_plain(AZ), b.const_buffer(s.panels),
                       b.const_buffer(s.column_sums), s.weight_zp.empty() ? -1 : b.const_buffer(s.weight_zp),
                       s.scale == no_value ? -1 : b.input_plain(s.scale), s.bias == no_value ? -1 : b.input_plain(s.bias)};
  const int wide = b.typed_buffer(element_type::i16, Shape{s.rows, (s.k + 1) / 2 * 2});
  const int sums = b.typed_buffer(element_type::i32, Shape{s.rows});
  Op copy = last;
  copy.inputs.clear(); // the step's operands are `ins`, not the op's
  const int out = b.output(last.outputs[0], b.plain(last.outputs[0]));
  b.add_kernel_step(std::move(copy), integer_gemm_s16(), "native:integer_gemm_s16", std::move(ins), {out, wide, sums});
}

} // namespace

void build_integer_matmul_epilogue(plan_builder& b, const graph::Op& last, const integer_matmul_site& s) {
  if (!s.panels.empty()) return build_integer_gemm_s16(b, last, s);
  const Op& mm = b.g.ops[s.matmul];
  const ValueId Y = mm.outputs[0], AZ = input_or_none(mm, 2);
  std::vector<int> ins{b.input_plain(Y), AZ == no_value ? -1 : b.input_plain(AZ), b.const_buffer(s.column_sums),
                       s.weight_zp.empty() ? -1 : b.const_buffer(s.weight_zp),
                       s.weight_zp.empty() ? -1 : b.input_plain(mm.inputs[0]),
                       s.scale == no_value ? -1 : b.input_plain(s.scale), s.bias == no_value ? -1 : b.input_plain(s.bias),
                       s.high_buffer, s.residual == no_value ? -1 : b.input_plain(s.residual)};
  Op copy = last;
  copy.inputs.clear(); // the step's operands are `ins`, not the op's
  const int out = s.last == s.matmul ? ins[0] : b.output(last.outputs[0], b.plain(last.outputs[0]));
  b.add_kernel_step(std::move(copy), epilogue_kernel(s.activation),
                    s.activation == epilogue_activation::none ? "native:integer_matmul_epilogue"
                                                              : "native:integer_matmul_epilogue+gelu",
                    std::move(ins), {out});
}

} // namespace troupe::kernels::cpu
