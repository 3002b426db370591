#include <troupe/core.hpp>
#include <troupe/exception.hpp>

#include <algorithm>
#include <mutex>
#include <set>

#include "actors/subgraph_actor.hpp"
#include "graph/onnx_reader.hpp"
#include "graph/shape_inference.hpp"
#include "runtime/compile_pipeline.hpp"
#include "runtime/compiled_model_impl.hpp"
#include "runtime/device_properties.hpp"
#include "runtime/device_string.hpp"
#include "runtime/hetero.hpp"
#include "runtime/limited_device.hpp"
#include "runtime/model_impl.hpp"
#include "runtime/reference_device.hpp"

#if __has_include("kernels/cpu/cpu_device.hpp")
#include "kernels/cpu/cpu_device.hpp"
#define TROUPE_HAVE_CPU 1
#endif
#ifdef TROUPE_HAVE_VULKAN
#include "kernels/vulkan/vulkan_device.hpp"
#endif

namespace troupe {

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string all;
  for (const auto& n : v) all += (all.empty() ? "" : ", ") + n;
  return all;
}

bool names_gpu(const std::string& device) { return device == "GPU" || device.rfind("GPU.", 0) == 0; }

} // namespace

struct Core::Impl {
  struct device_entry {
    std::shared_ptr<kernels::device> dev;
    bool listed = true; ///< in available_devices()
    AnyMap defaults;    ///< set_property values compile_model starts from
  };
  /// A device name resolved to its entry ("GPU" -> "GPU.0").
  struct found {
    std::string name;
    device_entry& entry;
  };
  std::shared_ptr<engine> eng = make_engine();
  std::map<std::string, device_entry> devices;
  AnyMap core_properties; ///< Core::set_property(AnyMap): every device's defaults under its own
  AnyMap hetero_defaults; ///< set_property("HETERO", ...): DEVICE_PRIORITIES and what it routes
  std::map<std::string, std::weak_ptr<actors::device_pool>> pools; ///< per device: see pool_for
  std::vector<std::string> order; ///< CPU, GPU.0, GPU.1, ..., REFERENCE

  /// Vulkan is enumerated on the first use of a GPU name or of the device list, not here:
  /// opening every device loads its shaders, which CPU-only use should not pay for.
  bool gpus_enumerated = false;
  std::string no_gpu_reason; ///< why there is no GPU, once enumerated and none found
  mutable std::mutex mutex;  ///< guards the lazy enumeration and the device table

  Impl() {
#ifdef TROUPE_HAVE_CPU
    add("CPU", kernels::cpu::make_cpu_device(), true);
#endif
    add("REFERENCE", make_reference_device(), false);
  }

  void add(const std::string& name, std::shared_ptr<kernels::device> dev, bool listed) {
    devices[name] = device_entry{std::move(dev), listed, {}};
    // Unlisted devices (REFERENCE) stay last.
    auto at = order.end();
    if (listed)
      at = std::find_if(order.begin(), order.end(), [&](const std::string& n) { return !devices.at(n).listed; });
    order.insert(at, name);
  }

  /// Called with `mutex` held.
  void enumerate_gpus() {
    if (gpus_enumerated) return;
    gpus_enumerated = true;
#ifdef TROUPE_HAVE_VULKAN
    std::vector<std::unique_ptr<kernels::device>> gpus;
    try {
      gpus = kernels::vulkan::make_vulkan_devices();
    } catch (const std::exception& e) {
      // A device that fails to open (e.g. a shader its driver rejects) leaves no GPU at all;
      // the CPU keeps working and compile_model("GPU") says why.
      no_gpu_reason = std::string("a Vulkan device failed to open: ") + e.what();
      return;
    }
    if (gpus.empty()) no_gpu_reason = "no Vulkan device found";
    for (auto& g : gpus) {
      auto name = g->name();
      add(name, std::shared_ptr<kernels::device>(std::move(g)), true);
    }
#else
    no_gpu_reason = "this build of troupe has no Vulkan support";
#endif
  }

