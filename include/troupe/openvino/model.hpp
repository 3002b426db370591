#pragma once
/// ov::Model, ov::Node and ports (ov::Output<ov::Node>, ov::Output<const ov::Node>) over
/// troupe::Model: the same shared model, OpenVINO's shapes and ways of naming a port.
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <troupe/export.hpp>
#include <troupe/model.hpp>
#include <troupe/openvino/any.hpp>
#include <troupe/openvino/element_type.hpp>
#include <troupe/openvino/layout.hpp>
#include <troupe/openvino/shape.hpp>

namespace ov {

/// Runtime info: troupe keeps text values ("affinity" -> "CPU"). `rt["affinity"] = "CPU"` writes
/// the op's entry, `rt["affinity"].as<std::string>()` or `rt.at("affinity")` reads one.
class RTMap {
public:
  class Value {
  public:
    explicit Value(std::string& text) : text_(&text) {}
    Value& operator=(const Any& v) {
      *text_ = v.as_string();
      return *this;
    }
    template <class T> T as() const { return Any(*text_).as<T>(); }
    template <class T> bool is() const { return Any(*text_).is<T>(); }
    operator Any() const { return Any(*text_); }

  private:
    std::string* text_;
  };
  using map_type = std::map<std::string, std::string>;

  explicit RTMap(map_type& own) : own_(&own) {}
  explicit RTMap(troupe::Node node) : node_(std::move(node)) {}
  Value operator[](const std::string& key) { return Value(map()[key]); }
  Any at(const std::string& key) const {
    auto it = map().find(key);
    OPENVINO_ASSERT(it != map().end(), "no runtime info '", key, "'");
    return Any(it->second);
  }
  std::size_t count(const std::string& key) const { return map().count(key); }
  std::size_t erase(const std::string& key) { return map().erase(key); }
  std::size_t size() const { return map().size(); }
  bool empty() const { return map().empty(); }
  map_type::iterator find(const std::string& key) { return map().find(key); }
  map_type::iterator begin() { return map().begin(); }
  map_type::iterator end() { return map().end(); }

private:
  // A node's map is looked up at each use: building preprocessing replaces the model's graph.
  map_type& map() const { return node_ ? node_->get_rt_info() : *own_; }
  map_type* own_ = nullptr;
  mutable std::optional<troupe::Node> node_;
};

class Node {
public:
  explicit Node(troupe::Node n) : node_(n), rt_(std::move(n)) {}
  std::string get_friendly_name() const { return node_.get_friendly_name(); }
  std::string get_type_name() const { return node_.get_type_name(); }
  RTMap& get_rt_info() { return rt_; }
  const RTMap& get_rt_info() const { return rt_; }

private:
  troupe::Node node_;
  RTMap rt_;
};

template <class NodeType> class Output;

/// A model input or output: its name, type and shape, and where it is (input or output #i).
template <> class Output<const Node> {
public:
  Output() = default;
  TROUPE_API Output(const troupe::Port& p, bool is_output);
  const std::string& get_any_name() const { return name_; }
  std::unordered_set<std::string> get_names() const { return {name_}; }
  element::Type get_element_type() const { return type_; }
  const PartialShape& get_partial_shape() const { return shape_; }
  Shape get_shape() const { return shape_.to_shape(); }
  std::size_t get_index() const { return index_; }
  /// troupe's own: whether this is a model output (else an input).
  bool is_output() const { return is_output_; }
  /// troupe's own: the layout the model declares for it (ov::layout::get_layout reads it).
  const Layout& declared_layout() const { return layout_; }
  bool operator==(const Output& o) const { return is_output_ == o.is_output_ && index_ == o.index_ && name_ == o.name_; }
  bool operator<(const Output& o) const {
    if (is_output_ != o.is_output_) return !is_output_;
    return index_ < o.index_;
  }

private:
  std::string name_;
  element::Type type_;
  PartialShape shape_;
  std::size_t index_ = 0;
  bool is_output_ = false;
  Layout layout_;
};

template <> class Output<Node> : public Output<const Node> {
public:
  using Output<const Node>::Output;
};

namespace layout {
/// The layout the model declares for a port (OpenVINO IR's rt_info "layout"); empty when none.
inline Layout get_layout(const Output<const Node>& port) { return port.declared_layout(); }
} // namespace layout

class Model : public std::enable_shared_from_this<Model> {
public:
  explicit Model(troupe::Model model) : model_(std::move(model)) {}
  // Members marked `template <class = void>` are ordinary calls; the template only defers
  // compiling their bodies to the programs that call them (troupe/openvino.hpp stays quick to
  // include).
  Model(const Model&) = delete; ///< shared through std::shared_ptr<ov::Model>, as OpenVINO's
  Model& operator=(const Model&) = delete;

