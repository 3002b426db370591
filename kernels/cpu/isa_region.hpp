#pragma once
/// TROUPE_ISA_BEGIN("avx512f,avx512bw") ... TROUPE_ISA_END: the functions between are compiled
/// for that instruction set, over the library's x86-64 baseline (a runtime check chooses them),
/// with GCC (target pragmas) or clang (a target attribute on every function in the region:
/// the fuzz build). GCC 12 warns about the undefined pass-through operand inside its own AVX-512
/// intrinsics (GCC bug 105593), not about this code: skipped inside the region.
#define TROUPE_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define TROUPE_ISA_BEGIN(isa) TROUPE_PRAGMA(clang attribute push(__attribute__((target(isa))), apply_to = function))
#define TROUPE_ISA_END TROUPE_PRAGMA(clang attribute pop)
#else
#define TROUPE_ISA_BEGIN(isa)                                                                                        \
  TROUPE_PRAGMA(GCC push_options)                                                                                    \
  TROUPE_PRAGMA(GCC target(isa))                                                                                     \
  TROUPE_PRAGMA(GCC diagnostic push)                                                                                 \
  TROUPE_PRAGMA(GCC diagnostic ignored "-Wmaybe-uninitialized")                                                      \
  TROUPE_PRAGMA(GCC diagnostic ignored "-Wuninitialized")
#define TROUPE_ISA_END TROUPE_PRAGMA(GCC diagnostic pop) TROUPE_PRAGMA(GCC pop_options)
#endif
