#include "tools/seeded_generator.hpp"

#include <cstring>

#include "tools/element_convert.hpp"

namespace troupe::cli {

uint32_t seeded_generator::next_u32() {
  // mulberry32, as scripts/reference/ort_reference.js writes it (32-bit wrap-around arithmetic).
  state_ += 0x6D2B79F5u;
  uint32_t t = (state_ ^ (state_ >> 15)) * (1u | state_);
  t = (t + ((t ^ (t >> 7)) * (61u | t))) ^ t;
  return t ^ (t >> 14);
}

void seeded_generator::fill(Tensor& t) {
  const int64_t n = t.get_size();
  if (t.get_element_type() == element_type::f32) {
    auto* p = t.data<float>();
    for (int64_t i = 0; i < n; ++i) p[i] = next_float();
    return;
  }
  // Other types: the float draws converted (f64 widens them exactly, f16/bf16 round them,
  // integers truncate them to 0 as bench.js's typed arrays do); booleans stay false.
  Tensor draws(element_type::f32, t.get_shape());
  auto* p = draws.data<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = next_float();
  if (t.get_element_type() == element_type::boolean || !convertible(t.get_element_type())) {
    std::memset(t.data(), 0, t.get_byte_size());
    return;
  }
  auto converted = convert(draws, t.get_element_type());
  std::memcpy(t.data(), converted.data(), t.get_byte_size());
}

} // namespace troupe::cli
