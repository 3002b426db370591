#include "graph/min_cut.hpp"

#include <algorithm>
#include <queue>

namespace troupe::graph {

namespace {
/// Residual capacity below this counts as none (sums of microseconds in doubles).
constexpr double tiny = 1e-9;
} // namespace

int flow_network::add_node() {
  adjacency_.emplace_back();
  return nodes() - 1;
}

void flow_network::add_edge(int from, int to, double capacity) {
  if (from == to || capacity <= 0) return;
  capacity = std::min(capacity, infinite);
  auto& out = adjacency_[static_cast<std::size_t>(from)];
  auto& in = adjacency_[static_cast<std::size_t>(to)];
  out.push_back({to, static_cast<int>(in.size()), capacity});
  in.push_back({from, static_cast<int>(out.size()) - 1, 0.0});
}

bool flow_network::levels_from(int s, int t) {
  reached_.assign(adjacency_.size(), -1);
  std::queue<int> q;
  reached_[static_cast<std::size_t>(s)] = 0;
  q.push(s);
  while (!q.empty()) {
    const int v = q.front();
    q.pop();
    for (const auto& e : adjacency_[static_cast<std::size_t>(v)])
      if (e.capacity > tiny && reached_[static_cast<std::size_t>(e.to)] < 0) {
        reached_[static_cast<std::size_t>(e.to)] = reached_[static_cast<std::size_t>(v)] + 1;
        q.push(e.to);
      }
  }
  return reached_[static_cast<std::size_t>(t)] >= 0;
}

double flow_network::push(int v, int t, double limit) {
  if (v == t) return limit;
  auto& out = adjacency_[static_cast<std::size_t>(v)];
  for (auto& i = next_[static_cast<std::size_t>(v)]; i < out.size(); ++i) {
    auto& e = out[i];
    if (e.capacity <= tiny || reached_[static_cast<std::size_t>(e.to)] != reached_[static_cast<std::size_t>(v)] + 1) continue;
    const double pushed = push(e.to, t, std::min(limit, e.capacity));
    if (pushed > tiny) {
      e.capacity -= pushed;
      adjacency_[static_cast<std::size_t>(e.to)][static_cast<std::size_t>(e.reverse)].capacity += pushed;
      return pushed;
    }
  }
  return 0;
}

double flow_network::max_flow(int s, int t) {
  double flow = 0;
  while (levels_from(s, t) && flow < infinite) {
    next_.assign(adjacency_.size(), 0);
    while (const double pushed = push(s, t, infinite)) {
      flow += pushed;
      if (flow >= infinite) break;
    }
  }
  levels_from(s, t); // the residual reach from s: the source side of a minimum cut
  return flow;
}

} // namespace troupe::graph
