#include "kernels/cpu/recurrent_packing.hpp"

#include <algorithm>

namespace troupe::kernels::cpu {

Tensor pack_gate_columns(const Tensor& m, const std::vector<int64_t>& source_row, int64_t columns, int64_t width) {
  const Shape& s = m.get_shape();
  const int64_t dirs = s[0], rows = s[1], k = s[2], blocks = columns / width;
  Tensor t(element_type::f32, Shape{dirs, blocks, k, width});
  const float* src = m.data<float>();
  float* dst = t.data<float>();
  std::fill(dst, dst + t.get_size(), 0.0f);
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t c = 0; c < std::min<int64_t>(columns, static_cast<int64_t>(source_row.size())); ++c) {
      const int64_t r = source_row[static_cast<std::size_t>(c)];
      if (r < 0) continue;
      for (int64_t i = 0; i < k; ++i) dst[((d * blocks + c / width) * k + i) * width + c % width] = src[(d * rows + r) * k + i];
    }
  return t;
}

std::vector<int64_t> gate_rows(int64_t first, int64_t n) {
  std::vector<int64_t> r(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = first + i;
  return r;
}

} // namespace troupe::kernels::cpu
