#pragma once
/// ov::Core over troupe::Core, and ov::Version: troupe's version, labelled as troupe.
#include <istream>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include <troupe/core.hpp>
#include <troupe/export.hpp>
#include <troupe/version.hpp>
#include <troupe/openvino/any.hpp>
#include <troupe/openvino/compiled_model.hpp>
#include <troupe/openvino/model.hpp>
#include <troupe/openvino/properties.hpp>
#include <troupe/openvino/tensor.hpp>

namespace ov {

/// Not OpenVINO's version: the troupe library's, named as such.
struct Version {
  const char* buildNumber;
  const char* description;
};

inline const Version get_openvino_version() noexcept {
  return {troupe::version(), "troupe runtime (OpenVINO API spellings; this is not OpenVINO)"};
}

inline std::ostream& operator<<(std::ostream& os, const Version& v) {
  return os << v.description << "\n    Version : " << v.buildNumber;
}

inline std::ostream& operator<<(std::ostream& os, const std::map<std::string, Version>& versions) {
  for (const auto& [device, v] : versions) os << device << "\n" << v << "\n";
  return os;
}

using SupportedOpsMap = std::map<std::string, std::string>;

class Core {
public:
  /// OpenVINO's plugins.xml has no counterpart: a configuration file is an error.
  TROUPE_API explicit Core(const std::string& xml_config_file = {});

  std::vector<std::string> get_available_devices() const { return core_->available_devices(); }
  /// Every device's entry carries troupe's version; an unknown device is an error naming it.
  template <class = void> std::map<std::string, Version> get_versions(const std::string& device_name) const {
    (void)core_->get_property(device_name, "FULL_DEVICE_NAME");
    return {{device_name, {troupe::version(), "troupe device (not an OpenVINO plugin)"}}};
  }

  /// ONNX; `bin_path` is unused for ONNX, as in OpenVINO (IR: see troupe::Core::read_model).
  TROUPE_API std::shared_ptr<Model> read_model(const std::string& model_path, const std::string& bin_path = {},
                                               const AnyMap& properties = {}) const;
  /// A model from memory: IR text with its weights, or ONNX bytes (with an empty weights tensor).
  std::shared_ptr<Model> read_model(const std::string& model, const Tensor& weights) const {
    return std::make_shared<Model>(core_->read_model(model, weights));
  }

  TROUPE_API CompiledModel compile_model(const std::shared_ptr<const Model>& model, const std::string& device_name,
                                         const AnyMap& properties = {});
  template <class... Props>
    requires detail::string_any_pairs<Props...>
  CompiledModel compile_model(const std::shared_ptr<const Model>& model, const std::string& device_name,
                              Props&&... props) {
    return compile_model(model, device_name, AnyMap{std::forward<Props>(props)...});
  }
  /// Without a device: AUTO, as OpenVINO.
  CompiledModel compile_model(const std::shared_ptr<const Model>& model, const AnyMap& properties = {}) {
    return compile_model(model, "AUTO", properties);
  }
  TROUPE_API CompiledModel compile_model(const std::string& model_path, const std::string& device_name,
                                         const AnyMap& properties = {});
  CompiledModel compile_model(const char* model_path, const std::string& device_name, const AnyMap& properties = {}) {
    return compile_model(std::string(model_path), device_name, properties);
  }
  template <class... Props>
    requires detail::string_any_pairs<Props...>
  CompiledModel compile_model(const std::string& model_path, const std::string& device_name, Props&&... props) {
    return compile_model(model_path, device_name, AnyMap{std::forward<Props>(props)...});
  }
  CompiledModel import_model(std::istream& stream, const std::string& device_name, const AnyMap& properties = {}) {
    return CompiledModel(core_->import_model(stream, device_name, detail::to_troupe(properties)));
  }

  template <class = void> SupportedOpsMap query_model(const std::shared_ptr<const Model>& model, const std::string& device_name,
                              const AnyMap& properties = {}) const {
    return core_->query_model(checked(model)->troupe_model(), device_name, detail::to_troupe(properties));
  }

  /// Core properties (only ov::cache_dir in troupe).
  void set_property(const AnyMap& properties) { core_->set_property(detail::to_troupe(properties)); }
  void set_property(const std::string& device_name, const AnyMap& properties) {
    core_->set_property(device_name, detail::to_troupe(properties));
  }
  template <class... Props>
    requires detail::string_any_pairs<Props...>
  void set_property(Props&&... props) {
    set_property(AnyMap{std::forward<Props>(props)...});
  }
  template <class... Props>
    requires detail::string_any_pairs<Props...>
  void set_property(const std::string& device_name, Props&&... props) {
    set_property(device_name, AnyMap{std::forward<Props>(props)...});
  }

  Any get_property(const std::string& device_name, const std::string& name) const {
    return core_->get_property(device_name, name);
  }
  /// Typed: core.get_property("CPU", ov::device::full_name) is a std::string;
  /// ov::supported_properties gives PropertyNames that know whether they are writable.
  template <class T, PropertyMutability M> T get_property(const std::string& device_name, const Property<T, M>& p) const {
    if constexpr (std::is_same_v<T, std::vector<PropertyName>>) {
      const auto writable = core_->writable_property_names(device_name);
      std::vector<PropertyName> r;
      for (const auto& name : get_property(device_name, p.name()).template as<std::vector<std::string>>()) {
        bool rw = false;
        for (const auto& w : writable) rw = rw || w == name;
        r.emplace_back(name, rw ? PropertyMutability::RW : PropertyMutability::RO);
      }
      return r;
    } else {
      return get_property(device_name, p.name()).template as<T>();
    }
  }

  /// troupe's Core underneath (shared by copies of this one).
  troupe::Core& troupe_core() const { return *core_; }

private:
  static const std::shared_ptr<const Model>& checked(const std::shared_ptr<const Model>& m) {
    OPENVINO_ASSERT(m != nullptr, "the model is a null std::shared_ptr<ov::Model>");
    return m;
  }
  std::shared_ptr<troupe::Core> core_;
};

/// Writes the model as OpenVINO IR v11 (.xml + .bin beside it; troupe::save_model). Unlike
/// OpenVINO, `compress_to_fp16` changes nothing: the weights keep their element type.
inline void save_model(const std::shared_ptr<const Model>& model, const std::string& output_model,
                       bool compress_to_fp16 = true) {
  (void)compress_to_fp16;
  troupe::save_model(model->troupe_model(), output_model);
}

/// ov::serialize: IR v11 at `xml_path`, weights at `bin_path` (empty: beside the .xml).
inline void serialize(const std::shared_ptr<const Model>& model, const std::string& xml_path,
                      const std::string& bin_path = "") {
  troupe::save_model(model->troupe_model(), xml_path, bin_path);
}

} // namespace ov
