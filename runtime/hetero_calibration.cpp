#include "runtime/hetero_calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <random>
#include <thread>

#include <troupe/exception.hpp>

#include "base/median.hpp"
#include "base/thread_round_trip.hpp"
#include "graph/partition.hpp"
#include "runtime/compile_pipeline.hpp"
#include "runtime/hetero.hpp"

namespace troupe {

namespace {

/// Floats in [0, 1); everything else zero (a valid index, a false mask, an empty string).
Tensor synthetic(const graph::Value& v, std::mt19937& rng) {
  Tensor t(v.type, v.shape.to_shape());
  if (t.get_byte_size() > 0) std::memset(t.data(), 0, t.get_byte_size());
  if (v.type == element_type::f32) {
    std::uniform_real_distribution<float> u(0, 1);
    for (int64_t i = 0; i < t.get_size(); ++i) t.data<float>()[i] = u(rng);
  }
  return t;
}

/// Sums of the executed profiling rows of one run, by node name.
std::map<std::string, double> row_times(const kernels::executable& exe) {
  std::map<std::string, double> r;
  for (const auto& row : exe.profile())
    if (row.state == kernels::op_profile::status::executed) r[row.node_name] += row.real_time_us;
  return r;
}

/// One device's share of the calibration: its placement compiled, the parts on the device
/// kept with their inputs, and each op's time in every timed run.
struct timed_split {
  std::vector<std::unique_ptr<kernels::executable>> parts;
  std::vector<std::vector<Tensor>> inputs;
  std::vector<bool> timed;                            ///< per part: on the device being measured
  std::map<std::string, std::vector<double>> samples; ///< per op name, one sum per run
  std::size_t crossings = 0;                          ///< values read by a part on another device
};

constexpr std::size_t no_target = static_cast<std::size_t>(-1);

/// Compiles `g` placed as `device_of` says and runs it once (values pass from part to part);
/// keeps every part with its inputs, those on members[target] compiled with profiling
/// (no_target: none).
timed_split prepare_split(const graph::Graph& g, const std::vector<hetero_member>& members,
                          const std::vector<int>& device_of, std::size_t target) {
  graph::Graph fused = g;
  for (std::size_t i = 0; i < fused.ops.size(); ++i)
    fused.ops[i].rt_info["affinity"] = members[static_cast<std::size_t>(device_of[i])].name;
  fuse_ops(fused); // as HETERO compiles it: the passes merge only ops of one device
  std::vector<std::string> part_device;
  for (const auto& op : fused.ops) part_device.push_back(op.rt_info.at("affinity"));
  const auto parts = graph::partition_graph(fused, part_device).parts;

  timed_split split;
  std::map<graph::ValueId, std::string> made_on;
  for (const auto& part : parts)
    for (auto id : part.outputs) made_on[id] = part.device;
  for (const auto& part : parts)
    for (auto id : part.inputs) split.crossings += made_on.count(id) && made_on[id] != part.device;
  std::map<graph::ValueId, Tensor> values;
  std::mt19937 rng(20261128);
  for (auto id : fused.inputs) values[id] = synthetic(fused.value(id), rng);
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const auto& part = parts[p];
    const auto& m = member_named(members, part.device);
    const bool timed = target != no_target && part.device == members[target].name;
    auto cfg = m.config.compile;
    cfg.profiling = timed;
    std::vector<Tensor> in, out;
    for (auto id : part.inputs) in.push_back(values.at(id));
    try {
      auto exe = compile_graph(graph::extract_part(fused, part), *m.dev, cfg);
      exe->run(in, out); // the first run allocates and uploads: not timed
      split.parts.push_back(std::move(exe));
      split.inputs.push_back(in);
      split.timed.push_back(timed);
    } catch (const std::exception& e) {
      throw Exception("HETERO calibration on " + part.device + " (subgraph " + std::to_string(p) + " of " +
                      std::to_string(parts.size()) + "): " + e.what());
    }
    for (std::size_t k = 0; k < part.outputs.size() && k < out.size(); ++k) values[part.outputs[k]] = out[k];
  }
  return split;
}

/// A pause before a timed run, so that it does not start while the previous one's threads
/// (OpenMP's team, a Vulkan driver's) may still spin on the cores. Why: in the check, GPU.0
/// alone (rec, lavapipe) measured 145 ms right after a split's CPU part, while troupe bench
/// alternated with it measured 98-111 ms; spinning threads are the suspected cause, not an
/// isolated one.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

/// One run of every part of `split`, in order, as a request runs them (so that an op is timed
/// right after the other device's work, as it will run); the timed parts' rows go into
/// `samples`. Returns the run's wall time.
double run_once(timed_split& split, const std::string& device) {
  std::vector<Tensor> out;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t p = 0; p < split.parts.size(); ++p) {
    try {
      split.parts[p]->run(split.inputs[p], out);
    } catch (const std::exception& e) {
      throw Exception("HETERO calibration on " + device + ": " + e.what());
    }
  }
  const double wall = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  for (std::size_t p = 0; p < split.parts.size(); ++p)
    if (split.timed[p])
      for (const auto& [name, us] : row_times(*split.parts[p])) split.samples[name].push_back(us);
  return wall;
}

