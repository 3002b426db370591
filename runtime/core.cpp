#include <troupe/core.hpp>
#include <troupe/exception.hpp>
#include <troupe/version.hpp>

#include <algorithm>
#include <cctype>
#include <istream>
#include <mutex>
#include <set>

#include "actors/subgraph_actor.hpp"
#include "graph/byte_io.hpp"
#include "graph/ir_xml.hpp"
#include "graph/onnx_reader.hpp"
#include "graph/passes.hpp"
#include "graph/wire.hpp"
#include "graph/shape_inference.hpp"
#include "runtime/compile_pipeline.hpp"
#include "runtime/compiled_blob.hpp"
#include "runtime/cache_files.hpp"
#include "runtime/core_impl.hpp"
#include "runtime/nodes.hpp"
#include "runtime/multi.hpp"

namespace troupe {

Core::Core() : impl_(std::make_unique<Impl>()) { add_nodes_from_environment(*this); }
Core::Core(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Core::~Core() = default;

std::vector<std::string> Core::available_devices() const { return impl_->listed(); }

Model Core::read_model(const std::string& path) const {
  if (graph::is_ir_path(path)) return read_model(path, "");
  auto impl = std::make_shared<Model::Impl>();
  impl->graph = graph::read_onnx_file(path);
  graph::infer_shapes(impl->graph);
  graph::upgrade_legacy_prelu(impl->graph);
  auto slash = path.find_last_of('/');
  impl->name = slash == std::string::npos ? path : path.substr(slash + 1);
  return Model(impl);
}

/// The file name without its folder and extension: an IR's friendly name.
static std::string stem_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return graph::is_ir_path(name) ? name.substr(0, name.size() - 4) : name;
}

Model Core::read_model(const std::string& model_path, const std::string& weights_path) const {
  // As OpenVINO: an ONNX file holds its weights, so the weights path is not read for it.
  if (!graph::is_ir_path(model_path)) return read_model(model_path);
  auto impl = std::make_shared<Model::Impl>();
  impl->graph = graph::read_ir_file(model_path, weights_path);
  impl->name = stem_of(model_path);
  return Model(impl);
}

Model Core::read_ir_from_memory(const std::string& xml_text, const void* weights, std::size_t size,
                                const std::string& name) const {
  auto impl = std::make_shared<Model::Impl>();
  impl->graph = graph::read_ir_memory(xml_text, weights, size, name);
  impl->name = stem_of(name);
  return Model(impl);
}

void save_model(const Model& model, const std::string& xml_path, const std::string& bin_path) {
  graph::write_ir_file(model.impl()->graph, model.get_friendly_name(), xml_path, bin_path);
}

Model Core::read_model_from_memory(const void* data, std::size_t size, const std::string& name) const {
  auto impl = std::make_shared<Model::Impl>();
  impl->graph = graph::read_onnx_bytes(data, size, name);
  graph::infer_shapes(impl->graph);
  graph::upgrade_legacy_prelu(impl->graph);
  impl->name = name;
  return Model(impl);
}

Model Core::read_model(const std::string& model, const Tensor& weights) const {
  const auto first = model.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (first != std::string::npos && model[first] == '<') // IR text; its .bin bytes in `weights`
    return read_ir_from_memory(model, weights.empty() ? nullptr : weights.data(), weights.empty() ? 0 : weights.get_byte_size());
  if (!weights.empty() && weights.get_byte_size() > 0)
    throw Exception("read_model(model, weights): the model is ONNX, which holds its own weights; pass an empty "
                    "weights tensor (got " + std::to_string(weights.get_byte_size()) + " bytes)");
  return read_model_from_memory(model.data(), model.size());
}

CompiledModel Core::compile_model(const std::string& path, const std::string& device, const AnyMap& properties) {
  return compile_model(read_model(path), device, properties);
}

static bool is_hetero(const std::string& device) { return device == "HETERO" || device.rfind("HETERO:", 0) == 0; }

CompiledModel Core::compile_model(const Model& model, const std::string& device, const AnyMap& properties) {
  engine::thread_release done{*impl_->eng}; // compiling spawns actors from this thread
  if (is_hetero(device)) {
    auto members = impl_->hetero_members(device, properties);
    auto cm = std::make_shared<CompiledModel::Impl>();
    cm->eng = impl_->eng;
    const graph::Graph& src = model.impl()->graph;
    cm->inputs = graph_inputs(src);
    cm->outputs = graph_outputs(src);
    cm->config = members.front().config;
    std::string list;
    for (const auto& m : members) list += (list.empty() ? "" : ",") + m.name;
    cm->device = "HETERO:" + list;
    compile_hetero(*cm, src, impl_->plan_and_draw(model, members, properties), members, *impl_->eng->system);
    return CompiledModel(cm);
  }
  if (is_multi_or_auto(device)) return compile_multi(*impl_, model, device, properties);
  return CompiledModel(impl_->compile_single(model, device, properties));
}

std::shared_ptr<CompiledModel::Impl> Core::Impl::compile_single(const Model& model, const std::string& device,
                                                               const AnyMap& properties) {
  return compile_single_graph(model.impl()->graph, model.get_friendly_name(), device, properties, false);
}

std::shared_ptr<CompiledModel::Impl> Core::Impl::compile_single_graph(const graph::Graph& src,
                                                                     const std::string& model_name,
                                                                     const std::string& device,
                                                                     const AnyMap& properties, bool optimized) {
  auto [name, entry] = find(device);
  const AnyMap merged = with_call(device, entry, properties);
  auto cm = std::make_shared<CompiledModel::Impl>();
  cm->eng = eng;
  cm->device = name;
  cm->config = resolve_config(merged, *entry.dev);
  cm->inputs = graph_inputs(src);
  cm->outputs = graph_outputs(src);

  actors::subgraph_spec spec;
  spec.streams = static_cast<std::size_t>(cm->config.streams);
  spec.cache_capacity = cm->config.runtime_cache_capacity;
  spec.stats = cm->stats;
  spec.pool = pool_for(name);
  bool all_static = true;
  for (const auto& p : cm->inputs) all_static = all_static && p.get_partial_shape().is_static();
  auto dev = Impl::as_configured(name, entry, cm->config);
  auto cfg = cm->config.compile;
  // Every compile of this model (one per new shape or value when dynamic) shares what the
  // device derives from the weights, and the blocks the caller's outputs come back in.
  cfg.derived = std::make_shared<kernels::derived_constants>();
  cfg.output_blocks = std::make_shared<kernels::output_pool>(0);
  if (all_static) {
    // What export_model writes: the optimized graph and what it is for. CACHE_DIR keeps no
    // such file: troupe's graph passes take under a millisecond where reading the weights back
    // took tens (docs/cache.md); what a cache can shorten is the device's own (the GPU's
    // pipeline cache, in cfg.cache_dir).
    auto blob = std::make_shared<compiled_blob>();
    blob->troupe_version = version();
    blob->device = name;
    const auto info = entry.dev->info();
    blob->device_name = info.count("FULL_DEVICE_NAME") ? info.at("FULL_DEVICE_NAME") : name;
    blob->settings = compile_settings(cfg);
    blob->model_name = model_name;
    blob->graph = src;
    if (!optimized) optimize_graph(blob->graph);
    auto deferred = optimized ? value_deferral{} : defer_on_values(blob->graph, *dev);
    check_support(blob->graph, *dev, deferred);
    if (!deferred.inputs.empty()) {
      // Shapes wait on input values the device needs settled: one program per distinct set of
      // those values, on first use (not exportable: no one graph runs them all).
      auto g = std::make_shared<const graph::Graph>(src);
      spec.value_keys = deferred.inputs;
      cm->value_keyed = true;
      spec.compile = [g, dev, cfg, deferred](const std::vector<Tensor>& inputs) {
        return actors::make_program(compile_for_values(*g, deferred, inputs, *dev, cfg), cfg.profiling);
      };
    } else {
      auto prog = actors::make_program(dev->compile(blob->graph, cfg), cfg.profiling);
      cm->loaded_from_cache = prog->prototype->loaded_from_cache();
      cm->exportable = std::move(blob);
      spec.fixed = std::move(prog);
    }
  } else {
    // Dynamic inputs: one program per distinct set of concrete input shapes, on first use.
    // What does not depend on them (weights transposed, constant subgraphs) folds once here,
    // not again for every new shape.
    auto folded = src;
    fold_constants(folded);
    auto g = std::make_shared<const graph::Graph>(std::move(folded));
    spec.compile = [g, dev, cfg](const std::vector<Tensor>& inputs) {
      std::vector<Shape> shapes;
      for (const auto& t : inputs) shapes.push_back(t.get_shape());
      return actors::make_program(compile_graph(with_input_shapes(*g, shapes), *dev, cfg), cfg.profiling);
    };
  }
  cm->runner = std::make_unique<actors::subgraph>(*eng->system, std::move(spec));
  return cm;
}

CompiledModel Core::import_model(std::istream& stream, const std::string& device, const AnyMap& properties) {
  engine::thread_release done{*impl_->eng};
  const std::string bytes = graph::read_all(stream);
  if (stream.bad()) throw Exception("import_model: reading the stream failed");
  auto blob = decode_blob(bytes, "import_model");
  if (blob.troupe_version != version())
    throw Exception("import_model: the model was exported by troupe " + blob.troupe_version + ", this is troupe " +
                    version() + "; export it again with this version");
  if (is_hetero(device) || is_multi_or_auto(device))
    throw Exception("import_model: device '" + device + "': an exported model is for one device (it was exported from " +
                    blob.device + ")");
  const auto name = impl_->find(device).name;
  if (name != blob.device)
    throw Exception("import_model: the model was exported from " + blob.device + ", not " + name +
                    "; import it on " + blob.device + " or compile the model for " + name);
  return CompiledModel(impl_->compile_single_graph(blob.graph, blob.model_name, device, properties, true));
}

/// Per op of the model (friendly name): the device it runs on (absent when none can) and why.
/// query_model, query_model_unsupported and query_placement all answer from this.
void query_ops(Core::Impl& impl, const Model& model, const std::string& device, const AnyMap& properties,
                      std::map<std::string, std::string>& placed, std::map<std::string, std::string>& why) {
  const graph::Graph& src = model.impl()->graph;
  if (is_hetero(device)) {
    // Every op is placed somewhere, or placing throws naming the op no device can run.
    auto members = impl.hetero_members(device, properties);
    const auto plan = impl.plan_and_draw(model, members, properties);
    placed = hetero_query(src, plan);
    for (const auto& op : src.ops) {
      auto it = plan.why.find(op.name);
      why[op.name] = it != plan.why.end() ? it->second : "folded into a constant while compiling";
    }
    return;
  }
  auto [name, entry] = impl.find(device);
  const auto cfg = resolve_config(impl.with_call(device, entry, properties), *entry.dev);
  const auto dev = Core::Impl::as_configured(name, entry, cfg);
  graph::Graph g = src;
  bool all_static = true;
  for (auto id : g.inputs) all_static = all_static && g.value(id).shape.is_static();
  if (all_static) optimize_graph(g);
  // Each op as the device's own query answers it: what compile_model would accept.
  const auto deferred = all_static ? defer_on_values(g, *dev) : value_deferral{};
  for (const auto& op : g.ops) {
    if (deferred.takes(op.name)) {
      placed[op.name] = device;
      why[op.name] = deferred.reason();
      continue;
    }
    auto answer = dev->query(g, op);
    if (answer.supported) {
      placed[op.name] = device;
      why[op.name] = "supported by " + name;
    } else {
      why[op.name] = answer.reason;
    }
  }
  // Ops folded into constants or fused into another op run as part of the compiled model.
  for (const auto& op : src.ops)
    if (!why.count(op.name)) {
      placed[op.name] = device;
      why[op.name] = "folded or fused into another op while compiling";
    }
}

std::map<std::string, std::string> Core::query_model(const Model& model, const std::string& device,
                                                     const AnyMap& properties) const {
  std::map<std::string, std::string> placed, why;
  query_ops(*impl_, model, device, properties, placed, why);
  return placed;
}

std::map<std::string, std::string> Core::query_model_unsupported(const Model& model, const std::string& device,
                                                                 const AnyMap& properties) const {
  std::map<std::string, std::string> placed, why, r;
  query_ops(*impl_, model, device, properties, placed, why);
  for (const auto& [op, reason] : why)
    if (!placed.count(op)) r[op] = reason;
  return r;
}

std::map<std::string, OpPlacement> Core::query_placement(const Model& model, const std::string& device,
                                                         const AnyMap& properties) const {
  std::map<std::string, std::string> placed, why;
  query_ops(*impl_, model, device, properties, placed, why);
  std::map<std::string, OpPlacement> r;
  for (const auto& [op, reason] : why) r[op] = {placed.count(op) ? placed[op] : std::string(), reason};
  return r;
}

void Core::set_property(const std::string& device, const AnyMap& properties) {
  if (is_multi_or_auto(device)) {
    // MULTI's / AUTO's defaults; with a list they are checked against its devices now.
    const auto kind = parse_device_string(device).virtual_device;
    AnyMap next = impl_->virtual_props(kind, properties);
    if (device != kind || next.count("DEVICE_PRIORITIES")) impl_->route(device, next, multi_own_keys(), true);
    std::lock_guard lock(impl_->mutex);
    impl_->virtual_defaults[kind] = std::move(next);
    return;
  }
  if (is_hetero(device)) {
    // HETERO's defaults; with "HETERO:A,B" they are checked against A and B now.
    AnyMap next = impl_->hetero_props(properties);
    hetero_placement_of(next); // its value, before it is kept
    if (device != "HETERO") impl_->hetero_members(device, next);
    else if (next.count("DEVICE_PRIORITIES")) impl_->hetero_members("HETERO", next);
    std::lock_guard lock(impl_->mutex);
    impl_->virtual_defaults["HETERO"] = std::move(next);
    return;
  }
  auto [name, entry] = impl_->find(device);
  for (const auto& [k, v] : properties) validate_property(device, *entry.dev, k, v);
  std::lock_guard lock(impl_->mutex);
  for (const auto& [k, v] : properties) entry.defaults[k] = v;
}

void Core::set_property(const AnyMap& properties) {
  for (const auto& [k, v] : properties) {
    if (k != "CACHE_DIR")
      throw Exception("'" + k + "' is not a property of the Core itself (only CACHE_DIR is); set it on a device: "
                      "core.set_property(\"CPU\", {{\"" + k + "\", ...}})");
    check_cache_dir(v.as_string(), "the Core's property CACHE_DIR");
  }
  std::lock_guard lock(impl_->mutex);
  for (const auto& [k, v] : properties) impl_->core_properties[k] = v;
}

/// The writable properties every device of a virtual device's list has ("GPU": GPU.0's).
static std::vector<std::string> shared_writable(Core::Impl& impl, const device_string& ds) {
  std::vector<std::string> shared;
  for (std::size_t i = 0; i < ds.devices.size(); ++i) {
    const auto& w = writable_properties(*impl.find(ds.devices[i].name).entry.dev);
    if (i == 0) shared = w;
    else std::erase_if(shared, [&](const std::string& p) { return std::find(w.begin(), w.end(), p) == w.end(); });
  }
  return shared;
}

std::vector<std::string> Core::writable_property_names(const std::string& device) const {
  auto all = get_property(device, "SUPPORTED_PROPERTIES").as<std::vector<std::string>>();
  if (is_multi_or_auto(device) || is_hetero(device)) {
    // A virtual device's own facts are its name and its list; the rest it takes (and hands on).
    std::erase_if(all, [](const std::string& p) { return p == "FULL_DEVICE_NAME" || p == "SUPPORTED_PROPERTIES"; });
    return all;
  }
  return writable_properties(*impl_->find(device).entry.dev);
}

Any Core::get_property(const std::string& device, const std::string& name) const {
  if (is_multi_or_auto(device)) {
    const auto kind = parse_device_string(device).virtual_device;
    std::vector<std::string> own{"FULL_DEVICE_NAME", "SUPPORTED_PROPERTIES", "DEVICE_PRIORITIES", "DEVICE_PROPERTIES"};
    own.insert(own.end(), multi_own_keys().begin(), multi_own_keys().end());
    if (name == "FULL_DEVICE_NAME") return Any(kind);
    if (name == "SUPPORTED_PROPERTIES") {
      // With a list: also what every listed device has (MULTI hands those to each).
      auto all = own;
      for (const auto& p : shared_writable(*impl_, parse_device_string(device)))
        if (std::find(all.begin(), all.end(), p) == all.end()) all.push_back(p);
      return Any(all);
    }
    if (std::find(own.begin(), own.end(), name) != own.end()) {
      std::lock_guard lock(impl_->mutex);
      const auto& defaults = impl_->virtual_defaults[kind];
      auto it = defaults.find(name);
      return it == defaults.end() ? Any(std::string()) : it->second;
    }
    throw Exception("device " + device + " has no property '" + name + "'; its properties: " + joined(own));
  }
  if (is_hetero(device)) {
    std::vector<std::string> own{"FULL_DEVICE_NAME", "SUPPORTED_PROPERTIES", "DEVICE_PRIORITIES", "DEVICE_PROPERTIES",
                                 "HETERO_DUMP_GRAPH_DOT", "HETERO_PLACEMENT"};
    const auto ds = parse_device_string(device);
    if (name == "FULL_DEVICE_NAME") return Any(std::string("HETERO"));
    if (name == "DEVICE_PRIORITIES" && !ds.devices.empty()) {
      std::vector<std::string> list;
      for (const auto& d : ds.devices) list.push_back(impl_->find(d.name).name);
      return Any(list);
    }
    if (name == "SUPPORTED_PROPERTIES") {
      // With a list: also what every listed device has (HETERO hands those to each).
      const auto shared = shared_writable(*impl_, ds);
      own.insert(own.end(), shared.begin(), shared.end());
      return Any(own);
    }
    if (name == "DEVICE_PRIORITIES" || name == "DEVICE_PROPERTIES" || name == "HETERO_DUMP_GRAPH_DOT" ||
        name == "HETERO_PLACEMENT") {
      std::lock_guard lock(impl_->mutex);
      const auto& defaults = impl_->virtual_defaults["HETERO"];
      auto it = defaults.find(name);
      if (it == defaults.end() && name == "HETERO_PLACEMENT") return Any(std::string("PRIORITY"));
      return it == defaults.end() ? Any(std::string()) : it->second;
    }
    std::string list;
    for (const auto& p : own) list += (list.empty() ? "" : ", ") + p;
    throw Exception("device " + device + " has no property '" + name + "'; its properties: " + list);
  }
  auto [canonical, entry] = impl_->find(device);
  const auto& dev = *entry.dev;
  auto info = dev.info();
  const auto& writable = writable_properties(dev);
  if (name == "AVAILABLE_DEVICES") return Any(std::vector<std::string>{canonical});
  if (name == "FULL_DEVICE_NAME") return Any(info.count(name) ? info[name] : canonical);
  if (name == "OPTIMIZATION_CAPABILITIES") return Any(info.count(name) ? info[name] : std::string("FP32"));
  if (name == "SUPPORTED_PROPERTIES") {
    std::vector<std::string> all = readonly_properties(dev);
    all.insert(all.end(), writable.begin(), writable.end());
    return Any(all);
  }
  if (auto it = info.find(name); it != info.end()) return Any(it->second);
  if (std::find(writable.begin(), writable.end(), name) != writable.end()) {
    std::lock_guard lock(impl_->mutex);
    if (auto it = entry.defaults.find(name); it != entry.defaults.end()) return it->second;
    if (auto it = impl_->core_properties.find(name); it != impl_->core_properties.end()) return it->second;
    if (name == "GPU_F16_ARITHMETIC") return Any(default_f16_arithmetic(dev));
    if (const auto* row = find_property(kind_of(dev), name); row && !row->computed_default)
      return Any(row->default_value);
  }
  std::vector<std::string> all = readonly_properties(dev);
  all.insert(all.end(), writable.begin(), writable.end());
  std::string list;
  for (const auto& p : all) list += (list.empty() ? "" : ", ") + p;
  throw Exception("device " + device + " has no property '" + name + "'; its properties: " + list);
}

} // namespace troupe
