/// Index-driven ops: Gather, GatherElements, GatherND, ScatterElements, ScatterND, OneHot,
/// TopK, CumSum, Trilu. Out-of-range indices throw naming the op.
#include <numeric>

#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

int64_t fix_index(const context& ctx, int64_t i, int64_t dim) {
  int64_t r = i < 0 ? i + dim : i;
  if (r < 0 || r >= dim) fail(ctx, "index " + std::to_string(i) + " is out of range [" + std::to_string(-dim) + ", " + std::to_string(dim) + ")");
  return r;
}

void gather_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Tensor& idx = input(ctx, in, 1);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  if (xs.empty()) fail(ctx, "data must have rank >= 1");
  auto axis = static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("axis", 0), static_cast<int64_t>(xs.size())));
  auto ind = to_ints(idx);
  int64_t outer = dims_product(xs, 0, axis), dim = xs[axis], inner = dims_product(xs, axis + 1, xs.size());
  auto n = static_cast<int64_t>(ind.size());
  if (y.get_size() != outer * n * inner || y.get_element_type() != x.get_element_type()) fail(ctx, "output shape or type is wrong");
  std::size_t es = element_size(x.get_element_type()), blk = static_cast<std::size_t>(inner) * es;
  auto* s = static_cast<const uint8_t*>(x.data());
  auto* d = static_cast<uint8_t*>(y.data());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j) {
      int64_t k = fix_index(ctx, ind[static_cast<std::size_t>(j)], dim);
      if (blk) std::memcpy(d + static_cast<std::size_t>(o * n + j) * blk, s + static_cast<std::size_t>(o * dim + k) * blk, blk);
    }
}

/// Offsets into data for each element of indices (GatherElements/ScatterElements).
std::vector<int64_t> element_offsets(const context& ctx, const Shape& ds, const Tensor& idx, std::size_t axis) {
  const Shape& is = idx.get_shape();
  if (is.size() != ds.size()) fail(ctx, "indices rank differs from data rank");
  auto ind = to_ints(idx);
  auto dst = strides_of(ds);
  std::vector<int64_t> offs(ind.size());
  std::vector<int64_t> c(is.size(), 0);
  for (std::size_t i = 0; i < ind.size(); ++i) {
    int64_t off = 0;
    for (std::size_t k = 0; k < is.size(); ++k) {
      int64_t v = k == axis ? fix_index(ctx, ind[i], ds[k]) : c[k];
      if (v >= ds[k]) fail(ctx, "indices shape exceeds data shape");
      off += v * dst[k];
    }
    offs[i] = off;
    for (std::size_t k = is.size(); k-- > 0;) {
      if (++c[k] < is[k]) break;
      c[k] = 0;
    }
  }
  return offs;
}

void gather_elements_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Tensor& idx = input(ctx, in, 1);
  Tensor& y = output(ctx, out, 0);
  auto axis = static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("axis", 0), static_cast<int64_t>(x.get_shape().size())));
  auto offs = element_offsets(ctx, x.get_shape(), idx, axis);
  if (y.get_size() != static_cast<int64_t>(offs.size())) fail(ctx, "output shape is wrong");
  std::size_t es = element_size(x.get_element_type());
  for (std::size_t i = 0; i < offs.size(); ++i)
    std::memcpy(static_cast<uint8_t*>(y.data()) + i * es, static_cast<const uint8_t*>(x.data()) + static_cast<std::size_t>(offs[i]) * es, es);
}

/// dst = reduce(dst, src) for ScatterElements/ScatterND's `reduction`.
void scatter_store(const context& ctx, const std::string& reduction, Tensor& y, int64_t yi, const Tensor& u, int64_t ui) {
  dispatch(y.get_element_type(), [&](auto tag) {
    using T = decltype(tag);
    using C = calc_t<T>;
    T& d = y.data<T>()[yi];
    C a = d, b = u.data<T>()[ui];
    if (reduction == "none") d = u.data<T>()[ui];
    else if constexpr (std::is_same_v<T, bool>) fail(ctx, "reduction on booleans");
    else if (reduction == "add") d = T(static_cast<C>(a + b));
    else if (reduction == "mul") d = T(static_cast<C>(a * b));
    else if (reduction == "max") d = T(std::max(a, b));
    else if (reduction == "min") d = T(std::min(a, b));
    else fail(ctx, "unknown reduction '" + reduction + "'");
  });
}

void scatter_elements_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Tensor& idx = input(ctx, in, 1);
  const Tensor& upd = input(ctx, in, 2);
  Tensor& y = output(ctx, out, 0);
  copy_bytes(ctx, x, y);
  auto axis = static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("axis", 0), static_cast<int64_t>(x.get_shape().size())));
  auto offs = element_offsets(ctx, x.get_shape(), idx, axis);
  if (upd.get_size() != static_cast<int64_t>(offs.size()) || upd.get_element_type() != x.get_element_type()) fail(ctx, "updates do not match indices");
  std::string red = ctx.op.attr_string("reduction", "none");
  for (std::size_t i = 0; i < offs.size(); ++i) scatter_store(ctx, red, y, offs[i], upd, static_cast<int64_t>(i));
}

