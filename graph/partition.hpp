#pragma once
/// Splitting a placed graph into per-device subgraphs (HETERO). The parts always form a DAG,
/// whatever the placement: OpenVINO's HETERO once failed with "Cannot sort subgraphs!" when
/// grouping connected same-device ops closed a cycle through another device.
#include <string>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph {

struct subgraph_part {
  std::string device;
  std::vector<int> ops;         ///< indices into g.ops, ascending (topological)
  std::vector<ValueId> inputs;  ///< non-constant values these ops read that are produced elsewhere (graph
                                ///< inputs or other parts' outputs), in first-use order
  std::vector<ValueId> outputs; ///< values produced here that another part reads or that are graph
                                ///< outputs, in the order the ops produce them
};

struct partition {
  std::vector<subgraph_part> parts; ///< topological: a part reads only outputs of earlier parts
};

/// Groups the ops of g by device, device_of[i] being the device of g.ops[i].
///
/// Each op gets a stage, its rank: 0 without producer ops, else the largest over its producers
/// p of rank(p), plus one when p runs on another device (so: the most device changes on any
/// path into the op). One part holds the ops of one (device, rank). An edge between two parts
/// strictly increases the rank (a device change adds one; within a device a different part
/// means a larger rank), so parts in rank order are a topological order.
/// This is not always the fewest parts: x(GPU) -> y(GPU) with y also reading z(CPU) gives
/// {x} {z} {y} where {z} {x, y} would do. Such merges make a piece wait for inputs only a later
/// piece needs (x would wait for z), taking away overlap between devices; they are left out.
/// Parts come by rank, then by first op. Constants are never part inputs (extract_part copies
/// them). A graph output that is a graph input or a constant belongs to no part: the caller
/// passes it through. A graph without ops gives no parts.
partition partition_graph(const Graph& g, const std::vector<std::string>& device_of);

/// A standalone Graph for one part: its inputs are part.inputs (same names, types, shapes),
/// the constants its ops read come along (Tensor handles: the bytes are shared), its outputs
/// are part.outputs in that order; opset and source are kept. Throws when an op of the part reads a non-constant value that neither
/// an earlier op of the part produces nor part.inputs lists, or when an output is not produced
/// by its ops.
Graph extract_part(const Graph& g, const subgraph_part& part);

} // namespace troupe::graph
