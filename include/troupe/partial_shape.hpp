#pragma once
/// A shape whose dims may be dynamic (< 0), or whose rank may be unknown; ONNX dim_param
/// names are kept as symbols for printing.
#include <troupe/export.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include <troupe/tensor.hpp>

namespace troupe {

struct TROUPE_API PartialShape {
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;
  bool rank_known = true;

  PartialShape() = default;
  PartialShape(Shape d) : dims(std::move(d)) {}
  PartialShape(std::initializer_list<int64_t> d) : dims(d) {}
  static PartialShape unknown_rank() { PartialShape p; p.rank_known = false; return p; }
  bool is_static() const;
  std::size_t rank() const { return dims.size(); }
  Shape to_shape() const; ///< throws when dynamic
  std::string to_string() const; ///< "[1,3,?,?]", "[...]" for unknown rank
  /// "1,3,48,192", "[1,3,48,192]", "1x3x48x192", "?" or "-1" for dynamic dims.
  static PartialShape parse(const std::string& text);
  bool operator==(const PartialShape& o) const { return dims == o.dims && rank_known == o.rank_known; }
};

} // namespace troupe
