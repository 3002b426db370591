#include "runtime/multi.hpp"

#include <algorithm>
#include <set>

#include "actors/scheduler.hpp"
#include "runtime/core_impl.hpp"
#include "runtime/cache_files.hpp"
#include "runtime/model_impl.hpp"

namespace troupe {

namespace {

bool yes_no(const std::string& device, const std::string& name, const Any& v) {
  const auto& s = v.as_string();
  if (s == "YES" || s == "true") return true;
  if (s == "NO" || s == "false") return false;
  throw Exception("device " + device + ": property " + name + " must be YES or NO, got '" + s + "'");
}

/// A device's compiled model as one device of the scheduler: requests go to its runner; what
/// it compiles while serving counts into the virtual device's `stats` too.
class device_model final : public actors::runner {
public:
  device_model(std::shared_ptr<CompiledModel::Impl> cm, std::shared_ptr<actors::compile_stats> stats)
      : cm_(std::move(cm)) {
    cm_->stats->parent = std::move(stats);
  }
  void submit(actors::inference job) override { cm_->runner->submit(std::move(job)); }

private:
  std::shared_ptr<CompiledModel::Impl> cm_;
};

/// AUTO's preference for the one device of a LATENCY or THROUGHPUT compile, lower first: a
/// discrete GPU, an integrated one, the CPU, then any other GPU (a virtual one, or a Vulkan
/// driver that runs on the CPU, like Mesa's lavapipe, which is slower than the CPU device on
/// the same cores).
int auto_rank(const Core::Impl::routed_device& d) {
  if (d.name == "CPU") return 2;
  if (d.name.rfind("GPU.", 0) != 0) return 4;
  const auto info = d.entry->dev->info();
  const auto it = info.find("DEVICE_TYPE");
  const std::string type = it == info.end() ? "" : it->second;
  return type == "discrete" ? 0 : type == "integrated" ? 1 : 3;
}


AnyMap with_hint(AnyMap p, const std::string& hint) {
  if (!p.count("PERFORMANCE_HINT")) p["PERFORMANCE_HINT"] = hint;
  return p;
}

/// The first of `devs` that compiles `model`, with the errors of those before it.
std::shared_ptr<CompiledModel::Impl> first_compiling(Core::Impl& core, const Model& model,
                                                     const std::vector<Core::Impl::routed_device>& devs,
                                                     const std::string& hint, std::string& tried) {
  for (const auto& d : devs) {
    try {
      return core.compile_single(model, d.name, with_hint(d.props, hint));
    } catch (const std::exception& e) {
      tried += (tried.empty() ? "" : "; ") + d.name + ": " + e.what();
    }
  }
  return nullptr;
}

/// The first of `devs` that compiles `model`; when none does, an error naming `device` and
/// each device's reason (`tried` holds those gathered before).
CompiledModel first_or_fail(Core::Impl& core, const Model& model, const std::string& device,
                            const std::vector<Core::Impl::routed_device>& devs, const std::string& hint,
                            std::string& tried) {
  if (auto one = first_compiling(core, model, devs, hint, tried)) return CompiledModel(one);
  throw Exception("device '" + device + "' could not compile the model on any of its devices (" + tried + ")");
}

/// Serves `cm` through a scheduler over `spec`'s devices: EXECUTION_DEVICES follows the ones
/// serving, the served counts and (when `live`) new priorities go through cm.multi.
actors::scheduler& serve_through_scheduler(Core::Impl& core, CompiledModel::Impl& cm, actors::scheduler_spec spec,
                                           std::shared_ptr<CompiledModel::Impl::split_report> report,
                                           const std::string& policy, bool live) {
  std::vector<std::string> names;
  for (const auto& d : spec.devices) names.push_back(d.name);
  spec.on_serving = [report](const std::vector<std::string>& serving) {
    std::lock_guard lock(report->mutex);
    report->devices = serving;
  };
  auto sched = std::make_unique<actors::scheduler>(*core.eng->system, std::move(spec));
  auto& ref = *sched;
  // Devices that come and go (a node's) leave the serving list when they go and rejoin when
  // they come back.
  for (std::size_t d = 0; d < names.size(); ++d)
    if (auto p = core.find(names[d]).entry.dev->presence()) p->watch(ref.presence_watcher(d));
  cm.multi = std::make_shared<CompiledModel::Impl::multi_state>();
  cm.multi->sched = sched.get();
  cm.multi->devices = std::move(names);
  cm.multi->policy = policy;
  cm.multi->live_priorities = live;
  cm.runner = std::move(sched);
  cm.split = std::move(report);
  return ref;
}

/// AUTO's accelerator compiling while the CPU serves: what the compiling actor needs.
struct startup_compile {
  Core::Impl* core;
  Model model;
  Core::Impl::routed_device device;
  std::string hint;
  bool runtime_fallback;
  caf::actor scheduler;
  std::shared_ptr<CompiledModel::Impl::split_report> report;
  std::shared_ptr<actors::compile_stats> stats; ///< AUTO's
};

} // namespace
} // namespace troupe

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<troupe::startup_compile>)

