/// Multidirectional-broadcasting element-wise ops: arithmetic, comparison, logic, the
/// variadic Min/Max/Sum/Mean, PRelu, BitShift and Where. Arithmetic happens in the element
/// type (integer division truncates, Mod follows the divisor's sign unless fmod=1).
#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

enum class bop { add, sub, mul, div, pow, mod, fmod, eq, lt, le, gt, ge, and_, or_, xor_, min, max, prelu, shl, shr };

bop parse(const context& ctx) {
  const std::string& t = ctx.op.type;
  if (t == "Add" || t == "Sum" || t == "Mean") return bop::add;
  if (t == "Sub") return bop::sub;
  if (t == "Mul") return bop::mul;
  if (t == "Div") return bop::div;
  if (t == "Pow") return bop::pow;
  if (t == "Mod") return ctx.op.attr_int("fmod", 0) ? bop::fmod : bop::mod;
  if (t == "Equal") return bop::eq;
  if (t == "Less") return bop::lt;
  if (t == "LessOrEqual") return bop::le;
  if (t == "Greater") return bop::gt;
  if (t == "GreaterOrEqual") return bop::ge;
  if (t == "And") return bop::and_;
  if (t == "Or") return bop::or_;
  if (t == "Xor") return bop::xor_;
  if (t == "Min") return bop::min;
  if (t == "Max") return bop::max;
  if (t == "PRelu") return bop::prelu;
  if (t == "BitShift") return ctx.op.attr_string("direction", "") == "LEFT" ? bop::shl : bop::shr;
  fail(ctx, "not a binary op");
}

bool is_compare(bop o) { return o == bop::eq || o == bop::lt || o == bop::le || o == bop::gt || o == bop::ge; }

/// a (op) b in the arithmetic of T; integers wrap instead of overflowing.
template <class T> calc_t<T> arith(const context& ctx, bop o, calc_t<T> a, calc_t<T> b) {
  using C = calc_t<T>;
  if constexpr (std::is_same_v<T, bool>) {
    switch (o) {
    case bop::and_: return a && b;
    case bop::or_: return a || b;
    case bop::xor_: return a != b;
    case bop::min: return a && b;
    case bop::max: return a || b;
    default: fail(ctx, "operation is not defined on booleans");
    }
  } else if constexpr (std::is_floating_point_v<C>) {
    switch (o) {
    case bop::add: return a + b;
    case bop::sub: return a - b;
    case bop::mul: return a * b;
    case bop::div: return a / b;
    case bop::pow: return static_cast<C>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    case bop::fmod: return static_cast<C>(std::fmod(a, b));
    case bop::mod: {
      C r = static_cast<C>(std::fmod(a, b));
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
    case bop::min: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<C>::quiet_NaN() : std::min(a, b);
    case bop::max: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<C>::quiet_NaN() : std::max(a, b);
    case bop::prelu: return a < 0 ? a * b : a;
    default: fail(ctx, "operation is not defined on floating-point types");
    }
  } else {
    using U = std::make_unsigned_t<C>;
    switch (o) {
    case bop::add: return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
    case bop::sub: return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
    case bop::mul: return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
    case bop::div:
    case bop::mod:
    case bop::fmod: {
      if (b == 0) fail(ctx, "integer division by zero");
      if constexpr (std::is_signed_v<C>)
        if (b == -1) return o == bop::div ? static_cast<C>(U(0) - static_cast<U>(a)) : C(0);
      if (o == bop::div) return static_cast<C>(a / b);
      C r = static_cast<C>(a % b);
      if constexpr (std::is_signed_v<C>)
        if (o == bop::mod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
      return r;
    }
    case bop::pow: return convert<C>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    case bop::min: return std::min(a, b);
    case bop::max: return std::max(a, b);
    case bop::prelu: return a < 0 ? static_cast<C>(a * b) : a;
    case bop::shl: return b >= static_cast<C>(sizeof(C) * 8) ? C(0) : static_cast<C>(static_cast<U>(a) << b);
    case bop::shr: return b >= static_cast<C>(sizeof(C) * 8) ? C(0) : static_cast<C>(static_cast<U>(a) >> b);
    default: fail(ctx, "operation is not defined on integer types");
    }
  }
}

template <class C> bool compare(bop o, C a, C b) {
  switch (o) {
  case bop::eq: return a == b;
  case bop::lt: return a < b;
  case bop::le: return a <= b;
  case bop::gt: return a > b;
  default: return a >= b;
  }
}

/// out = a (op) b with broadcasting; `a` may alias `out`.
void binary(const context& ctx, bop o, const Tensor& a, const Tensor& b, Tensor& y) {
  std::array<std::vector<int64_t>, 2> st{broadcast_strides(ctx, a.get_shape(), y.get_shape()),
                                         broadcast_strides(ctx, b.get_shape(), y.get_shape())};
  if (o == bop::pow && a.get_element_type() != b.get_element_type()) {
    // Pow alone allows an exponent of another type: compute in double, store as the base type.
    dispatch(a.get_element_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* ap = a.data<T>();
      T* yp = y.data<T>();
      broadcast_loop(y.get_shape(), st, [&](int64_t i, const std::array<int64_t, 2>& off) {
        double r = std::pow(static_cast<double>(static_cast<calc_t<T>>(ap[off[0]])), element_as_double(b, off[1]));
        yp[i] = convert<T>(r);
      });
    });
    return;
  }
  if (a.get_element_type() != b.get_element_type())
    fail(ctx, "input types differ: " + to_string(a.get_element_type()) + " and " + to_string(b.get_element_type()));
  dispatch(a.get_element_type(), [&](auto tag) {
    using T = decltype(tag);
    using C = calc_t<T>;
    const T* ap = a.data<T>();
    const T* bp = b.data<T>();
    if (is_compare(o)) {
      if (y.get_element_type() != element_type::boolean) fail(ctx, "output must be boolean");
      bool* yp = y.data<bool>();
      broadcast_loop(y.get_shape(), st, [&](int64_t i, const std::array<int64_t, 2>& off) {
        yp[i] = compare<C>(o, static_cast<C>(ap[off[0]]), static_cast<C>(bp[off[1]]));
      });
      return;
    }
    if (y.get_element_type() != a.get_element_type()) fail(ctx, "output type differs from input type");
    T* yp = y.data<T>();
    broadcast_loop(y.get_shape(), st, [&](int64_t i, const std::array<int64_t, 2>& off) {
      yp[i] = T(arith<T>(ctx, o, static_cast<C>(ap[off[0]]), static_cast<C>(bp[off[1]])));
    });
  });
}

void binary_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  binary(ctx, parse(ctx), input(ctx, in, 0), input(ctx, in, 1), output(ctx, out, 0));
}

