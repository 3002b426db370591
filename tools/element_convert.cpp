#include "tools/element_convert.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include <troupe/exception.hpp>
#include <troupe/float16.hpp>

namespace troupe::cli {

namespace {

enum class kind { plain, f16, bf16, boolean };

/// An element type: the C++ type its bytes are stored as, and how to read them.
template <class T, kind K = kind::plain> struct tag {
  using storage = T;
  static constexpr kind k = K;
};

template <class F> void visit(element_type t, F&& f) {
  switch (t) {
  case element_type::f32: f(tag<float>{}); return;
  case element_type::f64: f(tag<double>{}); return;
  case element_type::f16: f(tag<uint16_t, kind::f16>{}); return;
  case element_type::bf16: f(tag<uint16_t, kind::bf16>{}); return;
  case element_type::i8: f(tag<int8_t>{}); return;
  case element_type::i16: f(tag<int16_t>{}); return;
  case element_type::i32: f(tag<int32_t>{}); return;
  case element_type::i64: f(tag<int64_t>{}); return;
  case element_type::u8: f(tag<uint8_t>{}); return;
  case element_type::u16: f(tag<uint16_t>{}); return;
  case element_type::u32: f(tag<uint32_t>{}); return;
  case element_type::u64: f(tag<uint64_t>{}); return;
  case element_type::boolean: f(tag<uint8_t, kind::boolean>{}); return;
  default: throw Exception("cannot convert values of element type " + to_string(t));
  }
}

/// The arithmetic value of a stored element.
template <class Tag> auto read(typename Tag::storage v) {
  if constexpr (Tag::k == kind::f16) return half_bits_to_float(v);
  else if constexpr (Tag::k == kind::bf16) return bf16_bits_to_float(v);
  else if constexpr (Tag::k == kind::boolean) return static_cast<uint8_t>(v != 0);
  else return v;
}

template <class D, class V> D cast(V v) {
  if constexpr (std::is_integral_v<D> && std::is_floating_point_v<V>) {
    if (std::isnan(v)) return 0;
    // The limits as V: max() of a 64-bit integer rounds up to 2^63 (or 2^64), which is out of
    // range, so the comparison is >= and that bound saturates too.
    if (v <= static_cast<V>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
    if (v >= static_cast<V>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(v);
  } else {
    return static_cast<D>(v);
  }
}

template <class Tag, class V> typename Tag::storage write(V v) {
  if constexpr (Tag::k == kind::f16) return float_to_half_bits(static_cast<float>(v));
  else if constexpr (Tag::k == kind::bf16) return float_to_bf16_bits(static_cast<float>(v));
  else if constexpr (Tag::k == kind::boolean) return static_cast<uint8_t>(v != 0);
  else return cast<typename Tag::storage>(v);
}

} // namespace

bool convertible(element_type t) {
  return t != element_type::string && t != element_type::undefined && element_size(t) != 0;
}

Tensor convert(const Tensor& src, element_type to) {
  if (src.get_element_type() == to) return src.clone();
  Tensor dst(to, src.get_shape());
  const auto n = static_cast<std::size_t>(src.get_size());
  visit(src.get_element_type(), [&](auto s_tag) {
    using S = decltype(s_tag);
    visit(to, [&](auto d_tag) {
      using D = decltype(d_tag);
      const auto* s = src.data<typename S::storage>();
      auto* d = dst.data<typename D::storage>();
      for (std::size_t i = 0; i < n; ++i) d[i] = write<D>(read<S>(s[i]));
    });
  });
  return dst;
}

std::vector<float> to_floats(const Tensor& t) {
  auto f = convert(t, element_type::f32);
  const auto* p = f.data<float>();
  return std::vector<float>(p, p + f.get_size());
}

} // namespace troupe::cli
