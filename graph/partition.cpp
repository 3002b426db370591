#include "graph/partition.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <troupe/exception.hpp>

namespace troupe::graph {

partition partition_graph(const Graph& g, const std::vector<std::string>& device_of) {
  if (device_of.size() != g.ops.size())
    throw Exception("partition: " + std::to_string(device_of.size()) + " placements for " +
                    std::to_string(g.ops.size()) + " ops");
  const auto producer = g.producers();
  std::vector<int> rank(g.ops.size(), 0);
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    for (auto v : g.ops[i].inputs) {
      if (v == no_value) continue;
      const int p = producer[static_cast<std::size_t>(v)];
      if (p < 0) continue;
      const auto pi = static_cast<std::size_t>(p);
      rank[i] = std::max(rank[i], rank[pi] + (device_of[pi] != device_of[i] ? 1 : 0));
    }
  // One part per (rank, device), ordered by rank (then by first op, for a stable order).
  std::map<std::pair<int, std::string>, std::size_t> index;
  std::vector<std::pair<std::pair<int, int>, std::size_t>> order; // ((rank, first op), part)
  partition r;
  std::vector<int> part_of(g.ops.size());
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    auto key = std::make_pair(rank[i], device_of[i]);
    auto [it, fresh] = index.try_emplace(key, r.parts.size());
    if (fresh) {
      r.parts.push_back({device_of[i], rank[i], {}, {}, {}});
      order.push_back({{rank[i], static_cast<int>(i)}, it->second});
    }
    r.parts[it->second].ops.push_back(static_cast<int>(i));
  }
  std::sort(order.begin(), order.end());
  std::vector<subgraph_part> sorted;
  std::vector<int> renumber(r.parts.size());
  for (const auto& [key, p] : order) {
    renumber[p] = static_cast<int>(sorted.size());
    sorted.push_back(std::move(r.parts[p]));
  }
  r.parts = std::move(sorted);
  for (std::size_t p = 0; p < r.parts.size(); ++p)
    for (int op : r.parts[p].ops) part_of[static_cast<std::size_t>(op)] = static_cast<int>(p);

  // Inputs: values read by a part's op that the part does not produce. Outputs: values read
  // by another part or by the graph's outputs.
  std::vector<std::set<ValueId>> exported(r.parts.size());
  for (std::size_t p = 0; p < r.parts.size(); ++p) {
    auto& part = r.parts[p];
    std::set<ValueId> seen;
    for (int op : part.ops)
      for (auto v : g.ops[static_cast<std::size_t>(op)].inputs) {
        if (v == no_value || g.is_constant(v) || seen.count(v)) continue;
        const int prod = producer[static_cast<std::size_t>(v)];
        if (prod >= 0 && part_of[static_cast<std::size_t>(prod)] == static_cast<int>(p)) continue;
        seen.insert(v);
        part.inputs.push_back(v);
        if (prod >= 0) exported[static_cast<std::size_t>(part_of[static_cast<std::size_t>(prod)])].insert(v);
      }
  }
  for (auto v : g.outputs) {
    const int prod = producer[static_cast<std::size_t>(v)];
    if (prod >= 0 && !g.is_constant(v)) exported[static_cast<std::size_t>(part_of[static_cast<std::size_t>(prod)])].insert(v);
  }
  // Each part's outputs in the order its ops produce them.
  for (std::size_t p = 0; p < r.parts.size(); ++p)
    for (int op : r.parts[p].ops)
      for (auto v : g.ops[static_cast<std::size_t>(op)].outputs)
        if (v != no_value && exported[p].count(v)) r.parts[p].outputs.push_back(v);
  return r;
}

Graph extract_part(const Graph& g, const subgraph_part& part) {
  Graph out;
  out.opset = g.opset;
  out.source = g.source;
  std::map<ValueId, ValueId> id; // g's value -> out's value
  auto map_value = [&](ValueId v) -> ValueId {
    if (v == no_value) return no_value;
    if (auto it = id.find(v); it != id.end()) return it->second;
    return id[v] = out.add_value(g.value(v));
  };
  for (auto v : part.inputs) {
    const auto& val = g.value(v);
    id[v] = out.add_input(val.name, val.type, val.shape);
  }
  for (int op : part.ops) {
    Op copy = g.ops[static_cast<std::size_t>(op)];
    for (auto& v : copy.inputs) v = map_value(v);
    for (auto& v : copy.outputs) v = map_value(v);
    out.ops.push_back(std::move(copy));
  }
  for (auto v : part.outputs) out.outputs.push_back(map_value(v));
  return out;
}

} // namespace troupe::graph
