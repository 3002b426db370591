#pragma once
/// A tensor layout, one name per dimension ("NCHW", "NHWC", "[N,C,H,W]", "N?HW"), as ov::Layout:
/// preprocessing uses it to find the channel, height and width dimensions and to permute.
#include <troupe/export.hpp>
#include <cstddef>
#include <string>

namespace troupe {

class TROUPE_API Layout {
public:
  Layout() = default; ///< empty: unknown
  /// Letters, one per dimension, '?' for an unnamed one; or the same inside brackets, comma
  /// separated. Throws naming the text when a name repeats or a character is not a letter.
  Layout(const std::string& text);
  Layout(const char* text) : Layout(std::string(text)) {}

  bool empty() const { return names_.empty(); }
  std::size_t rank() const { return names_.size(); }
  /// The dimension named `name` ('C', 'H', ...), or -1.
  long index_of(char name) const;
  bool has(char name) const { return index_of(name) >= 0; }
  /// "[N,C,H,W]", as OpenVINO prints a layout ("[]" when empty).
  std::string to_string() const;
  /// One letter per dimension ("NCHW").
  const std::string& letters() const { return names_; }
  bool operator==(const Layout& o) const { return names_ == o.names_; }
  bool operator!=(const Layout& o) const { return !(*this == o); }

private:
  std::string names_;
};

} // namespace troupe
