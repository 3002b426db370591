#pragma once
/// Seeded uniform float32 tensors for tests and benchmarks (the same seed, the same tensor).
#include <random>

#include <troupe/tensor.hpp>

namespace troupe::tests {

inline Tensor random_tensor(const Shape& s, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(element_type::f32, s);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.get_size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

} // namespace troupe::tests
