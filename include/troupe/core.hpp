#pragma once
#include <troupe/export.hpp>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <troupe/any.hpp>
#include <troupe/compiled_model.hpp>
#include <troupe/model.hpp>

namespace troupe {

/// The entry point (as ov::Core): devices, models, properties.
/// One op's answer from Core::query_placement.
struct OpPlacement {
  std::string device; ///< empty when no device of the request can run the op
  std::string why;
};

class TROUPE_API Core {
public:
  Core();
  ~Core();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  /// "CPU", then "GPU.0", "GPU.1", ... where present.
  std::vector<std::string> available_devices() const;
  /// An ONNX model, or an OpenVINO IR (a path ending in .xml; its weights from the .bin beside it).
  Model read_model(const std::string& path) const;
  /// OpenVINO's read_model(model_path, bin_path): an OpenVINO IR (v10, v11) with its weights from
  /// `weights_path` (empty: the .bin beside it). An ONNX file holds its weights, so
  /// `weights_path` is not read for it (as in OpenVINO).
  Model read_model(const std::string& model_path, const std::string& weights_path) const;
  /// An OpenVINO IR from memory: its .xml text and its .bin bytes (`weights` may be null when
  /// the IR has no constants); `name` is its friendly name and names it in errors.
  Model read_ir_from_memory(const std::string& xml_text, const void* weights, std::size_t size,
                            const std::string& name = "model.xml") const;
  /// An ONNX model from memory (its serialized bytes, weights inside, as a file holds them);
  /// `name` is its friendly name and names the bytes in errors. OpenVINO reads memory with
  /// read_model(model_text, weights); ONNX keeps the weights in the model, so troupe needs
  /// only the bytes.
  Model read_model_from_memory(const void* data, std::size_t size, const std::string& name = "model.onnx") const;
  /// OpenVINO's read_model(model, weights) from memory: IR text (it starts with '<') with its
  /// .bin bytes in `weights`, as read_ir_from_memory; or ONNX bytes (`weights` empty: ONNX
  /// holds its weights), as read_model_from_memory.
  Model read_model(const std::string& model, const Tensor& weights) const;
  CompiledModel compile_model(const Model& model, const std::string& device, const AnyMap& properties = {});
  CompiledModel compile_model(const std::string& path, const std::string& device, const AnyMap& properties = {});
  /// A model written by CompiledModel::export_model, compiled for `device` (the device it was
  /// exported from) without the graph passes. A stream that is not an exported model, is
  /// damaged or comes from another troupe version is an error saying which.
  CompiledModel import_model(std::istream& stream, const std::string& device, const AnyMap& properties = {});
  /// Friendly name of each op the device supports -> device name.
  std::map<std::string, std::string> query_model(const Model& model, const std::string& device,
                                                 const AnyMap& properties = {}) const;
  /// Friendly name of each op the device does not support -> why not (an extension of
  /// OpenVINO's API: query_model names only the supported ops).
  std::map<std::string, std::string> query_model_unsupported(const Model& model, const std::string& device,
                                                             const AnyMap& properties = {}) const;
  /// Per op (friendly name): where it would run and why -- for HETERO the placement rule's
  /// answer ("affinity CPU", "GPU.0: <why not>; fallback to CPU"), for one device "supported
  /// by CPU" or, with an empty device, the reason it cannot. troupe's own addition.
  std::map<std::string, OpPlacement> query_placement(const Model& model, const std::string& device,
                                                     const AnyMap& properties = {}) const;
  void set_property(const std::string& device, const AnyMap& properties);
  /// Properties of the Core itself, as OpenVINO's core.set_property(ov::cache_dir(d)): only
  /// CACHE_DIR, the default of every device (a device's own setting wins).
  void set_property(const AnyMap& properties);
  Any get_property(const std::string& device, const std::string& name) const;
  /// The names among the device's SUPPORTED_PROPERTIES that set_property takes; the others are
  /// read-only (OpenVINO's PropertyName::is_mutable()).
  std::vector<std::string> writable_property_names(const std::string& device) const;

  /// Adds the devices of a troupe worker on another machine (`troupe worker --listen`), at
  /// "host:port". They are named DEV@host:port (CPU@10.1.2.3:7000, GPU.0@10.1.2.3:7000) and
  /// work wherever a local device does: compile_model, MULTI, AUTO, HETERO. Options:
  /// NODE_TOKEN (the worker's token), NODE_TIMEOUT_MS (how long to wait for the worker's
  /// answer; 10000), NODE_TLS_CERT, NODE_TLS_KEY and NODE_TLS_CA (PEM files: mutual TLS; the
  /// CA defaults to the certificate; one set of files per Core, docs/remote.md). An
  /// unreachable node, a refused token or certificate, a bad file or a node added twice is an
  /// error naming the node. troupe's own: OpenVINO has no remote devices.
  void add_node(const std::string& address, const AnyMap& options = {});

  struct TROUPE_INTERNAL Impl; ///< hidden: a shared libtroupe exports the public API only
  friend class Worker;

private:
  /// A Core on an engine the library chose (troupe/caf.hpp's make_core: the application's own
  /// actor system); only Impl can make one, so this header stays free of CAF.
  TROUPE_INTERNAL explicit Core(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Writes `model` as OpenVINO IR v11: `xml_path` and its weights at `bin_path` (empty: the
/// .bin beside it), as ov::save_model. An op with no IR equivalent is an error naming it, and
/// nothing is written.
TROUPE_API void save_model(const Model& model, const std::string& xml_path, const std::string& bin_path = "");

} // namespace troupe