void gather_nd_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Tensor& idx = input(ctx, in, 1);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  const Shape& is = idx.get_shape();
  auto b = static_cast<std::size_t>(ctx.op.attr_int("batch_dims", 0));
  if (is.empty() || b >= is.size() || b > xs.size()) fail(ctx, "bad indices rank or batch_dims");
  auto m = static_cast<std::size_t>(is.back());
  if (b + m > xs.size()) fail(ctx, "indices' last dim is too large");
  auto ind = to_ints(idx);
  int64_t batch = dims_product(xs, 0, b);
  int64_t per_batch = dims_product(is, b, is.size() - 1);
  int64_t slice = dims_product(xs, b + m, xs.size());
  int64_t data_batch = dims_product(xs, b, xs.size());
  auto st = strides_of(xs);
  if (y.get_size() != batch * per_batch * slice) fail(ctx, "output shape is wrong");
  std::size_t es = element_size(x.get_element_type()), blk = static_cast<std::size_t>(slice) * es;
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t j = 0; j < per_batch; ++j) {
      int64_t off = bi * data_batch;
      for (std::size_t k = 0; k < m; ++k)
        off += fix_index(ctx, ind[static_cast<std::size_t>((bi * per_batch + j) * static_cast<int64_t>(m)) + k], xs[b + k]) * st[b + k];
      if (blk)
        std::memcpy(static_cast<uint8_t*>(y.data()) + static_cast<std::size_t>(bi * per_batch + j) * blk,
                    static_cast<const uint8_t*>(x.data()) + static_cast<std::size_t>(off) * es, blk);
    }
}

void scatter_nd_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Tensor& idx = input(ctx, in, 1);
  const Tensor& upd = input(ctx, in, 2);
  Tensor& y = output(ctx, out, 0);
  copy_bytes(ctx, x, y);
  const Shape& xs = x.get_shape();
  const Shape& is = idx.get_shape();
  if (is.empty()) fail(ctx, "indices must have rank >= 1");
  auto m = static_cast<std::size_t>(is.back());
  if (m > xs.size()) fail(ctx, "indices' last dim is too large");
  auto ind = to_ints(idx);
  int64_t n = dims_product(is, 0, is.size() - 1), slice = dims_product(xs, m, xs.size());
  if (upd.get_size() != n * slice) fail(ctx, "updates have the wrong size");
  auto st = strides_of(xs);
  std::string red = ctx.op.attr_string("reduction", "none");
  for (int64_t j = 0; j < n; ++j) {
    int64_t off = 0;
    for (std::size_t k = 0; k < m; ++k) off += fix_index(ctx, ind[static_cast<std::size_t>(j * static_cast<int64_t>(m)) + k], xs[k]) * st[k];
    for (int64_t e = 0; e < slice; ++e) scatter_store(ctx, red, y, off + e, upd, j * slice + e);
  }
}

void one_hot_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& idx = input(ctx, in, 0);
  const Tensor& values = input(ctx, in, 2);
  Tensor& y = output(ctx, out, 0);
  auto depth = static_cast<int64_t>(element_as_double(input(ctx, in, 1), 0));
  const Shape& is = idx.get_shape();
  auto axis = static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("axis", -1), static_cast<int64_t>(is.size()) + 1));
  if (values.get_size() != 2 || values.get_element_type() != y.get_element_type()) fail(ctx, "values must be [off, on] of the output type");
  auto iv = to_doubles(idx);
  int64_t outer = dims_product(is, 0, axis), inner = dims_product(is, axis, is.size());
  if (y.get_size() != outer * depth * inner) fail(ctx, "output shape is wrong");
  std::size_t es = element_size(y.get_element_type());
  auto* v = static_cast<const uint8_t*>(values.data());
  auto* d = static_cast<uint8_t*>(y.data());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < depth; ++k)
      for (int64_t i = 0; i < inner; ++i) {
        auto c = static_cast<int64_t>(iv[static_cast<std::size_t>(o * inner + i)]);
        if (c < 0) c += depth;
        std::memcpy(d + static_cast<std::size_t>((o * depth + k) * inner + i) * es, v + (c == k ? es : 0), es);
      }
}