/// One op from an f32 input of `floats` elements to an output as large: a Relu, or where the
/// device refuses it (EXCLUDED_OPS) an Identity, or a 1x1 Conv; which op does not matter, its
/// own time is taken out. Throws when the device runs none of them.
graph::Graph io_probe(const hetero_member& m, int64_t floats) {
  std::string refusals;
  for (const char* type : {"Relu", "Identity", "Conv"}) {
    const bool conv = std::string(type) == "Conv";
    const PartialShape shape = conv ? PartialShape({1, 1, 1, floats}) : PartialShape({floats});
    graph::Graph g;
    auto x = g.add_input("x", element_type::f32, shape);
    graph::Op op;
    op.type = type;
    op.name = std::string("calibration_") + type;
    op.inputs = {x};
    if (conv) {
      Tensor w(element_type::f32, Shape{1, 1, 1, 1});
      *w.data<float>() = 1;
      op.inputs.push_back(g.add_constant("w", w));
    }
    op.outputs = {g.add_value({"y", element_type::f32, shape, std::nullopt})};
    g.ops.push_back(op);
    g.outputs = {op.outputs[0]};
    const auto s = m.dev->query(g, g.ops[0]);
    if (s.supported) return g;
    refusals += (refusals.empty() ? "" : "; ") + s.reason;
  }
  throw Exception("HETERO calibration on " + m.name + ": no op to time a crossing with (" + refusals + ")");
}

/// What a run on `m` takes beyond its op, for one f32 input and output of `floats` elements:
/// starting the run and moving its tensors in and out.
double io_us(const hetero_member& m, int64_t floats, int runs) {
  graph::Graph g = io_probe(m, floats);
  const graph::Op op = g.ops[0];
  const auto x = g.inputs[0];
  auto cfg = m.config.compile;
  cfg.profiling = true;
  std::mt19937 rng(1);
  std::vector<Tensor> in{synthetic(g.value(x), rng)}, out;
  std::vector<double> beyond;
  try {
    auto exe = compile_graph(g, *m.dev, cfg);
    exe->run(in, out);
    for (int r = 0; r < runs + 2; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      exe->run(in, out);
      const double wall = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      const auto rows = row_times(*exe);
      const auto it = rows.find(op.name);
      beyond.push_back(std::max(0.0, wall - (it == rows.end() ? 0.0 : it->second)));
    }
  } catch (const std::exception& e) {
    throw Exception("HETERO calibration on " + m.name + " (a " + op.type + " of " + std::to_string(floats) +
                    " floats, to time a crossing): " + e.what());
  }
  return median(beyond);
}

