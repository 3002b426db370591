#pragma once
/// A shape whose dims may be dynamic (< 0), or whose rank may be unknown; ONNX dim_param
/// names are kept as symbols for printing, OpenVINO's bounds ("1..64") as ranges.
#include <troupe/export.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include <troupe/tensor.hpp>

namespace troupe {

/// The lengths a dynamic dimension may take: [min, max], max -1 when unbounded.
struct dim_range {
  int64_t min = 0;
  int64_t max = -1;
  bool bounded() const { return min > 0 || max >= 0; }
  bool contains(int64_t n) const { return n >= min && (max < 0 || n <= max); }
  bool operator==(const dim_range&) const = default;
};

struct TROUPE_API PartialShape {
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;
  /// Per dim, or empty: the range of a dynamic dim (read only where dims[i] < 0). A model's
  /// inputs keep theirs (an IR's "1..64", a reshape to a bounded Dimension) and requests are
  /// checked against them; shape inference does not carry ranges to other values.
  std::vector<dim_range> ranges;
  bool rank_known = true;

  PartialShape() = default;
  PartialShape(Shape d) : dims(std::move(d)) {}
  PartialShape(std::initializer_list<int64_t> d) : dims(d) {}
  static PartialShape unknown_rank() { PartialShape p; p.rank_known = false; return p; }
  bool is_static() const;
  std::size_t rank() const { return dims.size(); }
  Shape to_shape() const; ///< throws when dynamic
  std::string to_string() const; ///< "[1,3,?,?]", "[1,1..64]", "[...]" for unknown rank
  /// "1,3,48,192", "[1,3,48,192]", "1x3x48x192", "?" or "-1" for dynamic dims, "1..64",
  /// "1.." or "..64" for bounded ones.
  static PartialShape parse(const std::string& text);
  /// Dim i's range: {n, n} when static, its bounds or {0, -1} when dynamic.
  dim_range range(std::size_t i) const;
  /// Makes dim i dynamic within [min, max] (static when min == max); throws when empty.
  void set_range(std::size_t i, dim_range r);
  /// One dim as OpenVINO prints it: "4", "?", "1..64", "1..", "..64".
  static std::string dim_text(int64_t dim, dim_range r);
  bool operator==(const PartialShape& o) const;
};

} // namespace troupe
