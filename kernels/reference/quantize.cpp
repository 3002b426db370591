/// The quantization ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the
/// integer MatMul and Conv forms (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv).
/// Integer sums are exact in double; the integer convolutions and products run the Conv and
/// MatMul reference kernels on zero-point-shifted doubles. Rounding is to nearest even, then
/// saturation to the output type, as ONNX specifies.
#include <cmath>
#include <limits>

#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

/// [lowest, highest] of integer type `t`.
std::pair<double, double> int_range(const context& ctx, element_type t) {
  switch (t) {
  case element_type::u8: return {0, 255};
  case element_type::i8: return {-128, 127};
  case element_type::u16: return {0, 65535};
  case element_type::i16: return {-32768, 32767};
  case element_type::i32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
  default: fail(ctx, "cannot quantize to " + to_string(t));
  }
}

double saturate(double v, std::pair<double, double> r) { return std::min(std::max(v, r.first), r.second); }

/// Value `i` of a per-tensor (one value) or per-axis (one per index along `axis`) parameter,
/// for element `e` of a tensor of shape `s`.
struct per_axis {
  std::vector<double> v;
  int64_t inner = 1, len = 1;
  per_axis(const context& ctx, const std::vector<double>& values, const Shape& s, int64_t axis) : v(values) {
    if (v.size() <= 1) return;
    const auto a = static_cast<std::size_t>(norm_axis(ctx, axis, static_cast<int64_t>(s.size())));
    len = s[a];
    inner = dims_product(s, a + 1, s.size());
    if (static_cast<int64_t>(v.size()) != len)
      fail(ctx, "a per-axis scale or zero point has " + std::to_string(v.size()) + " values, axis " + std::to_string(a) +
                    " has " + std::to_string(len));
  }
  double at(int64_t e) const { return v.empty() ? 0.0 : v.size() == 1 ? v[0] : v[static_cast<std::size_t>((e / inner) % len)]; }
};

void quantize_linear_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  const int64_t axis = ctx.op.attr_int("axis", 1);
  const per_axis scale(ctx, to_doubles(input(ctx, in, 1)), x.get_shape(), axis);
  const per_axis zp(ctx, has_input(in, 2) ? to_doubles(in[2]) : std::vector<double>{}, x.get_shape(), axis);
  const auto range = int_range(ctx, y.get_element_type());
  const auto xv = to_doubles(x);
  const bool single = x.get_element_type() == element_type::f32; // numpy divides float32 by float32
  std::vector<double> yv(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const auto e = static_cast<int64_t>(i);
    const double q = single ? static_cast<double>(static_cast<float>(xv[i]) / static_cast<float>(scale.at(e))) : xv[i] / scale.at(e);
    yv[i] = saturate(std::nearbyint(q) + zp.at(e), range);
  }
  from_doubles(y, yv);
}

void dequantize_linear_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const int64_t axis = ctx.op.attr_int("axis", 1);
  const per_axis scale(ctx, to_doubles(input(ctx, in, 1)), x.get_shape(), axis);
  const per_axis zp(ctx, has_input(in, 2) ? to_doubles(in[2]) : std::vector<double>{}, x.get_shape(), axis);
  auto v = to_doubles(x);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(v[i] - zp.at(static_cast<int64_t>(i))) * static_cast<float>(scale.at(static_cast<int64_t>(i)));
  from_doubles(output(ctx, out, 0), v);
}

/// As the ONNX reference, in float32: the range always holds 0; scale = range / 255.
void dynamic_quantize_linear_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const auto xv = to_doubles(input(ctx, in, 0));
  float lo = 0, hi = 0;
  for (double v : xv) {
    lo = std::min(lo, static_cast<float>(v));
    hi = std::max(hi, static_cast<float>(v));
  }
  const float scale = (hi - lo) / 255.0f;
  const double zp = scale == 0 ? 0.0 : saturate(std::nearbyint(0.0f - lo / scale), {0, 255});
  std::vector<double> yv(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i)
    yv[i] = scale == 0 ? zp : saturate(std::nearbyint(static_cast<float>(xv[i]) / scale) + zp, {0, 255});
  from_doubles(output(ctx, out, 0), yv);
  if (has_output(out, 1)) from_doubles(out[1], {scale});
  if (has_output(out, 2)) from_doubles(out[2], {zp});
}

/// `t` minus its zero point (scalar, or one per index along dim `dim` of t), as f64.
Tensor shifted(const context& ctx, const Tensor& t, const std::vector<Tensor>& in, std::size_t zp_input, int64_t dim) {
  Tensor r(element_type::f64, t.get_shape());
  auto v = to_doubles(t);
  if (has_input(in, zp_input)) {
    const auto z = to_doubles(in[zp_input]);
    const per_axis zp(ctx, z, t.get_shape(), z.size() > 1 ? dim : 0);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] -= zp.at(static_cast<int64_t>(i));
  }
  std::copy(v.begin(), v.end(), r.data<double>());
  return r;
}

