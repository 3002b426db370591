#include "graph/cost_placement.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <troupe/exception.hpp>

#include "graph/min_cut.hpp"
#include "graph/op_cost.hpp"

namespace troupe::graph {

namespace {

constexpr int host = -1;

/// Who makes and who reads each value that can cross (not constants).
struct value_uses {
  ValueId value;
  int producer = host;          ///< op index; host for a graph input
  std::vector<int> readers;     ///< op indices, each once, ascending
  bool graph_output = false;    ///< the host reads it too
  double bytes = 0;
};

std::vector<value_uses> uses_of(const Graph& g) {
  std::vector<int> producer(g.values.size(), -2); // -2: neither an op's output nor a graph input
  for (auto id : g.inputs) producer[static_cast<std::size_t>(id)] = host;
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    for (auto v : g.ops[i].outputs)
      if (v != no_value) producer[static_cast<std::size_t>(v)] = static_cast<int>(i);
  std::vector<std::vector<int>> readers(g.values.size());
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    for (auto v : g.ops[i].inputs)
      if (v != no_value && (readers[static_cast<std::size_t>(v)].empty() || readers[static_cast<std::size_t>(v)].back() != static_cast<int>(i)))
        readers[static_cast<std::size_t>(v)].push_back(static_cast<int>(i));
  std::vector<bool> output(g.values.size(), false);
  for (auto v : g.outputs) output[static_cast<std::size_t>(v)] = true;
  std::vector<value_uses> r;
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    const auto id = static_cast<ValueId>(v);
    if (producer[v] == -2 || g.is_constant(id)) continue;
    if (readers[v].empty() && !output[v]) continue;
    r.push_back({id, producer[v], readers[v], output[v], value_bytes(g, id)});
  }
  return r;
}

double transfer_us(const placement_costs& c, int from, int to, double bytes) {
  if (from == to) return 0;
  if (from == host) return c.from_host[static_cast<std::size_t>(to)].of(bytes);
  if (to == host) return c.to_host[static_cast<std::size_t>(from)].of(bytes);
  return c.transfer[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)].of(bytes);
}

/// The devices that read `u` under `device_of` (host included for a graph output), each once.
std::set<int> reader_devices(const value_uses& u, const std::vector<int>& device_of) {
  std::set<int> d;
  for (int r : u.readers) d.insert(device_of[static_cast<std::size_t>(r)]);
  if (u.graph_output) d.insert(host);
  return d;
}

double capacity(double us) { return std::isfinite(us) ? us : flow_network::infinite; }

