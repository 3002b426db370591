/// Data movement, byte-based so every element type works: Reshape, Flatten, Squeeze,
/// Unsqueeze, Identity, Dropout (inference), Transpose, Slice, Concat, Split, Pad, Expand,
/// Tile, DepthToSpace, SpaceToDepth, Shape, Size.
#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

/// strided_gather for elements of type T one at a time: the outer axes by broadcast_loop, the
/// last axis as a strided loop (dst is written densely).
template <class T>
void strided_elements(const uint8_t* s, uint8_t* d, const Shape& shape, const std::vector<int64_t>& strides,
                      int64_t base) {
  const auto* src = reinterpret_cast<const T*>(s) + base;
  auto* dst = reinterpret_cast<T*>(d);
  const int64_t n = shape.back(), step = strides.back();
  const Shape outer(shape.begin(), shape.end() - 1);
  std::vector<int64_t> outer_strides(strides.begin(), strides.end() - 1);
  broadcast_loop(outer, std::array<std::vector<int64_t>, 1>{outer_strides}, [&](int64_t i, const std::array<int64_t, 1>& o) {
    const T* from = src + o[0];
    T* to = dst + i * n;
    for (int64_t j = 0; j < n; ++j) to[j] = from[j * step];
  });
}

/// dst[i] = src[base + sum(idx_d * strides_d)] over `shape` (a view of dst's elements). Trailing
/// dimensions that lie densely in src too (a Slice along an outer axis, rec's attention heads)
/// copy as one run each.
void strided_gather(const Tensor& src, Tensor& dst, const Shape& shape, const std::vector<int64_t>& strides, int64_t base) {
  std::size_t es = element_size(src.get_element_type());
  auto* s = static_cast<const uint8_t*>(src.data());
  auto* d = static_cast<uint8_t*>(dst.data());
  std::size_t k = shape.size();
  int64_t run = 1;
  while (k > 0 && (strides[k - 1] == run || shape[k - 1] == 1)) run *= shape[--k];
  const std::size_t run_bytes = static_cast<std::size_t>(run) * es;
  if (k == 0) {
    std::memcpy(d, s + static_cast<std::size_t>(base) * es, run_bytes);
    return;
  }
  if (run == 1 && (es == 1 || es == 2 || es == 4 || es == 8)) {
    // Single elements (a Transpose that moves the last axis, as of a weight matrix folded
    // while compiling): a typed strided loop over the last axis, not a memcpy call per element.
    switch (es) {
    case 1: return strided_elements<uint8_t>(s, d, shape, strides, base);
    case 2: return strided_elements<uint16_t>(s, d, shape, strides, base);
    case 4: return strided_elements<uint32_t>(s, d, shape, strides, base);
    default: return strided_elements<uint64_t>(s, d, shape, strides, base);
    }
  }
  const Shape outer(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(k));
  std::vector<int64_t> outer_strides(strides.begin(), strides.begin() + static_cast<std::ptrdiff_t>(k));
  broadcast_loop(outer, std::array<std::vector<int64_t>, 1>{outer_strides}, [&](int64_t i, const std::array<int64_t, 1>& o) {
    std::memcpy(d + static_cast<std::size_t>(i) * run_bytes, s + static_cast<std::size_t>(base + o[0]) * es, run_bytes);
  });
}

void same_type(const context& ctx, const Tensor& a, const Tensor& b) {
  if (a.get_element_type() != b.get_element_type())
    fail(ctx, "output type " + to_string(b.get_element_type()) + " differs from input type " + to_string(a.get_element_type()));
}

/// Reshape, Flatten, Squeeze, Unsqueeze, Identity: the output already has its shape.
void copy_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  same_type(ctx, x, y);
  copy_bytes(ctx, x, y);
}

void dropout_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  // Training mode drops at random; only ratio 0 (an identity) is reproducible.
  bool training = has_input(in, 2) && to_ints(in[2]).at(0) != 0;
  double ratio = has_input(in, 1) ? element_as_double(in[1], 0) : ctx.op.attr_float("ratio", 0.5f);
  if (training && ratio != 0) fail(ctx, "random dropout (training_mode with ratio > 0) is not reproducible");
  copy_bytes(ctx, x, y);
  if (has_output(out, 1)) {
    if (out[1].get_element_type() != element_type::boolean) fail(ctx, "mask output must be boolean");
    std::fill_n(out[1].data<bool>(), out[1].get_size(), true);
  }
}

