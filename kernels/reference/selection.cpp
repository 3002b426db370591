/// Compress, Unique, NonMaxSuppression (outputs sized by their inputs' values: the shape rules
/// and these kernels share graph/selection), ReverseSequence and Det.
#include <cmath>
#include <cstring>

#include <troupe/exception.hpp>

#include "graph/selection.hpp"
#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

void check_size(const context& ctx, const Tensor& y, int64_t elements, const std::string& what) {
  if (y.get_size() != elements)
    fail(ctx, what + " has " + std::to_string(y.get_size()) + " elements, the inputs make " + std::to_string(elements));
}

/// The slices `picked` (in that order) of x along v's axis into `y`, checked to hold exactly them.
void take_slices(const context& ctx, const Tensor& x, const graph::axis_view& v, const std::vector<int64_t>& picked, Tensor& y,
                 const std::string& what) {
  check_size(ctx, y, v.outer * static_cast<int64_t>(picked.size()) * v.inner, what);
  const auto block = static_cast<std::size_t>(v.inner) * element_size(x.get_element_type());
  const auto* src = static_cast<const uint8_t*>(x.data());
  auto* dst = static_cast<uint8_t*>(y.data());
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i : picked) {
      if (block) std::memcpy(dst, src + static_cast<std::size_t>(o * v.len + i) * block, block);
      dst += block;
    }
}

std::optional<int64_t> axis_of(const context& ctx, const Tensor& x) {
  if (!ctx.op.has_attr("axis")) return std::nullopt;
  return norm_axis(ctx, ctx.op.attr_int("axis", 0), static_cast<int64_t>(x.get_shape().size()));
}

void compress_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Tensor& cond = input(ctx, in, 1);
  const graph::axis_view v(x, axis_of(ctx, x));
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < std::min<int64_t>(v.len, cond.get_size()); ++i)
    if (cond.data<bool>()[i]) picked.push_back(i);
  take_slices(ctx, x, v, picked, output(ctx, out, 0), "the output");
}

void unique_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const auto axis = axis_of(ctx, x);
  const auto r = graph::unique_slices(x, axis, ctx.op.attr_int("sorted", 1) != 0);
  take_slices(ctx, x, graph::axis_view(x, axis), r.first, output(ctx, out, 0), "output Y");
  const std::vector<int64_t>* rest[] = {&r.first, &r.inverse, &r.counts};
  for (std::size_t k = 1; k < 4; ++k)
    if (has_output(out, k)) {
      check_size(ctx, out[k], static_cast<int64_t>(rest[k - 1]->size()), "output " + std::to_string(k));
      std::copy(rest[k - 1]->begin(), rest[k - 1]->end(), out[k].data<int64_t>());
    }
}

void nms_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const auto max_per_class = has_input(in, 2) ? to_ints(in[2]).at(0) : 0;
  const double iou = has_input(in, 3) ? to_doubles(in[3]).at(0) : 0.0;
  std::optional<double> score;
  if (has_input(in, 4)) score = to_doubles(in[4]).at(0);
  std::vector<std::array<int64_t, 3>> kept;
  try {
    kept = graph::non_max_suppression(input(ctx, in, 0), input(ctx, in, 1), max_per_class, iou, score,
                                      ctx.op.attr_int("center_point_box", 0) == 1);
  } catch (const Exception& e) {
    fail(ctx, e.what());
  }
  Tensor& y = output(ctx, out, 0);
  check_size(ctx, y, static_cast<int64_t>(kept.size()) * 3, "the output");
  for (std::size_t i = 0; i < kept.size(); ++i)
    for (std::size_t k = 0; k < 3; ++k) y.data<int64_t>()[i * 3 + k] = kept[i][k];
}

void reverse_sequence_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const auto lens = to_ints(input(ctx, in, 1));
  Tensor& y = output(ctx, out, 0);
  copy_bytes(ctx, x, y);
  const Shape& s = x.get_shape();
  const auto rank = static_cast<int64_t>(s.size());
  if (rank < 2) fail(ctx, "the input must have rank 2 or more");
  const auto b_axis = static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("batch_axis", 1), rank));
  const auto t_axis = static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("time_axis", 0), rank));
  if (b_axis == t_axis || b_axis > 1 || t_axis > 1) fail(ctx, "batch_axis and time_axis must be 0 and 1, one each");
  if (static_cast<int64_t>(lens.size()) != s[b_axis])
    fail(ctx, "sequence_lens has " + std::to_string(lens.size()) + " values, the batch is " + std::to_string(s[b_axis]));
  const auto st = strides_of(s);
  const auto es = element_size(x.get_element_type());
  const auto block = static_cast<std::size_t>(dims_product(s, 2, s.size())) * es;
  for (int64_t b = 0; b < s[b_axis]; ++b) {
    const int64_t n = lens[static_cast<std::size_t>(b)];
    if (n < 0 || n > s[t_axis])
      fail(ctx, "sequence_lens[" + std::to_string(b) + "] = " + std::to_string(n) + " is outside [0, " + std::to_string(s[t_axis]) + "]");
    for (int64_t t = 0; t < n; ++t) {
      const auto from = static_cast<std::size_t>(b * st[b_axis] + t * st[t_axis]) * es;
      const auto to = static_cast<std::size_t>(b * st[b_axis] + (n - 1 - t) * st[t_axis]) * es;
      if (block) std::memcpy(static_cast<uint8_t*>(y.data()) + to, static_cast<const uint8_t*>(x.data()) + from, block);
    }
  }
}

/// Det by LU decomposition with partial pivoting, in double.
void det_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Shape& s = x.get_shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2]) fail(ctx, "the input must be [*, M, M], not " + to_string(s));
  const int64_t m = s.back(), count = dims_product(s, 0, s.size() - 2);
  const auto v = to_doubles(x);
  std::vector<double> dets(static_cast<std::size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    std::vector<double> a(v.begin() + k * m * m, v.begin() + (k + 1) * m * m);
    auto at = [&](int64_t r, int64_t c) -> double& { return a[static_cast<std::size_t>(r * m + c)]; };
    double d = 1;
    for (int64_t col = 0; col < m && d != 0; ++col) {
      int64_t pivot = col;
      for (int64_t r = col + 1; r < m; ++r)
        if (std::abs(at(r, col)) > std::abs(at(pivot, col))) pivot = r;
      if (at(pivot, col) == 0) {
        d = 0;
        break;
      }
      if (pivot != col) {
        for (int64_t c = 0; c < m; ++c) std::swap(at(pivot, c), at(col, c));
        d = -d;
      }
      d *= at(col, col);
      for (int64_t r = col + 1; r < m; ++r) {
        const double f = at(r, col) / at(col, col);
        for (int64_t c = col; c < m; ++c) at(r, c) -= f * at(col, c);
      }
    }
    dets[static_cast<std::size_t>(k)] = d;
  }
  from_doubles(output(ctx, out, 0), dets);
}

} // namespace

void register_selection(kernel_map& m) {
  m["Compress"] = compress_kernel;
  m["Unique"] = unique_kernel;
  m["NonMaxSuppression"] = nms_kernel;
  m["ReverseSequence"] = reverse_sequence_kernel;
  m["Det"] = det_kernel;
}

} // namespace troupe::kernels::reference