/// One exact move: the ops now on devices a or b are split anew between a (s's side) and b,
/// every other op held where it is. Returns the new placement (the old one where every split
/// is infeasible).
std::vector<int> improve_pair(const placement_costs& c, const std::vector<value_uses>& uses, const std::vector<int>& device_of,
                              int a, int b) {
  flow_network net(2);
  const int s = 0, t = 1;
  std::vector<int> node(device_of.size(), -1);
  for (std::size_t i = 0; i < device_of.size(); ++i)
    if (device_of[i] == a || device_of[i] == b) node[i] = net.add_node();
  // The ops' own times; on a, op i is on s's side, so its edge to t is cut.
  std::vector<double> on_a(device_of.size(), 0), on_b(device_of.size(), 0);
  for (std::size_t i = 0; i < device_of.size(); ++i)
    if (node[i] >= 0) {
      on_a[i] = c.op_us[i][static_cast<std::size_t>(a)];
      on_b[i] = c.op_us[i][static_cast<std::size_t>(b)];
    }
  for (const auto& u : uses) {
    std::vector<int> free_readers;
    std::set<int> held; // devices of the readers held where they are (and the host)
    for (int r : u.readers) {
      if (node[static_cast<std::size_t>(r)] >= 0) free_readers.push_back(node[static_cast<std::size_t>(r)]);
      else held.insert(device_of[static_cast<std::size_t>(r)]);
    }
    if (u.graph_output) held.insert(host);
    const bool producer_free = u.producer != host && node[static_cast<std::size_t>(u.producer)] >= 0;
    if (producer_free) {
      const auto p = static_cast<std::size_t>(u.producer);
      // To the held readers' devices (never a or b): a cost of the producer's own side.
      for (int e : held) {
        on_a[p] += transfer_us(c, a, e, u.bytes);
        on_b[p] += transfer_us(c, b, e, u.bytes);
      }
      if (free_readers.empty()) continue;
      // Producer on a and some reader on b: a -> b once. y is on t's side as soon as one
      // reader is (y -> reader uncuttable), and then producer -> y is cut.
      const int y = net.add_node();
      net.add_edge(node[p], y, transfer_us(c, a, b, u.bytes));
      for (int r : free_readers) net.add_edge(y, r, flow_network::infinite);
      // Producer on b and some reader on a: b -> a once.
      const int z = net.add_node();
      for (int r : free_readers) net.add_edge(r, z, flow_network::infinite);
      net.add_edge(z, node[p], transfer_us(c, b, a, u.bytes));
    } else if (!free_readers.empty()) {
      const int from = u.producer == host ? host : device_of[static_cast<std::size_t>(u.producer)];
      // Some reader on a: from -> a once; some reader on b: from -> b once.
      const int y = net.add_node();
      for (int r : free_readers) net.add_edge(r, y, flow_network::infinite);
      net.add_edge(y, t, transfer_us(c, from, a, u.bytes));
      const int z = net.add_node();
      net.add_edge(s, z, transfer_us(c, from, b, u.bytes));
      for (int r : free_readers) net.add_edge(z, r, flow_network::infinite);
    }
  }
  for (std::size_t i = 0; i < device_of.size(); ++i)
    if (node[i] >= 0) {
      net.add_edge(node[i], t, capacity(on_a[i]));
      net.add_edge(s, node[i], capacity(on_b[i]));
    }
  if (net.max_flow(s, t) >= flow_network::infinite) return device_of;
  auto r = device_of;
  for (std::size_t i = 0; i < device_of.size(); ++i)
    if (node[i] >= 0) r[i] = net.source_side(node[i]) ? a : b;
  return r;
}

} // namespace

void check_costs(const Graph& g, const placement_costs& c) {
  const auto n = c.devices.size();
  if (n == 0) throw Exception("placement by cost: no devices");
  if (c.op_us.size() != g.ops.size())
    throw Exception("placement by cost: " + std::to_string(c.op_us.size()) + " rows of op times for " +
                    std::to_string(g.ops.size()) + " ops");
  for (std::size_t i = 0; i < c.op_us.size(); ++i)
    if (c.op_us[i].size() != n)
      throw Exception("placement by cost: " + describe(g.ops[i]) + " has " + std::to_string(c.op_us[i].size()) +
                      " times for " + std::to_string(n) + " devices");
  bool ok = c.transfer.size() == n && c.from_host.size() == n && c.to_host.size() == n;
  for (const auto& row : c.transfer) ok = ok && row.size() == n;
  if (!ok) throw Exception("placement by cost: the transfer tables do not have one entry per device (" + std::to_string(n) + ")");
}

double predicted_us(const Graph& g, const placement_costs& c, const std::vector<int>& device_of) {
  double total = 0;
  for (std::size_t i = 0; i < g.ops.size(); ++i) total += c.op_us[i][static_cast<std::size_t>(device_of[i])];
  for (const auto& x : crossings_of(g, c, device_of)) total += x.us;
  return total;
}

namespace {

std::vector<crossing> crossings_with(const std::vector<value_uses>& uses, const placement_costs& c,
                                     const std::vector<int>& device_of) {
  std::vector<crossing> r;
  for (const auto& u : uses) {
    const int from = u.producer == host ? host : device_of[static_cast<std::size_t>(u.producer)];
    for (int to : reader_devices(u, device_of))
      if (to != from) r.push_back({u.value, from, to, u.bytes, transfer_us(c, from, to, u.bytes)});
  }
  return r;
}

std::vector<double> loads_with(const Graph& g, const std::vector<value_uses>& uses, const placement_costs& c,
                               const std::vector<int>& device_of, const std::vector<int>& resource) {
  std::vector<double> load(1 + static_cast<std::size_t>(*std::max_element(resource.begin(), resource.end())), 0.0);
  auto of = [&](int d) -> double& { return load[static_cast<std::size_t>(resource[static_cast<std::size_t>(d)])]; };
  for (std::size_t i = 0; i < g.ops.size(); ++i) of(device_of[i]) += c.op_us[i][static_cast<std::size_t>(device_of[i])];
  for (const auto& x : crossings_with(uses, c, device_of)) of(x.to >= 0 ? x.to : x.from) += x.us; // to the host: the sender's
  return load;
}

double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

} // namespace