void transpose_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  same_type(ctx, x, y);
  const Shape& xs = x.get_shape();
  std::size_t r = xs.size();
  std::vector<int64_t> perm(r);
  for (std::size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(r - 1 - i);
  perm = ctx.op.attr_ints("perm", perm);
  if (perm.size() != r) fail(ctx, "perm has the wrong length");
  auto ist = strides_of(xs);
  Shape os(r);
  std::vector<int64_t> st(r);
  std::vector<bool> seen(r, false);
  for (std::size_t i = 0; i < r; ++i) {
    auto p = static_cast<std::size_t>(norm_axis(ctx, perm[i], static_cast<int64_t>(r)));
    if (seen[p]) fail(ctx, "perm is not a permutation");
    seen[p] = true;
    os[i] = xs[p];
    st[i] = ist[p];
  }
  if (os != y.get_shape()) fail(ctx, "output shape " + to_string(y.get_shape()) + " should be " + to_string(os));
  strided_gather(x, y, os, st, 0);
}

void slice_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  same_type(ctx, x, y);
  const Shape& xs = x.get_shape();
  auto r = static_cast<int64_t>(xs.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.op.has_attr("starts")) { // opset < 10
    starts = ctx.op.attr_ints("starts");
    ends = ctx.op.attr_ints("ends");
    axes = ctx.op.attr_ints("axes");
  } else {
    starts = to_ints(input(ctx, in, 1));
    ends = to_ints(input(ctx, in, 2));
    if (has_input(in, 3)) axes = to_ints(in[3]);
    if (has_input(in, 4)) steps = to_ints(in[4]);
  }
  if (axes.empty())
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    fail(ctx, "starts, ends, axes and steps differ in length");
  std::vector<int64_t> b(xs.size(), 0), step(xs.size(), 1);
  Shape os = xs;
  std::vector<bool> seen(xs.size(), false);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    auto a = static_cast<std::size_t>(norm_axis(ctx, axes[i], r));
    if (seen[a]) fail(ctx, "axis repeated");
    seen[a] = true;
    int64_t d = xs[a], s = steps[i];
    if (s == 0) fail(ctx, "step must not be 0");
    int64_t st = starts[i], en = ends[i];
    if (st < 0) st += d;
    if (en < 0) en += d;
    if (s > 0) {
      st = std::clamp<int64_t>(st, 0, d);
      en = std::clamp<int64_t>(en, 0, d);
      os[a] = en > st ? (en - st + s - 1) / s : 0;
    } else {
      st = std::clamp<int64_t>(st, 0, d - 1);
      en = std::clamp<int64_t>(en, -1, d - 1);
      os[a] = st > en ? (st - en + (-s) - 1) / (-s) : 0;
    }
    b[a] = st;
    step[a] = s;
  }
  if (os != y.get_shape()) fail(ctx, "output shape " + to_string(y.get_shape()) + " should be " + to_string(os));
  if (y.get_size() == 0) return;
  auto ist = strides_of(xs);
  int64_t base = 0;
  std::vector<int64_t> st(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    base += b[i] * ist[i];
    st[i] = ist[i] * step[i];
  }
  strided_gather(x, y, os, st, base);
}

void concat_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  Tensor& y = output(ctx, out, 0);
  const Shape& ys = y.get_shape();
  auto axis = static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("axis", 0), static_cast<int64_t>(ys.size())));
  std::size_t es = element_size(y.get_element_type());
  int64_t outer = dims_product(ys, 0, axis), inner = dims_product(ys, axis + 1, ys.size());
  int64_t off = 0;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const Tensor& x = input(ctx, in, k);
    same_type(ctx, x, y);
    const Shape& xs = x.get_shape();
    if (xs.size() != ys.size()) fail(ctx, "input " + std::to_string(k) + " has the wrong rank");
    for (std::size_t d = 0; d < xs.size(); ++d)
      if (d != axis && xs[d] != ys[d]) fail(ctx, "input " + std::to_string(k) + " shape " + to_string(xs) + " does not match");
    int64_t len = xs[axis];
    if (off + len > ys[axis]) fail(ctx, "inputs are larger than the output along the axis");
    auto bytes = static_cast<std::size_t>(len * inner) * es;
    for (int64_t o = 0; o < outer; ++o)
      if (bytes)
        std::memcpy(static_cast<uint8_t*>(y.data()) + static_cast<std::size_t>((o * ys[axis] + off) * inner) * es,
                    static_cast<const uint8_t*>(x.data()) + static_cast<std::size_t>(o * len * inner) * es, bytes);
    off += len;
  }
  if (off != ys[axis]) fail(ctx, "inputs do not fill the output along the axis");
}

