/// Element-wise unary ops. Float math goes through double; Abs, Neg, Sign, Relu and Clip
/// are also exact on integer types.
#include <functional>

#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

using scalar_fn = std::function<double(double)>;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return x > 30 ? x : std::log1p(std::exp(x)); }

/// The float function of a unary op from its attributes; empty when the op is not float math.
scalar_fn float_fn(const graph::Op& op) {
  const std::string& t = op.type;
  if (t == "Relu") return [](double x) { return x > 0 ? x : 0.0; };
  if (t == "Sigmoid") return sigmoid;
  if (t == "Tanh") return [](double x) { return std::tanh(x); };
  if (t == "HardSigmoid") {
    double a = op.attr_float("alpha", 0.2f), b = op.attr_float("beta", 0.5f);
    return [a, b](double x) { return std::max(0.0, std::min(1.0, a * x + b)); };
  }
  if (t == "HardSwish") return [](double x) { return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5)); };
  if (t == "LeakyRelu") {
    double a = op.attr_float("alpha", 0.01f);
    return [a](double x) { return x < 0 ? a * x : x; };
  }
  if (t == "Elu") {
    double a = op.attr_float("alpha", 1.0f);
    return [a](double x) { return x < 0 ? a * (std::exp(x) - 1) : x; };
  }
  if (t == "Selu") {
    double a = op.attr_float("alpha", 1.67326319217681884765625f);
    double g = op.attr_float("gamma", 1.05070102214813232421875f);
    return [a, g](double x) { return x > 0 ? g * x : g * (a * std::exp(x) - a); };
  }
  if (t == "Celu") {
    double a = op.attr_float("alpha", 1.0f);
    return [a](double x) { return std::max(0.0, x) + std::min(0.0, a * (std::exp(x / a) - 1)); };
  }
  if (t == "Softplus") return softplus;
  if (t == "Softsign") return [](double x) { return x / (1 + std::fabs(x)); };
  if (t == "ThresholdedRelu") {
    double a = op.attr_float("alpha", 1.0f);
    return [a](double x) { return x > a ? x : 0.0; };
  }
  if (t == "Shrink") {
    double b = op.attr_float("bias", 0.0f), l = op.attr_float("lambd", 0.5f);
    return [b, l](double x) { return x < -l ? x + b : x > l ? x - b : 0.0; };
  }
  if (t == "Gelu") {
    if (op.attr_string("approximate", "none") == "tanh")
      return [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); };
    return [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); };
  }
  if (t == "Mish") return [](double x) { return x * std::tanh(softplus(x)); };
  if (t == "Exp") return [](double x) { return std::exp(x); };
  if (t == "Log") return [](double x) { return std::log(x); };
  if (t == "Sqrt") return [](double x) { return std::sqrt(x); };
  if (t == "Reciprocal") return [](double x) { return 1.0 / x; };
  if (t == "Floor") return [](double x) { return std::floor(x); };
  if (t == "Ceil") return [](double x) { return std::ceil(x); };
  if (t == "Round") return [](double x) { return std::nearbyint(x); }; // ties to even
  if (t == "Erf") return [](double x) { return std::erf(x); };
  if (t == "Sin") return [](double x) { return std::sin(x); };
  if (t == "Cos") return [](double x) { return std::cos(x); };
  if (t == "Tan") return [](double x) { return std::tan(x); };
  if (t == "Asin") return [](double x) { return std::asin(x); };
  if (t == "Acos") return [](double x) { return std::acos(x); };
  if (t == "Atan") return [](double x) { return std::atan(x); };
  if (t == "Sinh") return [](double x) { return std::sinh(x); };
  if (t == "Cosh") return [](double x) { return std::cosh(x); };
  if (t == "Asinh") return [](double x) { return std::asinh(x); };
  if (t == "Acosh") return [](double x) { return std::acosh(x); };
  if (t == "Atanh") return [](double x) { return std::atanh(x); };
  if (t == "Abs") return [](double x) { return std::fabs(x); };
  if (t == "Neg") return [](double x) { return -x; };
  if (t == "Sign") return [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; };
  return {};
}

