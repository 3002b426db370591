#pragma once
/// Helpers shared by the reference kernels: 16-bit float types, element-type dispatch,
/// value conversion, argument access with named errors, and a broadcasting loop.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include <troupe/exception.hpp>
#include <troupe/tensor.hpp>

#include <troupe/float16.hpp>
#include "graph/ir.hpp"
#include "kernels/reference/kernels.hpp"

namespace troupe::kernels::reference {

// ---- 16-bit floats (the conversions are troupe/float16.hpp's) ------------------------------

struct f16_t {
  uint16_t bits = 0;
  f16_t() = default;
  f16_t(float f) : bits(float_to_half_bits(f)) {}
  operator float() const { return half_bits_to_float(bits); }
};
struct bf16_t {
  uint16_t bits = 0;
  bf16_t() = default;
  bf16_t(float f) : bits(float_to_bf16_bits(f)) {}
  operator float() const { return bf16_bits_to_float(bits); }
};

template <class T> constexpr bool is_f16_v = std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>;
template <class T> constexpr bool is_float_v = std::is_floating_point_v<T> || is_f16_v<T>;
/// The type arithmetic on T happens in (16-bit floats compute in float).
template <class T> using calc_t = std::conditional_t<is_f16_v<T>, float, T>;

// ---- dispatch ------------------------------------------------------------------------------

/// Calls f(T{}) with the C++ type of element type t; throws for string/undefined.
template <class F> decltype(auto) dispatch(element_type t, F&& f) {
  switch (t) {
  case element_type::f32: return f(float{});
  case element_type::f64: return f(double{});
  case element_type::f16: return f(f16_t{});
  case element_type::bf16: return f(bf16_t{});
  case element_type::i8: return f(int8_t{});
  case element_type::u8: return f(uint8_t{});
  case element_type::i16: return f(int16_t{});
  case element_type::u16: return f(uint16_t{});
  case element_type::i32: return f(int32_t{});
  case element_type::u32: return f(uint32_t{});
  case element_type::i64: return f(int64_t{});
  case element_type::u64: return f(uint64_t{});
  case element_type::boolean: return f(bool{});
  case element_type::string: case element_type::undefined: break;
  }
  throw Exception("reference kernels: element type " + to_string(t) + " is not supported");
}

/// Converts one value to T without undefined behaviour (NaN/out-of-range floats saturate).
template <class T, class S> T convert(S s) {
  if constexpr (std::is_same_v<T, bool>) {
    return static_cast<calc_t<S>>(s) != calc_t<S>(0);
  } else if constexpr (is_float_v<T>) {
    if constexpr (is_f16_v<S>) return T(static_cast<float>(s));
    else return T(static_cast<calc_t<T>>(s));
  } else if constexpr (is_float_v<S>) {
    double d = static_cast<double>(static_cast<calc_t<S>>(s));
    if (std::isnan(d)) return T(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (d <= lo) return std::numeric_limits<T>::lowest();
    if (d >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(d);
  } else {
    return static_cast<T>(s);
  }
}

/// All elements as doubles, whatever the element type.
std::vector<double> to_doubles(const Tensor& t);
/// Stores doubles into t, converting to its element type.
void from_doubles(Tensor& t, const std::vector<double>& v);
/// Integer contents (i64/i32/...), e.g. axes, shapes, pads given as inputs.
std::vector<int64_t> to_ints(const Tensor& t);
/// One element as double.
double element_as_double(const Tensor& t, int64_t i);

// ---- argument access -----------------------------------------------------------------------

[[noreturn]] void fail(const context& ctx, const std::string& why);

inline bool has_input(const std::vector<Tensor>& in, std::size_t i) { return i < in.size() && !in[i].empty(); }
inline bool has_output(const std::vector<Tensor>& out, std::size_t i) { return i < out.size() && !out[i].empty(); }
const Tensor& input(const context& ctx, const std::vector<Tensor>& in, std::size_t i);
Tensor& output(const context& ctx, std::vector<Tensor>& out, std::size_t i);

/// Normalizes a possibly negative axis into [0, rank); throws naming the op when out of range.
int64_t norm_axis(const context& ctx, int64_t axis, int64_t rank);
/// Row-major strides of a shape (in elements).
std::vector<int64_t> strides_of(const Shape& s);
/// Product of dims [b, e).
int64_t dims_product(const Shape& s, std::size_t b, std::size_t e);

/// Copies bytes (strings: the strings) from src into dst; sizes must match (checked, naming the op).
void copy_bytes(const context& ctx, const Tensor& src, Tensor& dst);

// ---- broadcasting --------------------------------------------------------------------------

/// Strides of `in` (in elements) aligned to `out`'s rank, 0 where `in` is broadcast; throws
/// naming the op when `in` does not broadcast to `out`.
std::vector<int64_t> broadcast_strides(const context& ctx, const Shape& in, const Shape& out);

/// Calls f(out_index, offsets) for every element of `out`, offsets[k] indexing input k.
template <std::size_t N, class F>
void broadcast_loop(const Shape& out, const std::array<std::vector<int64_t>, N>& st, F&& f) {
  int64_t total = shape_size(out);
  if (total == 0) return;
  std::size_t r = out.size();
  std::vector<int64_t> idx(r, 0);
  std::array<int64_t, N> off{};
  for (int64_t i = 0; i < total; ++i) {
    f(i, off);
    for (std::size_t d = r; d-- > 0;) {
      ++idx[d];
      for (std::size_t k = 0; k < N; ++k) off[k] += st[k][d];
      if (idx[d] < out[d]) break;
      for (std::size_t k = 0; k < N; ++k) off[k] -= st[k][d] * out[d];
      idx[d] = 0;
    }
  }
}

// ---- registration --------------------------------------------------------------------------

using kernel_map = std::map<std::string, kernel_fn>;
void register_unary(kernel_map& m);
void register_binary(kernel_map& m);
void register_matmul(kernel_map& m);
void register_conv(kernel_map& m);
void register_pooling(kernel_map& m);
void register_normalization(kernel_map& m);
void register_softmax(kernel_map& m);
void register_reduce(kernel_map& m);
void register_movement(kernel_map& m);
void register_indexing(kernel_map& m);
void register_generators(kernel_map& m);
void register_cast(kernel_map& m);
void register_resize(kernel_map& m);
void register_loss(kernel_map& m);
void register_selection(kernel_map& m);
void register_einsum(kernel_map& m);
void register_quantize(kernel_map& m);
void register_windows(kernel_map& m);
void register_grid_sample(kernel_map& m);
void register_recurrent(kernel_map& m);
void register_signal(kernel_map& m);
void register_roi_align(kernel_map& m);
void register_tfidf_vectorizer(kernel_map& m);
void register_sequence(kernel_map& m);
void register_control_flow(kernel_map& m);
void register_strings(kernel_map& m);
void register_detection(kernel_map& m);

/// Cast and CastLike where x or y is a string tensor (string_cast.cpp).
void cast_strings(const context& ctx, const Tensor& x, Tensor& y);

/// The scalar activation functions shared by unary kernels and fused activations.
double activation_value(const std::string& name, double x, const std::vector<float>& params);

} // namespace troupe::kernels::reference