/// Split: the output shapes (from shape inference) say how large each piece is.
void split_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Shape& xs = x.get_shape();
  auto axis = static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("axis", 0), static_cast<int64_t>(xs.size())));
  std::size_t es = element_size(x.get_element_type());
  int64_t outer = dims_product(xs, 0, axis), inner = dims_product(xs, axis + 1, xs.size());
  int64_t off = 0;
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (out[k].empty()) fail(ctx, "output " + std::to_string(k) + " was not allocated");
    Tensor& y = out[k];
    same_type(ctx, x, y);
    const Shape& ys = y.get_shape();
    if (ys.size() != xs.size()) fail(ctx, "output " + std::to_string(k) + " has the wrong rank");
    int64_t len = ys[axis];
    if (off + len > xs[axis] || y.get_size() != outer * len * inner) fail(ctx, "output " + std::to_string(k) + " shape " + to_string(ys) + " is wrong");
    auto bytes = static_cast<std::size_t>(len * inner) * es;
    for (int64_t o = 0; o < outer; ++o)
      if (bytes)
        std::memcpy(static_cast<uint8_t*>(y.data()) + static_cast<std::size_t>(o * len * inner) * es,
                    static_cast<const uint8_t*>(x.data()) + static_cast<std::size_t>((o * xs[axis] + off) * inner) * es, bytes);
    off += len;
  }
  if (off != xs[axis]) fail(ctx, "outputs do not cover the input along the axis");
}

void pad_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  same_type(ctx, x, y);
  const Shape& xs = x.get_shape();
  std::size_t r = xs.size();
  std::string mode = ctx.op.attr_string("mode", "constant");
  std::vector<int64_t> pads;
  std::size_t es = element_size(x.get_element_type());
  std::vector<uint8_t> value(es, 0);
  if (ctx.op.has_attr("pads")) { // opset < 11
    pads = ctx.op.attr_ints("pads");
    Tensor v(x.get_element_type(), {});
    from_doubles(v, {static_cast<double>(ctx.op.attr_float("value", 0.0f))});
    std::memcpy(value.data(), v.data(), es);
  } else {
    pads = to_ints(input(ctx, in, 1));
    if (has_input(in, 2)) {
      if (in[2].get_element_type() != x.get_element_type() || in[2].get_size() < 1) fail(ctx, "constant_value must be one element of the data type");
      std::memcpy(value.data(), in[2].data(), es);
    }
    if (has_input(in, 3)) { // opset 18 axes
      auto axes = to_ints(in[3]);
      if (pads.size() != 2 * axes.size()) fail(ctx, "pads length does not match axes");
      std::vector<int64_t> full(2 * r, 0);
      for (std::size_t i = 0; i < axes.size(); ++i) {
        auto a = static_cast<std::size_t>(norm_axis(ctx, axes[i], static_cast<int64_t>(r)));
        full[a] = pads[i];
        full[r + a] = pads[axes.size() + i];
      }
      pads = full;
    }
  }
  if (pads.size() != 2 * r) fail(ctx, "pads must have 2*rank elements");
  Shape os(r);
  for (std::size_t i = 0; i < r; ++i) os[i] = xs[i] + pads[i] + pads[r + i];
  if (os != y.get_shape()) fail(ctx, "output shape " + to_string(y.get_shape()) + " should be " + to_string(os));
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") fail(ctx, "unknown mode '" + mode + "'");
  if (mode != "constant")
    for (std::size_t i = 0; i < r; ++i)
      if (xs[i] == 0 && os[i] > 0) fail(ctx, "cannot " + mode + "-pad an empty axis");
  auto ist = strides_of(xs);
  auto* s = static_cast<const uint8_t*>(x.data());
  auto* d = static_cast<uint8_t*>(y.data());
  std::vector<int64_t> idx(r, 0);
  int64_t total = y.get_size();
  for (int64_t i = 0; i < total; ++i) {
    int64_t off = 0;
    bool inside = true;
    for (std::size_t k = 0; k < r; ++k) {
      int64_t c = idx[k] - pads[k], n = xs[k];
      if (c < 0 || c >= n) {
        if (mode == "constant") { inside = false; break; }
        if (mode == "edge") c = c < 0 ? 0 : n - 1;
        else if (mode == "wrap") c = ((c % n) + n) % n;
        else if (n == 1) c = 0;
        else {
          int64_t period = 2 * (n - 1);
          c = ((c % period) + period) % period;
          if (c >= n) c = period - c;
        }
      }
      off += c * ist[k];
    }
    std::memcpy(d + static_cast<std::size_t>(i) * es, inside ? s + static_cast<std::size_t>(off) * es : value.data(), es);
    for (std::size_t k = r; k-- > 0;) {
      if (++idx[k] < os[k]) break;
      idx[k] = 0;
    }
  }
}

