#pragma once
/// ov::Shape, ov::Dimension (ov::Rank), ov::PartialShape, spelled as OpenVINO's and converting
/// to and from troupe's Shape and PartialShape (a dynamic dimension is -1 there). Dimensions
/// have no bounds in troupe: Dimension(min, max) with min != max is an error saying so.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include <troupe/partial_shape.hpp>
#include <troupe/tensor.hpp>
#include <troupe/openvino/exception.hpp>

namespace ov {

class Shape : public std::vector<std::size_t> {
public:
  Shape() = default;
  Shape(std::initializer_list<std::size_t> dims) : std::vector<std::size_t>(dims) {}
  Shape(const std::vector<std::size_t>& dims) : std::vector<std::size_t>(dims) {}
  Shape(std::size_t rank, std::size_t value) : std::vector<std::size_t>(rank, value) {}
  template <class It> Shape(It first, It last) : std::vector<std::size_t>(first, last) {}
  Shape(const troupe::Shape& dims) : std::vector<std::size_t>(dims.begin(), dims.end()) {}
  operator troupe::Shape() const { return troupe::Shape(begin(), end()); }
  /// Directly too: troupe's calls that take a PartialShape (preprocessing's set_shape) take an ov::Shape.
  operator troupe::PartialShape() const { return troupe::PartialShape(troupe::Shape(*this)); }
  std::string to_string() const { return troupe::to_string(troupe::Shape(*this)); }
};

template <class S> std::size_t shape_size(const S& s) {
  std::size_t n = 1;
  for (auto d : s) n *= static_cast<std::size_t>(d);
  return n;
}

inline std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << s.to_string(); }

class Dimension {
public:
  using value_type = int64_t;
  Dimension() = default; ///< dynamic
  Dimension(value_type v) : r_(v < 0 ? troupe::dim_range{} : troupe::dim_range{v, v}) {}
  /// A dynamic dimension within [min, max] (max -1: unbounded), as OpenVINO's; static when
  /// min == max. A model input reshaped to one refuses tensors outside the range.
  Dimension(value_type min, value_type max) {
    if (max < -1 || (max >= 0 && max < min))
      OPENVINO_THROW("ov::Dimension(", min, ", ", max, "): an empty range");
    r_ = {min < 0 ? 0 : min, max};
  }
  static Dimension dynamic() { return {}; }
  bool is_static() const { return r_.min == r_.max; }
  bool is_dynamic() const { return !is_static(); }
  value_type get_length() const {
    OPENVINO_ASSERT(is_static(), "get_length() of the dynamic dimension ", to_string());
    return r_.max;
  }
  value_type get_min_length() const { return r_.min; }
  value_type get_max_length() const { return r_.max; } ///< -1: no upper bound
  /// The lengths both may take overlap.
  bool compatible(const Dimension& o) const {
    value_type lo = std::max(r_.min, o.r_.min);
    return (r_.max < 0 || lo <= r_.max) && (o.r_.max < 0 || lo <= o.r_.max);
  }
  bool operator==(const Dimension& o) const { return r_ == o.r_; }
  /// "4", "?", "1..64", "1..", "..64".
  std::string to_string() const { return troupe::PartialShape::dim_text(is_static() ? r_.max : -1, r_); }
  troupe::dim_range range() const { return r_; }

private:
  troupe::dim_range r_;
};

inline std::ostream& operator<<(std::ostream& os, const Dimension& d) { return os << d.to_string(); }

using Rank = Dimension;

class PartialShape {
public:
  PartialShape() = default; ///< rank 0 (a scalar), as OpenVINO's
  PartialShape(std::initializer_list<Dimension> dims) : dims_(dims) {}
  PartialShape(std::vector<Dimension> dims) : dims_(std::move(dims)) {}
  PartialShape(const std::vector<Dimension::value_type>& dims) : dims_(dims.begin(), dims.end()) {}
  PartialShape(const Shape& s) : dims_(s.begin(), s.end()) {}
  /// "[1,3,?,?]", "1,3,48,192", "?" or "-1" for dynamic dims.
  explicit PartialShape(const std::string& text) : PartialShape(troupe::PartialShape::parse(text)) {}
  PartialShape(const troupe::PartialShape& p) : rank_known_(p.rank_known) {
    for (std::size_t i = 0; i < p.dims.size(); ++i) {
      const auto r = p.range(i);
      dims_.emplace_back(r.min, r.max);
    }
  }
  operator troupe::PartialShape() const {
    if (!rank_known_) return troupe::PartialShape::unknown_rank();
    troupe::PartialShape p;
    p.dims.assign(dims_.size(), -1);
    for (std::size_t i = 0; i < dims_.size(); ++i) p.set_range(i, dims_[i].range());
    return p;
  }

  static PartialShape dynamic(Rank r = Rank::dynamic()) {
    if (r.is_static()) return PartialShape(std::vector<Dimension>(static_cast<std::size_t>(r.get_length())));
    PartialShape p;
    p.rank_known_ = false;
    return p;
  }
  Rank rank() const { return rank_known_ ? Rank(static_cast<int64_t>(dims_.size())) : Rank::dynamic(); }
  bool is_static() const {
    if (!rank_known_) return false;
    for (const auto& d : dims_)
      if (d.is_dynamic()) return false;
    return true;
  }
  bool is_dynamic() const { return !is_static(); }
  Shape to_shape() const {
    OPENVINO_ASSERT(is_static(), "to_shape() of the dynamic shape ", to_string());
    Shape s;
    for (const auto& d : dims_) s.push_back(static_cast<std::size_t>(d.get_length()));
    return s;
  }
  Shape get_shape() const { return to_shape(); }
  std::size_t size() const { return dims_.size(); }
  Dimension& operator[](std::size_t i) { return dims_.at(i); }
  const Dimension& operator[](std::size_t i) const { return dims_.at(i); }
  auto begin() { return dims_.begin(); }
  auto end() { return dims_.end(); }
  auto begin() const { return dims_.begin(); }
  auto end() const { return dims_.end(); }
  bool compatible(const PartialShape& o) const {
    if (!rank_known_ || !o.rank_known_) return true;
    if (dims_.size() != o.dims_.size()) return false;
    for (std::size_t i = 0; i < dims_.size(); ++i)
      if (!dims_[i].compatible(o.dims_[i])) return false;
    return true;
  }
  bool operator==(const PartialShape& o) const { return rank_known_ == o.rank_known_ && dims_ == o.dims_; }
  std::string to_string() const { return troupe::PartialShape(*this).to_string(); }

private:
  std::vector<Dimension> dims_;
  bool rank_known_ = true;
};

inline std::ostream& operator<<(std::ostream& os, const PartialShape& p) { return os << p.to_string(); }

} // namespace ov