/// Runs reference kernel `type` on f64 inputs into an f64 tensor of `shape`.
std::vector<double> run_f64(const context& ctx, const char* type, const std::vector<Tensor>& in, const Shape& shape) {
  std::vector<Tensor> out{Tensor(element_type::f64, shape)};
  find_kernel(type)(ctx, in, out);
  return to_doubles(out[0]);
}

void matmul_integer_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor &a = input(ctx, in, 0), &b = input(ctx, in, 1);
  Tensor& y = output(ctx, out, 0);
  // A's zero point may be one per row (dim -2), B's one per column (dim -1).
  from_doubles(y, run_f64(ctx, "MatMul", {shifted(ctx, a, in, 2, -2), shifted(ctx, b, in, 3, -1)}, y.get_shape()));
}

void conv_integer_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor &x = input(ctx, in, 0), &w = input(ctx, in, 1);
  Tensor& y = output(ctx, out, 0);
  from_doubles(y, run_f64(ctx, "Conv", {shifted(ctx, x, in, 2, 1), shifted(ctx, w, in, 3, 0)}, y.get_shape()));
}

/// Integer result `acc` (per output element), scaled by a_scale * b_scale / y_scale (per
/// channel along `channel_dim` of y where b's scale is per channel), plus y's zero point.
void requantize(const context& ctx, const std::vector<double>& acc, const Tensor& a_scale, const Tensor& b_scale,
                const Tensor& y_scale, const std::vector<Tensor>& in, std::size_t y_zp, Tensor& y, int64_t channel_dim) {
  const auto as = to_doubles(a_scale), bs = to_doubles(b_scale), ys = to_doubles(y_scale);
  if (as.size() != 1 || ys.size() != 1 || (has_input(in, y_zp) && in[y_zp].get_size() != 1))
    fail(ctx, "only the second operand's scale and zero point may be per channel; the first's and the output's must be scalars");
  std::vector<double> factor;
  for (double b : bs) factor.push_back(static_cast<float>(static_cast<float>(as.at(0)) * static_cast<float>(b)) / static_cast<float>(ys.at(0)));
  const per_axis f(ctx, factor, y.get_shape(), channel_dim);
  const per_axis zp(ctx, has_input(in, y_zp) ? to_doubles(in[y_zp]) : std::vector<double>{}, y.get_shape(), channel_dim);
  const auto range = int_range(ctx, y.get_element_type());
  std::vector<double> v(acc.size());
  for (std::size_t i = 0; i < acc.size(); ++i)
    v[i] = saturate(std::nearbyint(acc[i] * f.at(static_cast<int64_t>(i)) + zp.at(static_cast<int64_t>(i))), range);
  from_doubles(y, v);
}

/// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp).
void qlinear_matmul_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  Tensor& y = output(ctx, out, 0);
  const auto acc = run_f64(ctx, "MatMul", {shifted(ctx, input(ctx, in, 0), in, 2, -2), shifted(ctx, input(ctx, in, 3), in, 5, -1)},
                           y.get_shape());
  requantize(ctx, acc, input(ctx, in, 1), input(ctx, in, 4), input(ctx, in, 6), in, 7, y, -1);
}

/// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B): B is int32 at
/// x_scale * w_scale, added before the requantization.
void qlinear_conv_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  Tensor& y = output(ctx, out, 0);
  std::vector<Tensor> conv_in{shifted(ctx, input(ctx, in, 0), in, 2, 1), shifted(ctx, input(ctx, in, 3), in, 5, 0)};
  if (has_input(in, 8)) {
    Tensor bias(element_type::f64, in[8].get_shape());
    const auto bv = to_doubles(in[8]);
    std::copy(bv.begin(), bv.end(), bias.data<double>());
    conv_in.push_back(bias);
  }
  requantize(ctx, run_f64(ctx, "Conv", conv_in, y.get_shape()), input(ctx, in, 1), input(ctx, in, 4), input(ctx, in, 6), in, 7, y, 1);
}

} // namespace

void register_quantize(kernel_map& m) {
  m["QuantizeLinear"] = quantize_linear_kernel;
  m["DequantizeLinear"] = dequantize_linear_kernel;
  m["DynamicQuantizeLinear"] = dynamic_quantize_linear_kernel;
  m["MatMulInteger"] = matmul_integer_kernel;
  m["ConvInteger"] = conv_integer_kernel;
  m["QLinearMatMul"] = qlinear_matmul_kernel;
  m["QLinearConv"] = qlinear_conv_kernel;
}

} // namespace troupe::kernels::reference
