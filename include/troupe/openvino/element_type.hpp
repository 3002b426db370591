#pragma once
/// ov::element: Type_t is troupe's element_type itself (so an ov type goes to troupe unchanged)
/// and Type wraps it as OpenVINO's class does: `switch (t) { case ov::element::f32: ... }`.
#include <bit>
#include <cstdint>
#include <istream>
#include <type_traits>
#include <ostream>
#include <string>

#include <troupe/element_type.hpp>
#include <troupe/float16.hpp>
#include <troupe/openvino/exception.hpp>

namespace ov {

/// 16-bit floats as OpenVINO's ov::float16 / ov::bfloat16: the bits, converting to and from float.
class float16 {
public:
  constexpr float16() = default;
  constexpr float16(float v) : bits_(troupe::float_to_half_bits(v)) {}
  constexpr operator float() const { return troupe::half_bits_to_float(bits_); }
  static constexpr float16 from_bits(uint16_t b) { float16 h; h.bits_ = b; return h; }
  constexpr uint16_t to_bits() const { return bits_; }

private:
  uint16_t bits_ = 0;
};

class bfloat16 {
public:
  constexpr bfloat16() = default;
  /// Rounded to nearest even, as troupe's bf16 kernels round.
  constexpr bfloat16(float v) {
    const uint32_t x = std::bit_cast<uint32_t>(v);
    bits_ = (x & 0x7fffffffu) > 0x7f800000u ? static_cast<uint16_t>((x >> 16) | 0x40u) // NaN stays NaN
                                              : static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }
  constexpr operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits_) << 16); }
  static constexpr bfloat16 from_bits(uint16_t b) { bfloat16 h; h.bits_ = b; return h; }
  constexpr uint16_t to_bits() const { return bits_; }

private:
  uint16_t bits_ = 0;
};

} // namespace ov

namespace ov::element {

using Type_t = troupe::element_type;

class Type {
public:
  constexpr Type() = default;
  constexpr Type(Type_t t) : t_(t) {}
  /// "f32", "u8", "boolean", ...; also "float32", "int64", "bool".
  explicit Type(const std::string& name) : t_(troupe::element_type_from_string(name)) {}
  constexpr operator Type_t() const { return t_; }

  std::string get_type_name() const { return troupe::to_string(t_); }
  std::string to_string() const { return get_type_name(); }
  std::size_t size() const { return troupe::element_size(t_); }
  std::size_t bitwidth() const { return 8 * size(); }
  constexpr bool is_static() const { return t_ != Type_t::undefined; }
  constexpr bool is_dynamic() const { return !is_static(); }
  constexpr bool is_real() const {
    return t_ == Type_t::f32 || t_ == Type_t::f16 || t_ == Type_t::bf16 || t_ == Type_t::f64;
  }
  constexpr bool is_integral() const { return is_static() && !is_real() && t_ != Type_t::string; }
  constexpr bool is_integral_number() const { return is_integral() && t_ != Type_t::boolean; }
  constexpr bool is_signed() const {
    return is_real() || t_ == Type_t::i8 || t_ == Type_t::i16 || t_ == Type_t::i32 || t_ == Type_t::i64;
  }
  constexpr bool operator==(const Type& o) const { return t_ == o.t_; }
  constexpr bool operator==(Type_t o) const { return t_ == o; }
  constexpr bool operator<(const Type& o) const { return t_ < o.t_; }

private:
  Type_t t_ = Type_t::undefined;
};

// The types troupe has (OpenVINO's dynamic, i4, u1, u4, nf4, f8 are not among them).
inline constexpr Type undefined(Type_t::undefined);
inline constexpr Type boolean(Type_t::boolean);
inline constexpr Type bf16(Type_t::bf16);
inline constexpr Type f16(Type_t::f16);
inline constexpr Type f32(Type_t::f32);
inline constexpr Type f64(Type_t::f64);
inline constexpr Type i8(Type_t::i8);
inline constexpr Type i16(Type_t::i16);
inline constexpr Type i32(Type_t::i32);
inline constexpr Type i64(Type_t::i64);
inline constexpr Type u8(Type_t::u8);
inline constexpr Type u16(Type_t::u16);
inline constexpr Type u32(Type_t::u32);
inline constexpr Type u64(Type_t::u64);
inline constexpr Type string(Type_t::string);

inline std::ostream& operator<<(std::ostream& os, const Type& t) { return os << t.get_type_name(); }
inline std::istream& operator>>(std::istream& is, Type& t) {
  std::string s;
  is >> s;
  t = Type(s);
  return is;
}

/// The C++ type of each element type (OpenVINO's element_type_traits).
template <Type_t> struct element_type_traits;
template <> struct element_type_traits<Type_t::boolean> { using value_type = char; };
template <> struct element_type_traits<Type_t::bf16> { using value_type = ov::bfloat16; };
template <> struct element_type_traits<Type_t::f16> { using value_type = ov::float16; };
template <> struct element_type_traits<Type_t::f32> { using value_type = float; };
template <> struct element_type_traits<Type_t::f64> { using value_type = double; };
template <> struct element_type_traits<Type_t::i8> { using value_type = int8_t; };
template <> struct element_type_traits<Type_t::i16> { using value_type = int16_t; };
template <> struct element_type_traits<Type_t::i32> { using value_type = int32_t; };
template <> struct element_type_traits<Type_t::i64> { using value_type = int64_t; };
template <> struct element_type_traits<Type_t::u8> { using value_type = uint8_t; };
template <> struct element_type_traits<Type_t::u16> { using value_type = uint16_t; };
template <> struct element_type_traits<Type_t::u32> { using value_type = uint32_t; };
template <> struct element_type_traits<Type_t::u64> { using value_type = uint64_t; };
template <> struct element_type_traits<Type_t::string> { using value_type = std::string; };

/// The element type of a C++ type: from<float>() == f32.
template <class T> constexpr Type from() {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, char>) return boolean;
  else if constexpr (std::is_same_v<T, float>) return f32;
  else if constexpr (std::is_same_v<T, double>) return f64;
  else if constexpr (std::is_same_v<T, ov::float16>) return f16;
  else if constexpr (std::is_same_v<T, ov::bfloat16>) return bf16;
  else if constexpr (std::is_same_v<T, int8_t>) return i8;
  else if constexpr (std::is_same_v<T, int16_t>) return i16;
  else if constexpr (std::is_same_v<T, int32_t>) return i32;
  else if constexpr (std::is_same_v<T, int64_t>) return i64;
  else if constexpr (std::is_same_v<T, uint8_t>) return u8;
  else if constexpr (std::is_same_v<T, uint16_t>) return u16;
  else if constexpr (std::is_same_v<T, uint32_t>) return u32;
  else if constexpr (std::is_same_v<T, uint64_t>) return u64;
  else if constexpr (std::is_same_v<T, std::string>) return string;
  else static_assert(sizeof(T) == 0, "ov::element::from<T>: no element type for T");
}

} // namespace ov::element

namespace ov {
template <element::Type_t T> using fundamental_type_for = typename element::element_type_traits<T>::value_type;
} // namespace ov