graph::placement_costs calibrate_here(const graph::Graph& g, const std::vector<hetero_member>& members,
                                      const std::vector<int>& start, const std::vector<std::vector<bool>>& can_run,
                                      int runs) {
  const std::size_t n = members.size();
  graph::placement_costs c;
  c.devices = member_names(members);
  c.op_us.assign(g.ops.size(), std::vector<double>(n, std::numeric_limits<double>::infinity()));
  std::vector<timed_split> splits(n);
  for (std::size_t d = 0; d < n; ++d) {
    std::vector<int> device_of = start;
    for (std::size_t i = 0; i < g.ops.size(); ++i)
      if (can_run[i][d]) device_of[i] = static_cast<int>(d);
    splits[d] = prepare_split(g, members, device_of, d);
  }
  // The devices take turns, run by run, so that a change in the machine's load weighs on all
  // of them alike; an op's time is its fastest run (the slower ones measure the others' load).
  for (int r = 0; r < runs; ++r)
    for (std::size_t d = 0; d < n; ++d) {
      settle();
      run_once(splits[d], members[d].name);
    }
  for (std::size_t d = 0; d < n; ++d) {
    // A node's device reports no rows: its ops would look free.
    if (splits[d].samples.empty() && std::find(splits[d].timed.begin(), splits[d].timed.end(), true) != splits[d].timed.end())
      throw Exception("HETERO calibration on " + members[d].name + ": the device reports no time per op");
  }
  for (std::size_t d = 0; d < n; ++d)
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
      if (!can_run[i][d]) continue;
      const auto it = splits[d].samples.find(g.ops[i].name);
      c.op_us[i][d] = it == splits[d].samples.end() ? 0.0 : *std::min_element(it->second.begin(), it->second.end());
    }
  // A crossing into device b: b starts a run (its fixed cost) and the bytes leave the producer
  // and enter b, each at its device's rate per byte and direction.
  constexpr int64_t small = 256, large = int64_t{1} << 20; // floats: 1 KiB and 4 MiB
  std::vector<double> latency(n), per_byte(n);
  const double hop = thread_round_trip_us(200) / 2; // the next stage's actor wakes up
  for (std::size_t d = 0; d < n; ++d) {
    const double a = io_us(members[d], small, runs), b = io_us(members[d], large, runs);
    latency[d] = a + hop;
    per_byte[d] = std::max(0.0, (b - a) / (2.0 * 4.0 * static_cast<double>(large - small)));
  }
  c.transfer.assign(n, std::vector<graph::transfer_cost>(n));
  c.from_host.resize(n);
  c.to_host.resize(n);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) c.transfer[a][b] = {latency[b], per_byte[a] + per_byte[b]};
    c.from_host[a] = {0, per_byte[a]};
    c.to_host[a] = {0, per_byte[a]};
  }
  return c;
}

/// Runs `work` on a thread of its own, which ends with it, and returns what it returns (or
/// throws what it throws). A CPU run on the caller's thread would leave the caller an OpenMP
/// team for the rest of the process, and libgomp, managing more threads than there are cores,
/// then spins less before sleeping in every team: every later CPU inference of the process
/// measured ~30 % slower (cls, 0.69 -> 0.90 ms).
template <class F> auto on_own_thread(F work) {
  decltype(work()) result;
  std::exception_ptr failed;
  std::thread worker([&] {
    try {
      result = work();
    } catch (...) {
      failed = std::current_exception();
    }
  });
  worker.join();
  if (failed) std::rethrow_exception(failed);
  return result;
}

} // namespace

graph::placement_costs calibrate_hetero(const graph::Graph& g, const std::vector<hetero_member>& members,
                                        const std::vector<int>& start, const std::vector<std::vector<bool>>& can_run,
                                        int runs) {
  return on_own_thread([&] { return calibrate_here(g, members, start, can_run, runs); });
}

std::vector<double> time_placements(const graph::Graph& g, const std::vector<hetero_member>& members,
                                    const std::vector<std::vector<int>>& placements, const std::vector<std::string>& labels,
                                    std::vector<std::string>& failures, int runs) {
  failures.assign(placements.size(), "");
  return on_own_thread([&] {
    std::vector<timed_split> splits(placements.size());
    std::vector<double> best(placements.size(), std::numeric_limits<double>::infinity());
    auto fail = [&](std::size_t k, const std::exception& e) {
      failures[k] = labels[k] + ": " + e.what();
      best[k] = std::numeric_limits<double>::infinity();
    };
    for (std::size_t k = 0; k < placements.size(); ++k) try {
        splits[k] = prepare_split(g, members, placements[k], no_target);
      } catch (const std::exception& e) {
        fail(k, e);
      }
    // Taking turns, run by run, as the calibration does; each placement's fastest run.
    for (int r = 0; r < runs; ++r)
      for (std::size_t k = 0; k < splits.size(); ++k) {
        if (!failures[k].empty()) continue;
        settle();
        try {
          best[k] = std::min(best[k], run_once(splits[k], labels[k]));
        } catch (const std::exception& e) {
          fail(k, e);
        }
      }
    // The actors' hand-over per crossing, which one thread running the parts in turn skips.
    const double hop = thread_round_trip_us(200) / 2;
    for (std::size_t k = 0; k < splits.size(); ++k) best[k] += hop * static_cast<double>(splits[k].crossings);
    return best;
  });
}

} // namespace troupe
