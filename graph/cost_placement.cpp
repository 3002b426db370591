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

std::vector<crossing> crossings_of(const Graph& g, const placement_costs& c, const std::vector<int>& device_of) {
  std::vector<crossing> r;
  for (const auto& u : uses_of(g)) {
    const int from = u.producer == host ? host : device_of[static_cast<std::size_t>(u.producer)];
    for (int to : reader_devices(u, device_of))
      if (to != from) r.push_back({u.value, from, to, u.bytes, transfer_us(c, from, to, u.bytes)});
  }
  return r;
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

} // namespace troupe::graph
