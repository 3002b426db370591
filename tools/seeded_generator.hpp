#pragma once
/// The inputs troupe makes up when none are given: the same draws as scripts/reference/ort_reference.js, so a
/// troupe run and an onnxruntime run of one model see the same input.
#include <cstdint>

#include <troupe/tensor.hpp>

namespace troupe::cli {

/// mulberry32(12345), one draw per element in row-major order over inputs in model order,
/// value = (u32 >> 8) / 2^24. Non-float inputs take the same draw converted to their type
/// (always 0 for integers and false for booleans, since draws lie in [0,1)).
class seeded_generator {
public:
  explicit seeded_generator(uint32_t seed = 12345) : state_(seed) {}
  uint32_t next_u32();
  float next_float() { return static_cast<float>(next_u32() >> 8) / 16777216.0f; }
  void fill(Tensor& t);

private:
  uint32_t state_;
};

} // namespace troupe::cli
