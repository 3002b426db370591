#pragma once
/// ov::CompiledModel over troupe::CompiledModel.
#include <cstddef>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <troupe/compiled_model.hpp>
#include <troupe/openvino/any.hpp>
#include <troupe/openvino/infer_request.hpp>
#include <troupe/openvino/model.hpp>
#include <troupe/openvino/properties.hpp>

namespace ov {

namespace detail {
/// OpenVINO's util::EnableIfAllStringAny: the variadic property packs.
template <class... Props>
concept string_any_pairs = (std::is_convertible_v<Props, std::pair<std::string, Any>> && ...);
} // namespace detail

class CompiledModel {
public:
  CompiledModel() = default;
  explicit CompiledModel(troupe::CompiledModel compiled) : compiled_(std::move(compiled)) {}

  InferRequest create_infer_request() { return {compiled_.create_infer_request(), compiled_}; }
  template <class = void> std::vector<Output<const Node>> inputs() const { return ports(compiled_.inputs(), false); }
  template <class = void> std::vector<Output<const Node>> outputs() const { return ports(compiled_.outputs(), true); }
  Output<const Node> input() const { return {only(compiled_.inputs(), "input"), false}; }
  Output<const Node> input(std::size_t i) const { return {compiled_.input(i), false}; }
  Output<const Node> input(const std::string& name) const { return {named(compiled_.inputs(), name, "input"), false}; }
  Output<const Node> output() const { return {only(compiled_.outputs(), "output"), true}; }
  Output<const Node> output(std::size_t i) const { return {compiled_.output(i), true}; }
  Output<const Node> output(const std::string& name) const {
    return {named(compiled_.outputs(), name, "output"), true};
  }

  Any get_property(const std::string& name) const { return compiled_.get_property(name); }
  template <class T, PropertyMutability M> T get_property(const Property<T, M>& p) const {
    return get_property(p.name()).template as<T>();
  }
  /// Only MULTI's (and AUTO's with CUMULATIVE_THROUGHPUT) ov::device::priorities may change.
  void set_property(const AnyMap& properties) { compiled_.set_property(detail::to_troupe(properties)); }
  template <class... Props>
    requires detail::string_any_pairs<Props...>
  void set_property(Props&&... props) {
    set_property(AnyMap{std::forward<Props>(props)...});
  }
  void export_model(std::ostream& stream) const { compiled_.export_model(stream); }

  bool operator!() const noexcept { return compiled_.impl() == nullptr; }
  explicit operator bool() const noexcept { return compiled_.impl() != nullptr; }

  /// troupe's handle to the same compiled model.
  const troupe::CompiledModel& troupe_compiled_model() const { return compiled_; }

private:
  static std::vector<Output<const Node>> ports(const std::vector<troupe::Port>& ps, bool out) {
    std::vector<Output<const Node>> r;
    for (const auto& p : ps) r.emplace_back(p, out);
    return r;
  }
  static troupe::Port only(const std::vector<troupe::Port>& ps, const char* what) {
    OPENVINO_ASSERT(ps.size() == 1, what, "() without an index or name needs a model with one ", what, "; this one has ",
                    ps.size());
    return ps[0];
  }
  static troupe::Port named(const std::vector<troupe::Port>& ps, const std::string& name, const char* what) {
    std::string all;
    for (const auto& p : ps) {
      if (p.get_any_name() == name) return p;
      if (!all.empty()) all.append(", ");
      all.append("'").append(p.get_any_name()).append("'");
    }
    OPENVINO_THROW("the compiled model has no ", what, " named '", name, "'; its ", what, "s: ", all);
  }

  troupe::CompiledModel compiled_;
};

inline CompiledModel InferRequest::get_compiled_model() { return CompiledModel(compiled_); }

} // namespace ov
