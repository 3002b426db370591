#pragma once
/// Graphviz DOT of a graph: one box per op (type, friendly name, output shapes), one ellipse per
/// graph input and output; constants are left out to keep big models readable.
#include <string>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph {

/// With `device_of` (one device per op), each box is filled with its device's colour, names
/// its device and has the reason of `why_of` (when given) as its tooltip; a legend lists the
/// devices. HETERO's hetero_affinity_<model>.dot.
std::string to_dot(const Graph& g, const std::vector<std::string>* device_of = nullptr,
                   const std::vector<std::string>* why_of = nullptr);

/// A fill colour for the n-th device of a picture (a fixed palette, then round again).
const char* device_colour(std::size_t n);

/// Escapes a label for a double-quoted DOT string.
std::string dot_escape(const std::string& s);

} // namespace troupe::graph
