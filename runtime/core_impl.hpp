#pragma once
/// What a Core holds: its devices (the GPUs enumerated on first use), the properties set on
/// them, one device pool per device, and the helpers that resolve a device string's members.
/// Shared by the facade (core.cpp) and the virtual devices built on it (hetero, multi).
#include <troupe/core.hpp>
#include <troupe/exception.hpp>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "actors/device_pool.hpp"
#include "actors/remote_device.hpp"
#include "runtime/compiled_model_impl.hpp"
#include "runtime/device_properties.hpp"
#include "runtime/device_string.hpp"
#include "runtime/engine.hpp"
#include "runtime/hetero.hpp"
#include "runtime/debug_device.hpp"
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

inline std::string joined(const std::vector<std::string>& v) {
  std::string all;
  for (const auto& n : v) all += (all.empty() ? "" : ", ") + n;
  return all;
}

inline bool names_gpu(const std::string& device) { return device == "GPU" || device.rfind("GPU.", 0) == 0; }

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
  std::shared_ptr<engine> eng;
  std::map<std::string, device_entry> devices;
  AnyMap core_properties; ///< Core::set_property(AnyMap): every device's defaults under its own
  /// set_property("HETERO" / "MULTI" / "AUTO", ...): DEVICE_PRIORITIES and what they route
  std::map<std::string, AnyMap> virtual_defaults;
  std::map<std::string, std::weak_ptr<actors::device_pool>> pools; ///< per device: see pool_for
  std::vector<std::string> order; ///< CPU, GPU.0, GPU.1, ..., DEV@host:port, ..., REFERENCE
  /// Nodes added (add_node), by "host:port": their devices are in `devices` as DEV@host:port.
  std::map<std::string, std::shared_ptr<actors::node_link>> nodes;
  std::vector<std::string> node_names() const {
    std::vector<std::string> r;
    for (const auto& [n, l] : nodes) r.push_back(n);
    return r;
  }

  /// Vulkan is enumerated on the first use of a GPU name or of the device list, not here:
  /// opening every device loads its shaders, which CPU-only use should not pay for.
  bool gpus_enumerated = false;
  std::string no_gpu_reason; ///< why there is no GPU, once enumerated and none found
  mutable std::mutex mutex;  ///< guards the lazy enumeration and the device table

  /// Compiles that run after compile_model returned (AUTO's accelerator while the CPU serves):
  /// they use this Core, so it waits for them before it goes.
  struct background_compiles {
    std::mutex mutex;
    std::condition_variable done;
    int running = 0;
  } background;

  Impl() : Impl(make_engine()) {}
  ~Impl() {
    std::unique_lock lock(background.mutex);
    background.done.wait(lock, [&] { return background.running == 0; });
  }
  /// On a given engine: troupe/caf.hpp's make_core passes one that borrows the application's system.
  explicit Impl(std::shared_ptr<engine> e) : eng(std::move(e)) {
#ifdef TROUPE_HAVE_CPU
    add("CPU", kernels::cpu::make_cpu_device(), true);
#endif
    add("REFERENCE", make_reference_device(), false);
  }

  /// A Core on `e` (Core's constructor from an Impl is private: only Impl reaches it).
  static std::unique_ptr<Core> make_core(std::shared_ptr<engine> e) {
    return std::unique_ptr<Core>(new Core(std::make_unique<Impl>(std::move(e))));
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
      // The driver just loaded registered exit handlers of its own, which run before those
      // registered earlier: the exit guard goes again, after them, so that it runs first.
      register_exit_guard();
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

  /// The device as a compile with `cfg` sees it: without the op types EXCLUDED_OPS removes, and
  /// failing every FAIL_EVERY-th run.
  static std::shared_ptr<kernels::device> as_configured(const std::string& name, const device_entry& entry,
                                                        const resolved_config& cfg) {
    return debug_device(entry.dev, excluded_ops(name, cfg.excluded_ops_given ? &cfg.excluded_ops : nullptr),
                        fail_every(name, cfg.fail_every_given ? &cfg.fail_every : nullptr));
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
    auto plan = plan_hetero(model.impl()->graph, members, hetero_placement_of(hetero_props(call)));
    if (auto folder = hetero_dot_folder(hetero_props(call)); !folder.empty())
      write_hetero_dots(plan, model.impl()->name, folder);
    return plan;
  }

  /// A virtual device's own defaults (set_property("HETERO" / "MULTI" / "AUTO", ...)) with
  /// the call's properties over them.
  AnyMap virtual_props(const std::string& kind, const AnyMap& call) {
    AnyMap props;
    {
      std::lock_guard lock(mutex);
      props = virtual_defaults[kind];
    }
    for (const auto& [k, v] : call) props[k] = v;
    return props;
  }
  AnyMap hetero_props(const AnyMap& call) { return virtual_props("HETERO", call); }

  /// One device of a virtual device's list, resolved, with the properties routed to it.
  struct routed_device {
    std::string written; ///< as the list has it: "GPU", "CPU"
    std::string name;    ///< canonical: "GPU.0"
    int requests = 0;    ///< "GPU(4)": 4; 0 when not given
    device_entry* entry = nullptr;
    AnyMap props; ///< every property of `props` that is not the virtual device's own, then its own map
  };

  /// The devices of virtual device string `device` (its list, else DEVICE_PRIORITIES), each
  /// with its properties: every one of `props` not in `own_keys` (a device lacking one is an
  /// error naming both), then its entry of DEVICE_PROPERTIES (or of a key named for it).
  /// `expand_gpu`: "GPU" is every GPU (MULTI, AUTO), not GPU.0 (HETERO). `list` overrides the
  /// string's list when not empty (AUTO without one).
  std::vector<routed_device> route(const std::string& device, const AnyMap& props, const std::set<std::string>& own_keys,
                                   bool expand_gpu, std::vector<listed_device> list = {}) {
    const auto ds = parse_device_string(device);
    if (list.empty()) list = ds.devices;
    if (list.empty()) {
      auto it = props.find("DEVICE_PRIORITIES");
      if (it == props.end())
        throw Exception("device '" + device + "': no devices: write " + ds.virtual_device +
                        ":GPU,CPU or set DEVICE_PRIORITIES");
      list = parse_priorities("device '" + device + "'", it->second.as_string());
    }
    std::map<std::string, AnyMap> per_device;
    if (auto it = props.find("DEVICE_PROPERTIES"); it != props.end())
      per_device = parse_device_properties("property DEVICE_PROPERTIES of " + device, it->second.as_string());
    std::vector<routed_device> devs;
    std::set<std::string> device_keys;
    for (const auto& l : list) {
      std::vector<std::string> names{l.name};
      if (expand_gpu && l.name == "GPU") {
        names.clear();
        for (const auto& n : listed())
          if (n.rfind("GPU.", 0) == 0) names.push_back(n);
        if (names.empty()) find("GPU"); // throws saying why there is none
      }
      for (const auto& n : names) {
        auto [name, entry] = find(n);
        for (const auto& d : devs)
          if (d.name == name)
            throw Exception("device '" + device + "': '" + d.written + "' and '" + l.name + "' are both " + name);
        devs.push_back({l.name, name, l.requests, &entry, {}});
      }
      device_keys.insert(l.name);
    }
    for (const auto& d : devs) device_keys.insert(d.name);
    for (const auto& [k, v] : per_device)
      if (!device_keys.count(k))
        throw Exception("property DEVICE_PROPERTIES of " + device + " names device '" + k + "', which is not in its list");
    for (auto& d : devs) {
      for (const auto& [k, v] : props) {
        if (k == "DEVICE_PRIORITIES" || k == "DEVICE_PROPERTIES" || own_keys.count(k) || device_keys.count(k)) continue;
        validate_property(d.name, *d.entry->dev, k, v);
        d.props[k] = v;
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
        d.props[k] = v;
      }
    }
    return devs;
  }

  /// HETERO's devices, resolved, each with its configuration: its defaults, then what route()
  /// gives it.
  std::vector<hetero_member> hetero_members(const std::string& device, const AnyMap& call) {
    std::vector<hetero_member> members;
    for (auto& d : route(device, hetero_props(call), {"HETERO_DUMP_GRAPH_DOT", "HETERO_PLACEMENT"}, false)) {
      if (d.requests)
        throw Exception("device '" + device + "': '" + d.written + "(" + std::to_string(d.requests) +
                        ")': HETERO takes no request counts");
      AnyMap merged = defaults_of(*d.entry);
      for (const auto& [k, v] : d.props) merged[k] = v;
      auto cfg = resolve_config(merged, *d.entry->dev);
      members.push_back({d.name, as_configured(d.name, *d.entry, cfg), cfg, pool_for(d.name)});
    }
    return members;
  }

  /// A single device's compiled model (core.cpp).
  std::shared_ptr<CompiledModel::Impl> compile_single(const Model& model, const std::string& device,
                                                      const AnyMap& properties);
  /// The same from a graph: `optimized` (an imported model) skips the graph passes and CACHE_DIR.
  std::shared_ptr<CompiledModel::Impl> compile_single_graph(const graph::Graph& src, const std::string& model_name,
                                                            const std::string& device, const AnyMap& properties,
                                                            bool optimized);

  found find(const std::string& device) {
    if (device == "BATCH" || device.rfind("BATCH:", 0) == 0)
      throw Exception("device '" + device + "': the BATCH device is not supported yet");
    for (const std::string v : {"MULTI", "AUTO"})
      if (device == v || device.rfind(v + ":", 0) == 0)
        throw Exception("device '" + device + "': " + v +
                        " spreads whole requests over devices; this call takes one device (or HETERO)");
    std::lock_guard lock(mutex);
    std::string name = device;
    if (names_gpu(device)) {
      enumerate_gpus();
      if (!no_gpu_reason.empty())
        throw Exception("device '" + device + "' is not available: " + no_gpu_reason +
                        "; available devices: " + joined(listed_locked()));
      name = canonical_device_name(device);
    }
    if (auto at = name.find('@'); at != std::string::npos) {
      // DEV@host:port: a device of a node; "GPU@..." is the node's GPU.0.
      const auto node = name.substr(at + 1);
      if (!nodes.count(node))
        throw Exception("device '" + device + "': node " + node +
                        " was not added (Core::add_node, TROUPE_NODES or -nodes); nodes added: " +
                        (nodes.empty() ? std::string("none") : joined(node_names())));
      if (name.compare(0, at, "GPU") == 0) name = "GPU.0" + name.substr(at);
    }
    auto it = devices.find(name);
    if (it == devices.end()) {
      if (!names_gpu(device)) enumerate_gpus(); // so the list below is complete
      throw Exception("unknown device '" + device + "'; available devices: " + joined(order));
    }
    return {name, it->second};
  }
};

/// Each op of `model` (friendly name) as `device` would take it: `placed` -> the device that runs
/// it, `why` -> the reason (also for the ops no device can run). query_model and its kin answer
/// from this, and MULTI asks it of a dynamic model's members.
void query_ops(Core::Impl& impl, const Model& model, const std::string& device, const AnyMap& properties,
               std::map<std::string, std::string>& placed, std::map<std::string, std::string>& why);

} // namespace troupe