  template <class = void> std::vector<Output<Node>> inputs() { return ports<Node>(model_.inputs(), false); }
  template <class = void> std::vector<Output<Node>> outputs() { return ports<Node>(model_.outputs(), true); }
  template <class = void> std::vector<Output<const Node>> inputs() const { return ports<const Node>(model_.inputs(), false); }
  template <class = void> std::vector<Output<const Node>> outputs() const { return ports<const Node>(model_.outputs(), true); }
  Output<Node> input() { return {only(model_.inputs(), "input"), false}; }
  Output<Node> input(std::size_t i) { return {model_.input(i), false}; }
  Output<Node> input(const std::string& name) { return {model_.input(name), false}; }
  Output<Node> output() { return {only(model_.outputs(), "output"), true}; }
  Output<Node> output(std::size_t i) { return {model_.output(i), true}; }
  Output<Node> output(const std::string& name) { return {model_.output(name), true}; }
  Output<const Node> input() const { return {only(model_.inputs(), "input"), false}; }
  Output<const Node> input(std::size_t i) const { return {model_.input(i), false}; }
  Output<const Node> input(const std::string& name) const { return {model_.input(name), false}; }
  Output<const Node> output() const { return {only(model_.outputs(), "output"), true}; }
  Output<const Node> output(std::size_t i) const { return {model_.output(i), true}; }
  Output<const Node> output(const std::string& name) const { return {model_.output(name), true}; }
  std::size_t get_output_size() const { return model_.outputs().size(); }

  /// Every op, in the model's order.
  template <class = void> std::vector<std::shared_ptr<Node>> get_ops() const {
    std::vector<std::shared_ptr<Node>> r;
    for (auto& n : model_.get_ops()) r.push_back(std::make_shared<Node>(n));
    return r;
  }
  template <class = void> std::vector<std::shared_ptr<Node>> get_ordered_ops() const { return get_ops(); }
  std::string get_friendly_name() const { return model_.get_friendly_name(); }
  /// The model's own runtime info: kept here for the application; troupe reads the ops' only.
  RTMap& get_rt_info() { return rt_; }

  template <class = void> void reshape(const PartialShape& shape) { model_.reshape(troupe::PartialShape(shape)); }
  template <class = void> void reshape(const std::map<std::string, PartialShape>& shapes) {
    std::map<std::string, troupe::PartialShape> by_name;
    for (const auto& [name, s] : shapes) by_name[name] = s;
    model_.reshape(by_name);
  }
  template <class = void> void reshape(const std::map<std::size_t, PartialShape>& shapes) {
    std::map<std::string, troupe::PartialShape> by_name;
    for (const auto& [i, s] : shapes) by_name[model_.input(i).get_any_name()] = s;
    model_.reshape(by_name);
  }
  template <class = void> void reshape(const std::map<Output<Node>, PartialShape>& shapes) {
    std::map<std::string, troupe::PartialShape> by_name;
    for (const auto& [port, s] : shapes) {
      OPENVINO_ASSERT(!port.is_output(), "reshape: '", port.get_any_name(), "' is an output; reshape takes inputs");
      by_name[port.get_any_name()] = s;
    }
    model_.reshape(by_name);
  }

  /// troupe's handle to the same model.
  const troupe::Model& troupe_model() const { return model_; }

private:
  template <class N> static std::vector<Output<N>> ports(const std::vector<troupe::Port>& ps, bool out) {
    std::vector<Output<N>> r;
    for (const auto& p : ps) r.emplace_back(p, out);
    return r;
  }
  static troupe::Port only(const std::vector<troupe::Port>& ps, const char* what) {
    OPENVINO_ASSERT(ps.size() == 1, what, "() without an index or name needs a model with one ", what, "; this one has ",
                    ps.size());
    return ps[0];
  }

  troupe::Model model_;
  RTMap::map_type rt_map_;
  RTMap rt_{rt_map_};
};

} // namespace ov