/// Min, Max, Sum, Mean over any number of inputs: fold left into the output.
void variadic_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  Tensor& y = output(ctx, out, 0);
  const Tensor& first = input(ctx, in, 0);
  if (first.get_element_type() != y.get_element_type()) fail(ctx, "output type differs from input type");
  // Broadcast the first input into the output.
  std::array<std::vector<int64_t>, 1> st{broadcast_strides(ctx, first.get_shape(), y.get_shape())};
  std::size_t es = element_size(y.get_element_type());
  auto* src = static_cast<const uint8_t*>(first.data());
  auto* dst = static_cast<uint8_t*>(y.data());
  broadcast_loop(y.get_shape(), st, [&](int64_t i, const std::array<int64_t, 1>& off) {
    std::memcpy(dst + static_cast<std::size_t>(i) * es, src + static_cast<std::size_t>(off[0]) * es, es);
  });
  bop o = parse(ctx);
  for (std::size_t k = 1; k < in.size(); ++k) binary(ctx, o, y, input(ctx, in, k), y);
  if (ctx.op.type == "Mean" && in.size() > 1) {
    auto v = to_doubles(y);
    for (auto& e : v) e /= static_cast<double>(in.size());
    from_doubles(y, v);
  }
}

void where_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& c = input(ctx, in, 0);
  const Tensor& a = input(ctx, in, 1);
  const Tensor& b = input(ctx, in, 2);
  Tensor& y = output(ctx, out, 0);
  if (c.get_element_type() != element_type::boolean) fail(ctx, "condition must be boolean");
  if (a.get_element_type() != y.get_element_type() || b.get_element_type() != y.get_element_type())
    fail(ctx, "X, Y and output types differ");
  std::array<std::vector<int64_t>, 3> st{broadcast_strides(ctx, c.get_shape(), y.get_shape()),
                                         broadcast_strides(ctx, a.get_shape(), y.get_shape()),
                                         broadcast_strides(ctx, b.get_shape(), y.get_shape())};
  std::size_t es = element_size(y.get_element_type());
  const bool* cp = c.data<bool>();
  auto* ap = static_cast<const uint8_t*>(a.data());
  auto* bp = static_cast<const uint8_t*>(b.data());
  auto* yp = static_cast<uint8_t*>(y.data());
  broadcast_loop(y.get_shape(), st, [&](int64_t i, const std::array<int64_t, 3>& off) {
    const uint8_t* s = cp[off[0]] ? ap + static_cast<std::size_t>(off[1]) * es : bp + static_cast<std::size_t>(off[2]) * es;
    std::memcpy(yp + static_cast<std::size_t>(i) * es, s, es);
  });
}

} // namespace

void register_binary(kernel_map& m) {
  for (const char* n : {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Equal", "Less", "LessOrEqual", "Greater",
                        "GreaterOrEqual", "And", "Or", "Xor", "PRelu", "BitShift"})
    m[n] = binary_kernel;
  for (const char* n : {"Min", "Max", "Sum", "Mean"}) m[n] = variadic_kernel;
  m["Where"] = where_kernel;
}

} // namespace troupe::kernels::reference