void top_k_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& vals = output(ctx, out, 0);
  Tensor& inds = output(ctx, out, 1);
  const Shape& xs = x.get_shape();
  auto axis = static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("axis", -1), static_cast<int64_t>(xs.size())));
  int64_t k = has_input(in, 1) ? to_ints(in[1]).at(0) : ctx.op.attr_int("k", -1);
  int64_t outer = dims_product(xs, 0, axis), len = xs[axis], inner = dims_product(xs, axis + 1, xs.size());
  if (k < 0 || k > len) fail(ctx, "k = " + std::to_string(k) + " is out of range");
  if (vals.get_size() != outer * k * inner || inds.get_size() != outer * k * inner || inds.get_element_type() != element_type::i64)
    fail(ctx, "outputs have the wrong shape or type");
  bool largest = ctx.op.attr_int("largest", 1) != 0;
  auto xv = to_doubles(x);
  std::size_t es = element_size(x.get_element_type());
  std::vector<int64_t> order(static_cast<std::size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * len + j) * inner + i; };
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        double va = xv[static_cast<std::size_t>(at(a))], vb = xv[static_cast<std::size_t>(at(b))];
        return largest ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        int64_t src = order[static_cast<std::size_t>(j)], dst = (o * k + j) * inner + i;
        inds.data<int64_t>()[dst] = src;
        std::memcpy(static_cast<uint8_t*>(vals.data()) + static_cast<std::size_t>(dst) * es,
                    static_cast<const uint8_t*>(x.data()) + static_cast<std::size_t>(at(src)) * es, es);
      }
    }
}

void cum_sum_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  auto axis = static_cast<std::size_t>(norm_axis(ctx, to_ints(input(ctx, in, 1)).at(0), static_cast<int64_t>(xs.size())));
  bool excl = ctx.op.attr_int("exclusive", 0) != 0, rev = ctx.op.attr_int("reverse", 0) != 0;
  int64_t outer = dims_product(xs, 0, axis), len = xs[axis], inner = dims_product(xs, axis + 1, xs.size());
  if (y.get_element_type() != x.get_element_type() || y.get_size() != x.get_size()) fail(ctx, "output shape or type is wrong");
  dispatch(x.get_element_type(), [&](auto tag) {
    using T = decltype(tag);
    using C = std::conditional_t<is_float_v<T>, double, calc_t<T>>;
    if constexpr (std::is_same_v<T, bool>) {
      fail(ctx, "CumSum is not defined on booleans");
    } else {
      const T* s = x.data<T>();
      T* d = y.data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          C acc = 0;
          for (int64_t j0 = 0; j0 < len; ++j0) {
            int64_t j = rev ? len - 1 - j0 : j0, at = (o * len + j) * inner + i;
            C v = static_cast<C>(static_cast<calc_t<T>>(s[at]));
            if (excl) { d[at] = T(static_cast<calc_t<T>>(acc)); acc = static_cast<C>(acc + v); }
            else { acc = static_cast<C>(acc + v); d[at] = T(static_cast<calc_t<T>>(acc)); }
          }
        }
    }
  });
}

void trilu_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  copy_bytes(ctx, x, y);
  const Shape& xs = x.get_shape();
  if (xs.size() < 2) fail(ctx, "input must have rank >= 2");
  int64_t k = has_input(in, 1) ? to_ints(in[1]).at(0) : 0;
  bool upper = ctx.op.attr_int("upper", 1) != 0;
  int64_t R = xs[xs.size() - 2], C = xs.back(), B = dims_product(xs, 0, xs.size() - 2);
  std::size_t es = element_size(x.get_element_type());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < C; ++c) {
        bool keep = upper ? c - r >= k : c - r <= k;
        if (!keep) std::memset(static_cast<uint8_t*>(y.data()) + static_cast<std::size_t>((b * R + r) * C + c) * es, 0, es);
      }
}

/// NonZero: [rank, count] i64 coordinates of the nonzero elements, in row-major order.
void non_zero_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  auto v = to_doubles(x);
  std::vector<int64_t> hits;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] != 0) hits.push_back(static_cast<int64_t>(i));
  auto n = static_cast<int64_t>(hits.size()), r = static_cast<int64_t>(xs.size());
  if (y.get_element_type() != element_type::i64 || y.get_size() != std::max<int64_t>(r, 1) * n)
    fail(ctx, "output shape " + to_string(y.get_shape()) + " should be [" + std::to_string(r) + "," + std::to_string(n) + "]");
  auto st = strides_of(xs);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t d = 0; d < r; ++d)
      y.data<int64_t>()[d * n + j] = hits[static_cast<std::size_t>(j)] / st[static_cast<std::size_t>(d)] % xs[static_cast<std::size_t>(d)];
  if (r == 0)
    for (int64_t j = 0; j < n; ++j) y.data<int64_t>()[j] = 0;
}

} // namespace

void register_indexing(kernel_map& m) {
  m["Gather"] = gather_kernel;
  m["GatherElements"] = gather_elements_kernel;
  m["GatherND"] = gather_nd_kernel;
  m["ScatterElements"] = scatter_elements_kernel;
  m["Scatter"] = scatter_elements_kernel; // opset 9-10's name for ScatterElements
  m["ScatterND"] = scatter_nd_kernel;
  m["OneHot"] = one_hot_kernel;
  m["TopK"] = top_k_kernel;
  m["CumSum"] = cum_sum_kernel;
  m["Trilu"] = trilu_kernel;
  m["NonZero"] = non_zero_kernel;
}

} // namespace troupe::kernels::reference
