#pragma once
/// TROUPE_API marks what a shared libtroupe exports: the library is built with hidden
/// visibility, so everything else (graph, kernels, actors, CAF, oneDNN) stays internal.
#if defined(__GNUC__) || defined(__clang__)
#define TROUPE_API __attribute__((visibility("default")))
#else
#define TROUPE_API
#endif

/// The private implementation types behind the public classes: never exported.
#if defined(__GNUC__) || defined(__clang__)
#define TROUPE_INTERNAL __attribute__((visibility("hidden")))
#else
#define TROUPE_INTERNAL
#endif