std::vector<crossing> crossings_of(const Graph& g, const placement_costs& c, const std::vector<int>& device_of) {
  return crossings_with(uses_of(g), c, device_of);
}

std::vector<int> place_by_cost(const Graph& g, const placement_costs& c, std::vector<int> start) {
  check_costs(g, c);
  if (start.size() != g.ops.size()) throw Exception("placement by cost: the start placement does not cover every op");
  const int n = static_cast<int>(c.devices.size());
  if (n < 2) return start;
  const auto uses = uses_of(g);
  double best = predicted_us(g, c, start);
  // Each accepted move is strictly faster, so this ends; 16 rounds bound it on pathological
  // inputs (two devices settle in one).
  for (int round = 0; round < 16; ++round) {
    bool improved = false;
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b) {
        auto next = improve_pair(c, uses, start, a, b);
        const double p = predicted_us(g, c, next);
        if (p < best - 1e-9 * std::max(1.0, best)) {
          start = std::move(next);
          best = p;
          improved = true;
        }
      }
    if (!improved || n == 2) break;
  }
  return start;
}

std::vector<double> resource_loads(const Graph& g, const placement_costs& c, const std::vector<int>& device_of,
                                   const std::vector<int>& resource) {
  return loads_with(g, uses_of(g), c, device_of, resource);
}

double bottleneck_us(const Graph& g, const placement_costs& c, const std::vector<int>& device_of,
                     const std::vector<int>& resource) {
  return max_of(resource_loads(g, c, device_of, resource));
}

std::vector<int> place_for_throughput(const Graph& g, const placement_costs& c, std::vector<int> start,
                                      const std::vector<int>& resource) {
  check_costs(g, c);
  if (resource.size() != c.devices.size()) throw Exception("placement by cost: one resource per device is needed");
  const auto uses = uses_of(g);
  double best = max_of(loads_with(g, uses, c, start, resource));
  auto consider = [&](std::vector<int> p) {
    for (std::size_t i = 0; i < p.size(); ++i)
      if (!std::isfinite(c.op_us[i][static_cast<std::size_t>(p[i])])) return;
    const double b = max_of(loads_with(g, uses, c, p, resource));
    if (b < best - 1e-9 * std::max(1.0, best)) {
      best = b;
      start = std::move(p);
    }
  };
  if (c.devices.size() != 2) {
    consider(place_by_cost(g, c, start));
    return start;
  }
  const std::vector<int> from = start;
  // Pipelines: the ops before a point of the topological order on one device, those after on
  // the other (each op that cannot run where its side is stays where `start` has it).
  for (int first = 0; first < 2; ++first)
    for (std::size_t cut = 0; cut <= g.ops.size(); ++cut) {
      std::vector<int> p(g.ops.size());
      for (std::size_t i = 0; i < p.size(); ++i) {
        const int want = i < cut ? first : 1 - first;
        p[i] = std::isfinite(c.op_us[i][static_cast<std::size_t>(want)]) ? want : from[i];
      }
      consider(std::move(p));
    }
  // The cut of the weighted sums: device d's work, and what crosses into it, weighted w_d.
  for (int k = 1; k < 20; ++k) {
    const double w[2] = {k / 20.0, 1 - k / 20.0};
    placement_costs weighted = c;
    for (auto& row : weighted.op_us)
      for (std::size_t d = 0; d < 2; ++d) row[d] *= w[d];
    for (std::size_t a = 0; a < 2; ++a) {
      for (std::size_t b = 0; b < 2; ++b) {
        weighted.transfer[a][b].latency_us *= w[b];
        weighted.transfer[a][b].us_per_byte *= w[b];
      }
      for (auto* t : {&weighted.from_host[a], &weighted.to_host[a]}) {
        t->latency_us *= w[a];
        t->us_per_byte *= w[a];
      }
    }
    consider(place_by_cost(g, weighted, from));
  }
  return start;
}

} // namespace troupe::graph
