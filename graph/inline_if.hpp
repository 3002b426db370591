#pragma once
/// If with a constant condition replaced by the ops of the branch it takes. A condition often
/// folds once shapes are known (an exporter's `if x.shape[1] > n`, compiled per input shape)
/// or once a deciding input is fixed; inlined, the branch's ops run on the device's own kernels
/// instead of a nested interpreter on the reference kernels at every inference.
#include "graph/ir.hpp"

namespace troupe::graph {

/// Inlines every If whose condition is a constant one-element bool; true when any was. The
/// branch's ops keep their names under the If's ("if/then_add") and take the If's runtime
/// info (affinity) where they have none; a branch output that is no op's output of its own (a
/// captured value, a constant, an output listed twice) reaches the If's output through an
/// Identity. Shapes of the new values are unknown: infer them again after.
bool inline_constant_ifs(Graph& g);

} // namespace troupe::graph
