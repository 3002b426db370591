/// Ops that make tensors from attributes or scalars: Constant, ConstantOfShape, Range,
/// EyeLike.
#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

void constant_kernel(const context& ctx, const std::vector<Tensor>&, std::vector<Tensor>& out) {
  Tensor& y = output(ctx, out, 0);
  const auto& op = ctx.op;
  auto it = op.attrs.find("value");
  if (it != op.attrs.end()) {
    const auto* t = std::get_if<Tensor>(&it->second);
    if (!t) fail(ctx, "attribute 'value' is not a tensor");
    if (t->get_element_type() != y.get_element_type()) fail(ctx, "output type differs from the value's type");
    copy_bytes(ctx, *t, y);
    return;
  }
  std::vector<double> v;
  if (op.has_attr("value_float")) v = {op.attr_float("value_float", 0)};
  else if (op.has_attr("value_int")) v = {static_cast<double>(op.attr_int("value_int", 0))};
  else if (op.has_attr("value_floats")) for (float f : op.attr_floats("value_floats")) v.push_back(f);
  else if (op.has_attr("value_ints")) {
    auto ints = op.attr_ints("value_ints");
    if (y.get_element_type() != element_type::i64 || y.get_size() != static_cast<int64_t>(ints.size())) fail(ctx, "output must be i64 of the value's size");
    std::copy(ints.begin(), ints.end(), y.data<int64_t>());
    return;
  } else fail(ctx, "no supported value attribute");
  if (y.get_size() != static_cast<int64_t>(v.size())) fail(ctx, "output size differs from the value's size");
  from_doubles(y, v);
}

void constant_of_shape_kernel(const context& ctx, const std::vector<Tensor>&, std::vector<Tensor>& out) {
  Tensor& y = output(ctx, out, 0);
  std::size_t es = element_size(y.get_element_type());
  std::vector<uint8_t> v(es, 0);
  auto it = ctx.op.attrs.find("value");
  if (it != ctx.op.attrs.end()) {
    const auto* t = std::get_if<Tensor>(&it->second);
    if (!t || t->get_size() != 1 || t->get_element_type() != y.get_element_type())
      fail(ctx, "attribute 'value' must be a one-element tensor of the output type");
    std::memcpy(v.data(), t->data(), es);
  }
  auto* d = static_cast<uint8_t*>(y.data());
  for (int64_t i = 0; i < y.get_size(); ++i) std::memcpy(d + static_cast<std::size_t>(i) * es, v.data(), es);
}

void range_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  Tensor& y = output(ctx, out, 0);
  const Tensor& s = input(ctx, in, 0);
  const Tensor& l = input(ctx, in, 1);
  const Tensor& d = input(ctx, in, 2);
  if (s.get_element_type() != y.get_element_type()) fail(ctx, "output type differs from start's type");
  dispatch(y.get_element_type(), [&](auto tag) {
    using T = decltype(tag);
    using C = calc_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      fail(ctx, "Range is not defined on booleans");
    } else {
      C start = s.data<T>()[0], limit = l.data<T>()[0], delta = d.data<T>()[0];
      if (delta == C(0)) fail(ctx, "delta must not be 0");
      double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
      auto count = static_cast<int64_t>(std::max(0.0, n));
      if (y.get_size() != count) fail(ctx, "output shape " + to_string(y.get_shape()) + " should have " + std::to_string(count) + " elements");
      C v = start;
      for (int64_t i = 0; i < count; ++i) {
        y.data<T>()[i] = T(v); // accumulate like the ONNX reference: start + i*delta by repeated addition
        v = static_cast<C>(v + delta);
      }
    }
  });
}

void eye_like_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  if (x.get_shape().size() != 2 || y.get_shape() != x.get_shape()) fail(ctx, "input and output must be 2-D of one shape");
  int64_t k = ctx.op.attr_int("k", 0), R = x.get_shape()[0], C = x.get_shape()[1];
  std::vector<double> v(static_cast<std::size_t>(R * C), 0.0);
  for (int64_t r = 0; r < R; ++r)
    if (r + k >= 0 && r + k < C) v[static_cast<std::size_t>(r * C + r + k)] = 1.0;
  from_doubles(y, v);
}

} // namespace

void register_generators(kernel_map& m) {
  m["Constant"] = constant_kernel;
  m["ConstantOfShape"] = constant_of_shape_kernel;
  m["Range"] = range_kernel;
  m["EyeLike"] = eye_like_kernel;
}

} // namespace troupe::kernels::reference
