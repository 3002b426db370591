#pragma once
/// A minimum s-t cut of a directed network with real capacities (Dinic's maximum flow): what
/// the placement by cost (graph/cost_placement) solves to split ops between two devices.
#include <vector>

namespace troupe::graph {

class flow_network {
public:
  explicit flow_network(int nodes = 0) : adjacency_(static_cast<std::size_t>(nodes)) {}

  int add_node();
  int nodes() const { return static_cast<int>(adjacency_.size()); }
  /// An edge `from` -> `to`; a capacity of `infinite` or more is never cut.
  void add_edge(int from, int to, double capacity);
  /// The maximum flow from `s` to `t` (at least `infinite` when every cut holds an edge that is
  /// never cut). Afterwards source_side tells the side of each node in a minimum cut.
  double max_flow(int s, int t);
  /// After max_flow: whether `v` is reachable from s in the residual network (s's side).
  bool source_side(int v) const { return reached_[static_cast<std::size_t>(v)] >= 0; }

  /// Capacities at or above this are uncuttable; finite costs must stay far below it.
  static constexpr double infinite = 1e18;

private:
  struct edge {
    int to;
    int reverse; ///< index of the reverse edge in adjacency_[to]
    double capacity;
  };
  bool levels_from(int s, int t);
  double push(int v, int t, double limit);

  std::vector<std::vector<edge>> adjacency_;
  std::vector<int> reached_; ///< BFS level from s; -1 when not reached
  std::vector<std::size_t> next_;
};

} // namespace troupe::graph
