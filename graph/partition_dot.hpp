#pragma once
/// Graphviz DOT of a HETERO split (hetero_subgraphs_<model>.dot): one box per subgraph (its
/// device, op count and first ops), filled with its device's colour, one ellipse per graph input
/// and output, and an edge per tensor that travels between them, labelled with name and shape.
#include <map>
#include <string>

#include "graph/partition.hpp"

namespace troupe::graph {

/// `notes`: by value name (the fusion passes renumber values, and keep names), text added to
/// the label of each edge carrying that value (HETERO_PLACEMENT=COST: its bytes and predicted
/// crossing time); `title`: the picture's label (the prediction).
std::string partition_to_dot(const Graph& g, const partition& p, const std::map<std::string, std::string>& notes = {},
                             const std::string& title = "");

} // namespace troupe::graph