namespace troupe {
namespace {

/// A dynamic model compiles per shape at its first inference, so a member that cannot run one of
/// its ops would be found out only then. Its query on the model at a probe shape (batch 1, every
/// other dynamic dim 32), optimized as a compile would, names such an op: "op 'x' (Type): why".
/// Empty when the device takes every op, the model is static, or the probe shape does not fit.
std::string refused_at_any_shape(Core::Impl& core, const Model& model, const std::string& device, const AnyMap& props) {
  std::map<std::string, PartialShape> shapes;
  for (const auto& in : model.inputs()) {
    PartialShape ps = in.get_partial_shape();
    if (!ps.rank_known) return {};
    if (ps.is_static()) continue;
    for (std::size_t d = 0; d < ps.dims.size(); ++d)
      if (ps.dims[d] < 0) ps.dims[d] = d == 0 ? 1 : 32;
    ps.symbols.clear();
    shapes[in.get_any_name()] = ps;
  }
  if (shapes.empty()) return {};
  std::map<std::string, std::string> placed, why;
  try {
    Model probe(std::make_shared<Model::Impl>(*model.impl()));
    probe.reshape(shapes);
    query_ops(core, probe, device, props, placed, why);
  } catch (const std::exception&) {
    return {}; // the probe shape is not one the model takes: the first inference will tell
  }
  for (const auto& [op, reason] : why)
    if (!placed.count(op)) return "op '" + op + "': " + reason;
  return {};
}


/// The compiling actor's body: compile, hand over through the scheduler actor, and tell the
/// Core it is done (it waits for this before it goes).
void compile_in_background(std::shared_ptr<startup_compile> job) {
  auto& core = *job->core;
  std::string why;
  if (auto one = first_compiling(core, job->model, {job->device}, job->hint, why)) {
    {
      std::lock_guard lock(job->report->mutex);
      job->report->optimal_requests = one->config.streams;
    }
    std::vector<std::size_t> fallback;
    if (job->runtime_fallback) fallback.push_back(1);
    const auto slots = static_cast<std::size_t>(one->config.streams);
    actors::scheduler::device_ready(job->scheduler, 0, std::make_shared<device_model>(std::move(one), job->stats), slots, {0},
                                    std::move(fallback));
  }
  std::lock_guard lock(core.background.mutex);
  --core.background.running;
  core.background.done.notify_all();
}

/// AUTO with LATENCY or THROUGHPUT: one device serves, the first of `devs` that compiles the
/// model. When that is not the CPU and the CPU is a candidate, the CPU helps:
/// - startup fallback: the CPU is compiled first and serves while the chosen device compiles
///   in the background (an actor), then hands over from the next request on;
/// - runtime fallback: a request the chosen device fails with a device error runs again on
///   the CPU.
/// Both go through the scheduler; without either, the chosen device's model is returned as it is.
CompiledModel compile_auto_one(Core::Impl& core, const Model& model, const std::string& device,
                               std::vector<Core::Impl::routed_device> devs, const std::string& hint, bool startup,
                               bool runtime_fallback) {
  const auto cpu_at = std::find_if(devs.begin(), devs.end(), [](const auto& d) { return d.name == "CPU"; });
  const bool cpu_helps = cpu_at != devs.end() && cpu_at != devs.begin() && (startup || runtime_fallback);
  std::string tried;
  if (!cpu_helps) return first_or_fail(core, model, device, devs, hint, tried);
  const auto cpu = *cpu_at;
  std::vector<Core::Impl::routed_device> accelerators(devs.begin(), cpu_at); // ranked before the CPU

  std::shared_ptr<CompiledModel::Impl> chosen;
  if (!startup) {
    chosen = first_compiling(core, model, accelerators, hint, tried);
    if (!chosen) { // none of those before the CPU compiles it: the CPU alone, as without help
      return first_or_fail(core, model, device, {cpu_at, devs.end()}, hint, tried);
    }
  }
  std::shared_ptr<CompiledModel::Impl> on_cpu;
  try {
    on_cpu = core.compile_single(model, "CPU", with_hint(cpu.props, hint));
  } catch (const std::exception& e) {
    if (chosen) return CompiledModel(chosen); // the CPU cannot help: the chosen device alone
    // Startup fallback without a CPU model: compile the accelerators here, as without help.
    return first_or_fail(core, model, device, devs, hint, tried);
  }

  // Device 0: the accelerator (while it compiles, the first of the candidates before the CPU);
  // device 1: the CPU.
  const std::string first_name = chosen ? chosen->device : accelerators.front().name;
  auto cm = std::make_shared<CompiledModel::Impl>();
  cm->eng = core.eng;
  cm->inputs = on_cpu->inputs;
  cm->outputs = on_cpu->outputs;
  cm->config = on_cpu->config;
  cm->config.hint = hint;
  cm->device = "AUTO:" + first_name + ",CPU";
  auto report = std::make_shared<CompiledModel::Impl::split_report>();
  report->devices = {chosen ? first_name : std::string("CPU")};
  report->optimal_requests = chosen ? chosen->config.streams : on_cpu->config.streams;

  actors::scheduler_spec spec;
  spec.runtime_fallback = runtime_fallback;
  const auto cpu_slots = static_cast<std::size_t>(on_cpu->config.streams);
  if (chosen) {
    const auto slots = static_cast<std::size_t>(chosen->config.streams);
    spec.devices.push_back({first_name, std::make_shared<device_model>(std::move(chosen), cm->stats), slots});
  } else {
    spec.devices.push_back({first_name, nullptr, 1});
  }
  spec.devices.push_back({"CPU", std::make_shared<device_model>(std::move(on_cpu), cm->stats), cpu_slots});
  spec.order = startup ? std::vector<std::size_t>{1} : std::vector<std::size_t>{0};
  if (!startup) spec.fallback = {1};
  auto& sched = serve_through_scheduler(core, *cm, std::move(spec), report, "DEVICE_PRIORITY", false);

  if (startup) {
    // The accelerator compiles on an actor of its own while the CPU serves; the Core waits
    // for it before it goes. The model hands over through the scheduler actor, or stays on
    // the CPU when no candidate before the CPU compiles it (EXECUTION_DEVICES says CPU).
    {
      std::lock_guard lock(core.background.mutex);
      ++core.background.running;
    }
    const caf::actor to = sched.handle();
    core.eng->system->spawn<caf::detached>(
        compile_in_background,
        std::make_shared<startup_compile>(startup_compile{&core, model, accelerators.front(), hint, runtime_fallback,
                                                          to, report, cm->stats}));
  }
  return CompiledModel(cm);
}

} // namespace

bool is_multi_or_auto(const std::string& device) {
  for (const std::string v : {"MULTI", "AUTO"})
    if (device == v || device.rfind(v + ":", 0) == 0) return true;
  return false;
}

const std::set<std::string>& multi_own_keys() {
  static const std::set<std::string> keys{"PERFORMANCE_HINT", "SCHEDULE_POLICY", "ENABLE_RUNTIME_FALLBACK",
                                          "ENABLE_STARTUP_FALLBACK"};
  return keys;
}

CompiledModel compile_multi(Core::Impl& core, const Model& model, const std::string& device, const AnyMap& call) {
  const auto ds = parse_device_string(device);
  const bool is_auto = ds.virtual_device == "AUTO";
  const AnyMap props = core.virtual_props(ds.virtual_device, call);

  std::string hint = is_auto ? "LATENCY" : "CUMULATIVE_THROUGHPUT";
  if (auto it = props.find("PERFORMANCE_HINT"); it != props.end()) hint = it->second.as_string();
  if (hint != "LATENCY" && hint != "THROUGHPUT" && hint != "CUMULATIVE_THROUGHPUT")
    throw Exception("device " + device + ": PERFORMANCE_HINT must be LATENCY, THROUGHPUT or CUMULATIVE_THROUGHPUT, got '" +
                    hint + "'");
  auto policy = actors::schedule_policy::device_priority;
  if (auto it = props.find("SCHEDULE_POLICY"); it != props.end()) {
    const auto& p = it->second.as_string();
    if (p == "ROUND_ROBIN") policy = actors::schedule_policy::round_robin;
    else if (p != "DEVICE_PRIORITY")
      throw Exception("device " + device + ": SCHEDULE_POLICY must be DEVICE_PRIORITY or ROUND_ROBIN, got '" + p + "'");
  }
  bool fallback = true;
  if (auto it = props.find("ENABLE_RUNTIME_FALLBACK"); it != props.end())
    fallback = yes_no(device, "ENABLE_RUNTIME_FALLBACK", it->second);

  // AUTO without a list: every device the Core lists (REFERENCE is not listed).
  std::vector<listed_device> list;
  if (is_auto && ds.devices.empty() && !props.count("DEVICE_PRIORITIES"))
    for (const auto& n : core.listed()) list.push_back({n, 0});
  auto devs = core.route(device, props, multi_own_keys(), true, list);
  for (const auto& ex : ds.excluded) {
    // "-GPU" is every GPU, present or not; any other name must be a device this Core knows.
    if (ex != "GPU") core.find(ex);
    std::erase_if(devs, [&](const Core::Impl::routed_device& d) {
      return d.name == canonical_device_name(ex) || d.written == ex || (ex == "GPU" && d.name.rfind("GPU.", 0) == 0);
    });
  }
  if (devs.empty())
    throw Exception("device '" + device + "' leaves no device to run on; available devices: " + joined(core.listed()));

  // AUTO ranks its candidates when the application did not order them: for the one device of
  // LATENCY or THROUGHPUT (the first that compiles), and for CUMULATIVE_THROUGHPUT. A list
  // given (AUTO:GPU,CPU, DEVICE_PRIORITIES) is the order, as OpenVINO's AUTO takes it.
  const bool ordered = !ds.devices.empty() || props.count("DEVICE_PRIORITIES");
  const bool one_device = is_auto && hint != "CUMULATIVE_THROUGHPUT";
  if (is_auto && !ordered)
    std::stable_sort(devs.begin(), devs.end(), [](const auto& a, const auto& b) { return auto_rank(a) < auto_rank(b); });
  if (one_device) {
    bool startup = true;
    if (auto it = props.find("ENABLE_STARTUP_FALLBACK"); it != props.end())
      startup = yes_no(device, "ENABLE_STARTUP_FALLBACK", it->second);
    return compile_auto_one(core, model, device, devs, hint, startup, fallback);
  }

  // Every device serves, each configured for throughput unless told otherwise.
  auto cm = std::make_shared<CompiledModel::Impl>();
  cm->eng = core.eng;
  actors::scheduler_spec spec;
  spec.policy = policy;
  spec.runtime_fallback = fallback;
  int optimal = 0;
  std::vector<std::string> names;
  std::string tried;
  std::vector<std::string> left_out; // warnings, once another device serves
  for (auto& d : devs) {
    std::shared_ptr<CompiledModel::Impl> one;
    try {
      if (const auto refused = refused_at_any_shape(core, model, d.name, d.props); !refused.empty())
        throw Exception(refused);
      one = core.compile_single(model, d.name, with_hint(d.props, hint == "LATENCY" ? "LATENCY" : "THROUGHPUT"));
    } catch (const std::exception& e) {
      // A device that cannot compile the model is left out (as AUTO does); the others serve.
      tried += (tried.empty() ? "" : "; ") + d.name + ": " + e.what();
      left_out.push_back("device '" + device + "': " + d.name + " cannot compile the model and is left out (" + e.what() +
                         ")");
      continue;
    }
    if (names.empty()) {
      cm->inputs = one->inputs;
      cm->outputs = one->outputs;
      cm->config = one->config;
    }
    const int slots = d.requests ? d.requests : one->config.streams;
    optimal += slots;
    names.push_back(d.name);
    spec.devices.push_back({d.name, std::make_unique<device_model>(std::move(one), cm->stats), static_cast<std::size_t>(slots)});
  }
  if (names.empty())
    throw Exception("device '" + device + "' could not compile the model on any of its devices (" + tried + ")");
  for (const auto& w : left_out) library_warning(w);
  cm->config.hint = hint;
  cm->device = ds.virtual_device + ":" + joined(names);
  std::erase(cm->device, ' ');
  auto report = std::make_shared<CompiledModel::Impl::split_report>();
  report->devices = names;
  report->optimal_requests = optimal;
  serve_through_scheduler(core, *cm, std::move(spec), std::move(report),
                          policy == actors::schedule_policy::round_robin ? "ROUND_ROBIN" : "DEVICE_PRIORITY", true);
  return CompiledModel(cm);
}

} // namespace troupe