/// Abs, Neg, Sign, Relu, Clip on integer types, computed in the type itself.
template <class T> bool integer_unary(const context& ctx, const std::vector<Tensor>& in, const T* x, T* y, int64_t n) {
  const std::string& t = ctx.op.type;
  if (t == "Abs") { for (int64_t i = 0; i < n; ++i) y[i] = x[i] < T(0) ? T(-x[i]) : x[i]; return true; }
  if (t == "Neg") { for (int64_t i = 0; i < n; ++i) y[i] = T(-x[i]); return true; }
  if (t == "Sign") { for (int64_t i = 0; i < n; ++i) y[i] = x[i] > T(0) ? T(1) : x[i] < T(0) ? T(-1) : T(0); return true; }
  if (t == "Relu") { for (int64_t i = 0; i < n; ++i) y[i] = x[i] > T(0) ? x[i] : T(0); return true; }
  if (t == "Clip") {
    T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    if (has_input(in, 1)) lo = in[1].data<T>()[0];
    if (has_input(in, 2)) hi = in[2].data<T>()[0];
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
    return true;
  }
  return false;
}

void unary_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  if (x.get_size() != y.get_size()) fail(ctx, "output size differs from input size");
  const std::string& t = ctx.op.type;
  int64_t n = x.get_size();
  if (t == "Not") {
    if (x.get_element_type() != element_type::boolean) fail(ctx, "input must be boolean");
    for (int64_t i = 0; i < n; ++i) y.data<bool>()[i] = !x.data<bool>()[i];
    return;
  }
  if (t == "IsNaN" || t == "IsInf") {
    bool neg = ctx.op.attr_int("detect_negative", 1) != 0, pos = ctx.op.attr_int("detect_positive", 1) != 0;
    auto v = to_doubles(x);
    for (int64_t i = 0; i < n; ++i) {
      double d = v[static_cast<std::size_t>(i)];
      y.data<bool>()[i] = t == "IsNaN" ? std::isnan(d) : (std::isinf(d) && ((d > 0 && pos) || (d < 0 && neg)));
    }
    return;
  }
  if (x.get_element_type() != y.get_element_type()) fail(ctx, "output type differs from input type");
  dispatch(x.get_element_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    if constexpr (!is_float_v<T> && !std::is_same_v<T, bool>) {
      if (integer_unary<T>(ctx, in, xp, yp, n)) return;
    }
    scalar_fn f;
    if (t == "Clip") {
      double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
      if (ctx.op.has_attr("min")) lo = ctx.op.attr_float("min", 0);
      if (ctx.op.has_attr("max")) hi = ctx.op.attr_float("max", 0);
      if (has_input(in, 1)) lo = element_as_double(in[1], 0);
      if (has_input(in, 2)) hi = element_as_double(in[2], 0);
      f = [lo, hi](double v) { return v < lo ? lo : v > hi ? hi : v; };
    } else {
      f = float_fn(ctx.op);
    }
    if (!f) fail(ctx, "not a unary op");
    if constexpr (!is_float_v<T>) fail(ctx, "element type " + to_string(x.get_element_type()) + " is not supported");
    for (int64_t i = 0; i < n; ++i)
      yp[i] = T(static_cast<calc_t<T>>(f(static_cast<double>(static_cast<calc_t<T>>(xp[i])))));
  });
}

} // namespace

double activation_value(const std::string& name, double x, const std::vector<float>& p) {
  auto param = [&](std::size_t i, double def) { return i < p.size() ? static_cast<double>(p[i]) : def; };
  if (name == "Relu") return x > 0 ? x : 0.0;
  if (name == "Sigmoid") return sigmoid(x);
  if (name == "Tanh") return std::tanh(x);
  if (name == "HardSigmoid") return std::max(0.0, std::min(1.0, param(0, 0.2) * x + param(1, 0.5)));
  if (name == "HardSwish") return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5));
  if (name == "LeakyRelu") return x < 0 ? param(0, 0.01) * x : x;
  if (name == "Clip") {
    double lo = param(0, -std::numeric_limits<double>::infinity()), hi = param(1, std::numeric_limits<double>::infinity());
    return x < lo ? lo : x > hi ? hi : x;
  }
  throw Exception("unknown fused activation '" + name + "'");
}

void register_unary(kernel_map& m) {
  for (const char* n : {"Relu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "LeakyRelu", "Elu", "Selu", "Celu",
                        "Softplus", "Softsign", "ThresholdedRelu", "Shrink", "Gelu", "Mish", "Exp", "Log", "Sqrt",
                        "Reciprocal", "Floor", "Ceil", "Round", "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
                        "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Abs", "Neg", "Sign", "Clip", "Not", "IsNaN",
                        "IsInf"})
    m[n] = unary_kernel;
}

} // namespace troupe::kernels::reference
