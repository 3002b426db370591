#pragma once
/// The mask of the first `count` of 16 lanes (none for count <= 0, all for count >= 16): the
/// tail of a row that the AVX-512 kernels load and store masked.
#include <immintrin.h>

#include <cstdint>

namespace troupe::kernels::cpu {

inline __mmask16 first_lanes(int64_t count) {
  return static_cast<__mmask16>(count >= 16 ? 0xffff : count > 0 ? (1u << count) - 1 : 0);
}

} // namespace troupe::kernels::cpu
