#pragma once
/// A model read from ONNX: inputs, outputs, ops with friendly names and runtime info, and
/// `reshape` to fix dynamic input dims (as ov::Model).
#include <troupe/export.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <troupe/element_type.hpp>
#include <troupe/layout.hpp>
#include <troupe/partial_shape.hpp>

namespace troupe {

/// A model input or output.
class Port {
public:
  Port(std::string name, element_type type, PartialShape shape, std::size_t index, Layout layout = {})
      : name_(std::move(name)), type_(type), shape_(std::move(shape)), index_(index), layout_(std::move(layout)) {}
  const std::string& get_any_name() const { return name_; }
  element_type get_element_type() const { return type_; }
  const PartialShape& get_partial_shape() const { return shape_; }
  Shape get_shape() const { return shape_.to_shape(); } ///< throws when dynamic
  std::size_t get_index() const { return index_; }
  /// The layout the model declares for it (OpenVINO IR's rt_info); empty when none, or when
  /// its dimension names are not single letters. PrePostProcessor takes it as the model's.
  const Layout& get_layout() const { return layout_; }

private:
  std::string name_;
  element_type type_;
  PartialShape shape_;
  std::size_t index_;
  Layout layout_;
};

class Node;

class TROUPE_API Model {
public:
  struct TROUPE_INTERNAL Impl; ///< hidden: a shared libtroupe exports the public API only
  explicit Model(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  std::vector<Port> inputs() const;
  std::vector<Port> outputs() const;
  Port input(const std::string& name) const;   ///< throws naming the unknown input
  Port output(const std::string& name) const;
  Port input(std::size_t index = 0) const;
  Port output(std::size_t index = 0) const;
  /// Fixes input shapes by name and propagates shapes through every op.
  void reshape(const std::map<std::string, PartialShape>& shapes);
  void reshape(const PartialShape& shape); ///< the only input
  std::vector<Node> get_ops() const;
  std::string get_friendly_name() const;

  const std::shared_ptr<Impl>& impl() const { return impl_; }

private:
  std::shared_ptr<Impl> impl_;
};

/// One op of a model; a handle that stays valid while the model lives.
class TROUPE_API Node {
public:
  std::string get_friendly_name() const;
  std::string get_type_name() const;
  /// Runtime info, e.g. "affinity" -> "CPU"; edits change the model.
  std::map<std::string, std::string>& get_rt_info();
  const std::map<std::string, std::string>& get_rt_info() const;

private:
  friend class Model;
  Node(std::shared_ptr<Model::Impl> model, std::size_t index) : model_(std::move(model)), index_(index) {}
  std::shared_ptr<Model::Impl> model_;
  std::size_t index_;
};

} // namespace troupe
