#include <troupe/element_type.hpp>
#include <troupe/exception.hpp>

namespace troupe {

std::size_t element_size(element_type t) {
  switch (t) {
  case element_type::f32: case element_type::i32: case element_type::u32: return 4;
  case element_type::u8: case element_type::i8: case element_type::boolean: return 1;
  case element_type::u16: case element_type::i16: case element_type::f16: case element_type::bf16: return 2;
  case element_type::i64: case element_type::f64: case element_type::u64: return 8;
  case element_type::undefined: case element_type::string: return 0;
  }
  return 0;
}

std::string to_string(element_type t) {
  switch (t) {
  case element_type::undefined: return "undefined";
  case element_type::f32: return "f32";
  case element_type::u8: return "u8";
  case element_type::i8: return "i8";
  case element_type::u16: return "u16";
  case element_type::i16: return "i16";
  case element_type::i32: return "i32";
  case element_type::i64: return "i64";
  case element_type::string: return "string";
  case element_type::boolean: return "boolean";
  case element_type::f16: return "f16";
  case element_type::f64: return "f64";
  case element_type::u32: return "u32";
  case element_type::u64: return "u64";
  case element_type::bf16: return "bf16";
  }
  return "element_type(" + std::to_string(static_cast<int>(t)) + ")";
}

element_type element_type_from_string(std::string_view n) {
  struct entry { std::string_view a, b; element_type t; };
  static constexpr entry table[] = {
      {"f32", "float32", element_type::f32}, {"f16", "float16", element_type::f16},
      {"bf16", "bfloat16", element_type::bf16}, {"f64", "float64", element_type::f64},
      {"i8", "int8", element_type::i8}, {"u8", "uint8", element_type::u8},
      {"i16", "int16", element_type::i16}, {"u16", "uint16", element_type::u16},
      {"i32", "int32", element_type::i32}, {"u32", "uint32", element_type::u32},
      {"i64", "int64", element_type::i64}, {"u64", "uint64", element_type::u64},
      {"boolean", "bool", element_type::boolean}, {"string", "str", element_type::string}};
  for (const auto& e : table)
    if (n == e.a || n == e.b) return e.t;
  throw Exception("unknown element type '" + std::string(n) + "'");
}

} // namespace troupe
