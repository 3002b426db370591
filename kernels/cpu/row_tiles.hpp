#pragma once
/// Rows cut into tiles of `max_rows` and one shorter tail: a register-blocked micro-kernel
/// needs each tile's row count at compile time. Shared by the native GEMM kernels.
#include <cstdint>
#include <type_traits>

namespace troupe::kernels::cpu {

namespace detail {
template <int R, class F> void row_tail(int64_t left, int64_t r0, F& f) {
  if constexpr (R > 0) {
    if (left == R) f(std::integral_constant<int, R>{}, r0);
    else row_tail<R - 1>(left, r0, f);
  }
}
} // namespace detail

/// Calls f(std::integral_constant<int, R>{}, first_row) for each tile of R rows.
template <int max_rows, class F> void for_row_tiles(int64_t rows, F&& f) {
  int64_t r = 0;
  for (; r + max_rows <= rows; r += max_rows) f(std::integral_constant<int, max_rows>{}, r);
  detail::row_tail<max_rows - 1>(rows - r, r, f);
}

} // namespace troupe::kernels::cpu
