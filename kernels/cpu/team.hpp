#pragma once
/// When a kernel's loop is worth an OpenMP team. libgomp enters a parallel region even when its
/// `if` clause is false or the stream runs one thread: it allocates, sets up and frees a team
/// each time, and the allocation often makes glibc consolidate the small blocks oneDNN's
/// per-execute maps freed. At one token bert_tiny_int8 spent 13 % of its CPU time there (perf,
/// 2026-11-29: 16 DynamicQuantizeLinear and 20 integer epilogues per request, all one-thread
/// regions). Kernels branch around the region instead of using `if`.
#include <cstdint>

#include "kernels/cpu/isa_region.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace troupe::kernels::cpu {

/// The calling thread's stream's thread count (1 without OpenMP).
inline int team_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// True when `big_enough` and the calling thread's stream may run more than one thread.
inline bool team_worth(bool big_enough) { return big_enough && team_threads() > 1; }

} // namespace troupe::kernels::cpu

/// `for (int64_t i = 0; i < n; ++i) body;` over the team (static schedule) when
/// team_worth(worth), else on the calling thread alone. A macro, so the loop compiles inside the
/// caller's TROUPE_ISA region and the body inlines there.
#define TROUPE_TEAM_FOR(i, n, worth, ...)                                                                            \
  do {                                                                                                               \
    const int64_t troupe_team_n = (n);                                                                               \
    if (::troupe::kernels::cpu::team_worth(worth)) {                                                                 \
      TROUPE_PRAGMA(omp parallel for schedule(static))                                                               \
      for (int64_t i = 0; i < troupe_team_n; ++i) {                                                                  \
        __VA_ARGS__;                                                                                                 \
      }                                                                                                              \
    } else {                                                                                                         \
      for (int64_t i = 0; i < troupe_team_n; ++i) {                                                                  \
        __VA_ARGS__;                                                                                                 \
      }                                                                                                              \
    }                                                                                                                \
  } while (false)
