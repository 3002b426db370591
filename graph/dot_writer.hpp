#pragma once
/// Graphviz DOT of a graph: one box per op (type, friendly name, output shapes), one ellipse per
/// graph input and output; constants are left out to keep big models readable.
#include <string>

#include "graph/ir.hpp"

namespace troupe::graph {

std::string to_dot(const Graph& g);

} // namespace troupe::graph
