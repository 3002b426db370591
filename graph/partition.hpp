#pragma once
/// HETERO's partitioner: ops placed on devices -> subgraphs, one device each, and the tensors
/// between them. The subgraphs are always acyclic, whatever the placement: each op gets a
/// rank, the most device changes on any path from the graph inputs to it, and the ops of one
/// device and one rank form one subgraph. Every edge between two subgraphs then goes to a
/// higher rank, so ordering the subgraphs by rank is a topological order (OpenVINO's HETERO
/// could fail with "Cannot sort subgraphs!"; here it cannot happen).
#include <string>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph {

struct subgraph_part {
  std::string device;
  int rank = 0;
  std::vector<int> ops;         ///< indices into g.ops, ascending (topological)
  std::vector<ValueId> inputs;  ///< non-constant values read here and produced elsewhere, in first-use order
  std::vector<ValueId> outputs; ///< values produced here that another part reads or that are graph outputs
};

struct partition {
  std::vector<subgraph_part> parts; ///< topological: a part reads only graph inputs and earlier parts
};

/// `device_of[i]` is the device of g.ops[i]. Graph outputs that no op produces (a graph input
/// or a constant given straight back) belong to no part: the caller serves them.
partition partition_graph(const Graph& g, const std::vector<std::string>& device_of);

/// A standalone graph of one part: its inputs are part.inputs (names, types and shapes kept),
/// the constants it reads are copied, its outputs are part.outputs in that order.
Graph extract_part(const Graph& g, const subgraph_part& part);

} // namespace troupe::graph
