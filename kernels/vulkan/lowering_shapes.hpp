#pragma once
/// Shape arithmetic shared by the rule files (copies, element-wise ops, pads, index ops).
#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir.hpp"
#include "kernels/vulkan/lowering.hpp"

namespace troupe::kernels::vulkan {

/// A specialization constant from a dim or count known to fit 32 bits.
inline uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

/// Whether input (output) i is given: present and not omitted.
inline bool has_input(const graph::Op& op, std::size_t i) { return i < op.inputs.size() && op.inputs[i] != graph::no_value; }
inline bool has_output(const graph::Op& op, std::size_t i) {
  return i < op.outputs.size() && op.outputs[i] != graph::no_value;
}

/// Row-major element strides of `s`.
inline std::vector<int64_t> row_strides(const Shape& s) {
  std::vector<int64_t> r(s.size(), 1);
  for (std::size_t i = s.size(); i-- > 1;) r[i - 1] = r[i] * s[i];
  return r;
}

inline std::size_t axis_of(int64_t a, std::size_t rank) {
  return static_cast<std::size_t>(a < 0 ? a + static_cast<int64_t>(rank) : a);
}

/// Product of s[from, to).
inline int64_t dims_between(const Shape& s, std::size_t from, std::size_t to) {
  int64_t p = 1;
  for (std::size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

/// How a word-moving shader holds an element of type t: 0 = float (the SFLOAT variant, float16
/// in f16 mode), 1 or 2 = that many 32-bit words (the _words variant), -1 = no shader (8- and
/// 16-bit types are packed several to a word).
inline int words_of(element_type t) {
  if (t == element_type::f32) return 0;
  std::size_t s = element_size(t);
  return s == 4 ? 1 : s == 8 ? 2 : -1;
}

/// Empty when every input and output has rank <= 6 (the shaders' dims), else why not.
inline std::string check_rank(const graph::Graph& g, const graph::Op& op) {
  for (const auto* vs : {&op.inputs, &op.outputs})
    for (auto v : *vs)
      if (v != graph::no_value && shape_of(g, v).size() > 6) return "rank above 6 has no Vulkan shader";
  return "";
}

/// int32 or int64 (and their unsigned twins): add and multiply wrap the same way in words.
inline bool integer_words(element_type t) {
  return t == element_type::i32 || t == element_type::i64 || t == element_type::u32 || t == element_type::u64;
}

} // namespace troupe::kernels::vulkan