  std::vector<std::string> listed() {
    std::lock_guard lock(mutex);
    enumerate_gpus();
    return listed_locked();
  }

  std::vector<std::string> listed_locked() const {
    std::vector<std::string> r;
    for (const auto& n : order)
      if (devices.at(n).listed) r.push_back(n);
    return r;
  }

  /// The device as a compile with `cfg` sees it: without the op types EXCLUDED_OPS removes.
  static std::shared_ptr<kernels::device> as_configured(const std::string& name, const device_entry& entry,
                                                        const resolved_config& cfg) {
    return limit_ops(entry.dev, excluded_ops(name, cfg.excluded_ops_given ? &cfg.excluded_ops : nullptr));
  }

  /// The pool of device workers every subgraph compiled for `device` (canonical name) in this
  /// Core shares. Compiled models keep theirs alive; a later compile after they are all gone
  /// makes a new one.
  std::shared_ptr<actors::device_pool> pool_for(const std::string& device) {
    std::lock_guard lock(mutex);
    auto& weak = pools[device];
    auto pool = weak.lock();
    if (!pool) {
      pool = std::make_shared<actors::device_pool>(*eng->system, device);
      weak = pool;
    }
    return pool;
  }

  /// A device's properties before the call's own: the Core's, then the device's defaults.
  AnyMap defaults_of(const device_entry& entry) {
    std::lock_guard lock(mutex);
    AnyMap merged = core_properties;
    for (const auto& [k, v] : entry.defaults) merged[k] = v;
    return merged;
  }

  /// The properties a compile of `device` with `call` uses: its defaults, then the call's own,
  /// each checked against the device.
  AnyMap with_call(const std::string& device, const device_entry& entry, const AnyMap& call) {
    AnyMap merged = defaults_of(entry);
    for (const auto& [k, v] : call) {
      validate_property(device, *entry.dev, k, v);
      merged[k] = v;
    }
    return merged;
  }

  /// HETERO's placement of `model` over `members`, drawn as .dot files when asked
  /// (HETERO_DUMP_GRAPH_DOT / TROUPE_HETERO_VISUALIZE).
  hetero_plan plan_and_draw(const Model& model, const std::vector<hetero_member>& members, const AnyMap& call) {
    auto plan = plan_hetero(model.impl()->graph, members);
    if (auto folder = hetero_dot_folder(hetero_props(call)); !folder.empty())
      write_hetero_dots(plan, model.impl()->name, folder);
    return plan;
  }

  /// HETERO's own defaults with the call's properties over them.
  AnyMap hetero_props(const AnyMap& call) {
    AnyMap props;
    {
      std::lock_guard lock(mutex);
      props = hetero_defaults;
    }
    for (const auto& [k, v] : call) props[k] = v;
    return props;
  }