void expand_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  same_type(ctx, x, y);
  strided_gather(x, y, y.get_shape(), broadcast_strides(ctx, x.get_shape(), y.get_shape()), 0);
}

void tile_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  same_type(ctx, x, y);
  const Shape& xs = x.get_shape();
  auto reps = to_ints(input(ctx, in, 1));
  if (reps.size() != xs.size()) fail(ctx, "repeats must have one element per axis");
  Shape os(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) os[i] = xs[i] * reps[i];
  if (os != y.get_shape()) fail(ctx, "output shape " + to_string(y.get_shape()) + " should be " + to_string(os));
  // View the output as [rep0, x0, rep1, x1, ...] with stride 0 over the repeats.
  Shape view;
  std::vector<int64_t> st;
  auto ist = strides_of(xs);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    view.push_back(reps[i]);
    st.push_back(0);
    view.push_back(xs[i]);
    st.push_back(ist[i]);
  }
  if (y.get_size()) strided_gather(x, y, view, st, 0);
}

void depth_space_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  same_type(ctx, x, y);
  const Shape& xs = x.get_shape();
  if (xs.size() != 4) fail(ctx, "input must be 4-D");
  int64_t b = ctx.op.attr_int("blocksize", 0);
  if (b < 1) fail(ctx, "blocksize must be positive");
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  Shape view;
  std::vector<int64_t> st;
  if (ctx.op.type == "DepthToSpace") {
    if (C % (b * b)) fail(ctx, "channels are not divisible by blocksize^2");
    int64_t c = C / (b * b);
    if (y.get_shape() != Shape{N, c, H * b, W * b}) fail(ctx, "output shape is wrong");
    // Output [N, c, H, b1, W, b2] reads input channel (b1*b + b2)*c + ci (DCR) or ci*b*b + b1*b + b2 (CRD).
    view = {N, c, H, b, W, b};
    if (ctx.op.attr_string("mode", "DCR") == "CRD") st = {C * H * W, b * b * H * W, W, b * H * W, 1, H * W};
    else st = {C * H * W, H * W, W, b * c * H * W, 1, c * H * W};
  } else {
    if (H % b || W % b) fail(ctx, "spatial dims are not divisible by blocksize");
    if (y.get_shape() != Shape{N, C * b * b, H / b, W / b}) fail(ctx, "output shape is wrong");
    // Output [N, b1, b2, C, H/b, W/b] reads input [n, c, h*b + b1, w*b + b2].
    view = {N, b, b, C, H / b, W / b};
    st = {C * H * W, W, 1, H * W, b * W, b};
  }
  strided_gather(x, y, view, st, 0);
}

void shape_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  if (y.get_element_type() != element_type::i64) fail(ctx, "output must be i64");
  const Shape& xs = x.get_shape();
  auto r = static_cast<int64_t>(xs.size());
  int64_t start = ctx.op.attr_int("start", 0), end = ctx.op.attr_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  int64_t n = std::max<int64_t>(0, end - start);
  if (y.get_size() != n) fail(ctx, "output shape " + to_string(y.get_shape()) + " is wrong");
  for (int64_t i = 0; i < n; ++i) y.data<int64_t>()[i] = xs[static_cast<std::size_t>(start + i)];
}

void size_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  if (y.get_element_type() != element_type::i64 || y.get_size() != 1) fail(ctx, "output must be one i64");
  y.data<int64_t>()[0] = x.get_size();
}

} // namespace

void register_movement(kernel_map& m) {
  for (const char* n : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}) m[n] = copy_kernel;
  m["Dropout"] = dropout_kernel;
  m["Transpose"] = transpose_kernel;
  m["Slice"] = slice_kernel;
  m["Concat"] = concat_kernel;
  m["Split"] = split_kernel;
  m["Pad"] = pad_kernel;
  m["Expand"] = expand_kernel;
  m["Tile"] = tile_kernel;
  m["DepthToSpace"] = depth_space_kernel;
  m["SpaceToDepth"] = depth_space_kernel;
  m["Shape"] = shape_kernel;
  m["Size"] = size_kernel;
}

} // namespace troupe::kernels::reference
