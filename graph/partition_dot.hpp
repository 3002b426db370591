#pragma once
/// Graphviz DOT of a HETERO split (hetero_subgraphs_<model>.dot): one box per subgraph (its
/// device, op count and first ops), filled with its device's colour, one ellipse per graph input
/// and output, and an edge per tensor that travels between them, labelled with name and shape.
#include <string>

#include "graph/partition.hpp"

namespace troupe::graph {

std::string partition_to_dot(const Graph& g, const partition& p);

} // namespace troupe::graph