  /// HETERO's devices, resolved, each with its properties: its defaults, then every property
  /// of the call that is not HETERO's own (a device lacking one is an error naming both), then
  /// its own entry of DEVICE_PROPERTIES (or of a key named for it).
  std::vector<hetero_member> hetero_members(const std::string& device, const AnyMap& call) {
    const auto ds = parse_device_string(device);
    const AnyMap props = hetero_props(call);
    std::vector<listed_device> list = ds.devices;
    if (list.empty()) {
      auto it = props.find("DEVICE_PRIORITIES");
      if (it == props.end())
        throw Exception("device '" + device + "': no devices: write HETERO:GPU,CPU or set DEVICE_PRIORITIES");
      list = parse_priorities("device '" + device + "'", it->second.as_string());
    }
    std::map<std::string, AnyMap> per_device;
    if (auto it = props.find("DEVICE_PROPERTIES"); it != props.end())
      per_device = parse_device_properties("property DEVICE_PROPERTIES of " + device, it->second.as_string());
    // Resolve first: a key of the call that names a listed device is that device's own map.
    struct resolved {
      std::string written, name;
      device_entry* entry;
    };
    std::vector<resolved> devs;
    std::set<std::string> device_keys;
    for (const auto& l : list) {
      if (l.requests)
        throw Exception("device '" + device + "': '" + l.name + "(" + std::to_string(l.requests) +
                        ")': HETERO takes no request counts");
      auto [name, entry] = find(l.name);
      for (const auto& d : devs)
        if (d.name == name)
          throw Exception("device '" + device + "': '" + d.written + "' and '" + l.name + "' are both " + name);
      devs.push_back({l.name, name, &entry});
      device_keys.insert(l.name);
      device_keys.insert(name);
    }
    for (const auto& [k, v] : per_device)
      if (!device_keys.count(k))
        throw Exception("property DEVICE_PROPERTIES of " + device + " names device '" + k +
                        "', which is not in its list");
    std::vector<hetero_member> members;
    for (const auto& d : devs) {
      AnyMap merged = defaults_of(*d.entry);
      for (const auto& [k, v] : props) {
        if (k == "DEVICE_PRIORITIES" || k == "DEVICE_PROPERTIES" || k == "HETERO_DUMP_GRAPH_DOT" || device_keys.count(k))
          continue;
        validate_property(d.name, *d.entry->dev, k, v);
        merged[k] = v;
      }
      AnyMap own;
      for (const auto& key : {d.written, d.name}) {
        if (auto it = per_device.find(key); it != per_device.end()) own = it->second;
        if (auto it = props.find(key); it != props.end())
          own = parse_device_properties("property " + key + " of " + device,
                                        "{" + key + ":" + it->second.as_string() + "}")[key];
      }
      for (const auto& [k, v] : own) {
        validate_property(d.name, *d.entry->dev, k, v);
        merged[k] = v;
      }
      auto cfg = resolve_config(merged, *d.entry->dev);
      members.push_back({d.name, as_configured(d.name, *d.entry, cfg), cfg, pool_for(d.name)});
    }
    return members;
  }

  found find(const std::string& device) {
    for (const char* virt : {"MULTI", "AUTO", "BATCH"}) {
      std::string v = virt;
      if (device == v || device.rfind(v + ":", 0) == 0)
        throw Exception("device '" + device + "': the " + v + " device is not supported yet");
    }
    std::lock_guard lock(mutex);
    std::string name = device;
    if (names_gpu(device)) {
      enumerate_gpus();
      if (!no_gpu_reason.empty())
        throw Exception("device '" + device + "' is not available: " + no_gpu_reason +
                        "; available devices: " + joined(listed_locked()));
      name = canonical_device_name(device);
    }
    auto it = devices.find(name);
    if (it == devices.end()) {
      if (!names_gpu(device)) enumerate_gpus(); // so the list below is complete
      throw Exception("unknown device '" + device + "'; available devices: " + joined(order));
    }
    return {name, it->second};
  }
};

Core::Core() : impl_(std::make_unique<Impl>()) {}
Core::~Core() = default;

std::vector<std::string> Core::available_devices() const { return impl_->listed(); }

Model Core::read_model(const std::string& path) const {
  auto impl = std::make_shared<Model::Impl>();
  impl->graph = graph::read_onnx_file(path);
  graph::infer_shapes(impl->graph);
  auto slash = path.find_last_of('/');
  impl->name = slash == std::string::npos ? path : path.substr(slash + 1);
  return Model(impl);
}

CompiledModel Core::compile_model(const std::string& path, const std::string& device, const AnyMap& properties) {
  return compile_model(read_model(path), device, properties);
}

static bool is_hetero(const std::string& device) { return device == "HETERO" || device.rfind("HETERO:", 0) == 0; }

