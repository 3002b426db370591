#pragma once
/// ov::Tensor: troupe's Tensor handle (same buffer, same sharing) with OpenVINO's types at its
/// surface: ov::element::Type and ov::Shape.
#include <cstddef>
#include <vector>

#include <troupe/export.hpp>
#include <troupe/tensor.hpp>
#include <troupe/openvino/element_type.hpp>
#include <troupe/openvino/shape.hpp>

namespace ov {

using Strides = std::vector<std::size_t>;

class Tensor : public troupe::Tensor {
public:
  Tensor() = default;
  Tensor(const troupe::Tensor& t) : troupe::Tensor(t) {}
  /// Allocates (zero-filled).
  TROUPE_API Tensor(const element::Type& type, const Shape& shape);
  /// Wraps memory the caller owns; dense only (troupe tensors have no strides).
  TROUPE_API Tensor(const element::Type& type, const Shape& shape, void* host_ptr, const Strides& strides = {});

  element::Type get_element_type() const { return troupe::Tensor::get_element_type(); }
  Shape get_shape() const { return Shape(troupe::Tensor::get_shape()); }
  std::size_t get_size() const { return static_cast<std::size_t>(troupe::Tensor::get_size()); }
  Strides get_strides() const { return dense_strides(get_element_type(), get_shape()); }
  bool is_continuous() const { return true; }
  explicit operator bool() const { return !empty(); }
  /// Same element count: the same buffer seen with the new shape; otherwise a new buffer (the
  /// old contents are not kept), as OpenVINO reallocates a tensor it owns.
  void set_shape(const Shape& shape) {
    troupe::Shape s(shape);
    if (troupe::shape_size(s) == troupe::Tensor::get_size()) *this = Tensor(reshaped(s));
    else *this = Tensor(get_element_type(), shape);
  }
  void copy_to(ov::Tensor& dst) const { troupe::Tensor::copy_to(dst); }

private:
  TROUPE_API static Strides dense_strides(const element::Type& type, const Shape& shape);
};

} // namespace ov
