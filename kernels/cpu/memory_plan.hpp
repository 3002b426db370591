#pragma once
/// The memory plan of a CPU plan: every intermediate buffer gets an offset in one arena per
/// clone, and two buffers share bytes only when no step uses both while both are live (a
/// buffer lives from the first step that touches it to the last; graph outputs to the end).
/// det 640x640's 329 MB of intermediates fit in a small fraction of that: less to allocate
/// per stream, fewer pages to touch, warmer caches.
#include "kernels/cpu/plan.hpp"

namespace troupe::kernels::cpu {

/// Sets each arena buffer's offset and the plan's arena size. Constants, graph inputs, graph
/// outputs (written into the run's output tensors) and empty buffers stay outside (offset -1).
void plan_memory(plan& p);

} // namespace troupe::kernels::cpu