CompiledModel Core::compile_model(const Model& model, const std::string& device, const AnyMap& properties) {
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
  auto [name, entry] = impl_->find(device);
  const AnyMap merged = impl_->with_call(device, entry, properties);
  auto cm = std::make_shared<CompiledModel::Impl>();
  cm->eng = impl_->eng;
  cm->device = name;
  cm->config = resolve_config(merged, *entry.dev);
  const graph::Graph& src = model.impl()->graph;
  cm->inputs = graph_inputs(src);
  cm->outputs = graph_outputs(src);

  actors::subgraph_spec spec;
  spec.streams = static_cast<std::size_t>(cm->config.streams);
  spec.pool = impl_->pool_for(name);
  bool all_static = true;
  for (const auto& p : cm->inputs) all_static = all_static && p.get_partial_shape().is_static();
  auto dev = Impl::as_configured(name, entry, cm->config);
  auto cfg = cm->config.compile;
  if (all_static) {
    auto prog = std::make_shared<actors::program>();
    prog->prototype = compile_graph(src, *dev, cfg);
    prog->profiling = cfg.profiling;
    cm->loaded_from_cache = prog->prototype->loaded_from_cache();
    spec.fixed = std::move(prog);
  } else {
    // Dynamic inputs: one program per distinct set of concrete input shapes, on first use.
    auto g = std::make_shared<const graph::Graph>(src);
    spec.compile = [g, dev, cfg](const std::vector<Shape>& shapes) {
      auto prog = std::make_shared<actors::program>();
      prog->prototype = compile_graph(with_input_shapes(*g, shapes), *dev, cfg);
      prog->profiling = cfg.profiling;
      return std::shared_ptr<const actors::program>(std::move(prog));
    };
  }
  cm->runner = std::make_unique<actors::subgraph>(*impl_->eng->system, std::move(spec));
  return CompiledModel(cm);
}

/// Per op of the model (friendly name): the device it runs on (absent when none can) and why.
/// query_model, query_model_unsupported and query_placement all answer from this.
static void query_ops(Core::Impl& impl, const Model& model, const std::string& device, const AnyMap& properties,
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
  for (const auto& op : g.ops) {
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
  if (is_hetero(device)) {
    // HETERO's defaults; with "HETERO:A,B" they are checked against A and B now.
    AnyMap next = impl_->hetero_props(properties);
    if (device != "HETERO") impl_->hetero_members(device, next);
    else if (next.count("DEVICE_PRIORITIES")) impl_->hetero_members("HETERO", next);
    std::lock_guard lock(impl_->mutex);
    impl_->hetero_defaults = std::move(next);
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

Any Core::get_property(const std::string& device, const std::string& name) const {
  if (is_hetero(device)) {
    std::vector<std::string> own{"FULL_DEVICE_NAME", "SUPPORTED_PROPERTIES", "DEVICE_PRIORITIES", "DEVICE_PROPERTIES",
                                 "HETERO_DUMP_GRAPH_DOT"};
    const auto ds = parse_device_string(device);
    if (name == "FULL_DEVICE_NAME") return Any(std::string("HETERO"));
    if (name == "DEVICE_PRIORITIES" && !ds.devices.empty()) {
      std::vector<std::string> list;
      for (const auto& d : ds.devices) list.push_back(impl_->find(d.name).name);
      return Any(list);
    }
    if (name == "SUPPORTED_PROPERTIES") {
      // With a list: also what every listed device has (HETERO hands those to each).
      std::vector<std::string> shared;
      for (std::size_t i = 0; i < ds.devices.size(); ++i) {
        const auto& w = writable_properties(*impl_->find(ds.devices[i].name).entry.dev);
        if (i == 0) shared = w;
        else std::erase_if(shared, [&](const std::string& p) { return std::find(w.begin(), w.end(), p) == w.end(); });
      }
      own.insert(own.end(), shared.begin(), shared.end());
      return Any(own);
    }
    if (name == "DEVICE_PRIORITIES" || name == "DEVICE_PROPERTIES" || name == "HETERO_DUMP_GRAPH_DOT") {
      std::lock_guard lock(impl_->mutex);
      auto it = impl_->hetero_defaults.find(name);
      return it == impl_->hetero_defaults.end() ? Any(std::string()) : it->second;
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
