#pragma once
/// The small model the MULTI and remote tests spread over devices: y = relu(a + b) over
/// [1, 16], with inputs whose every output element says which request it belongs to.
#include <troupe/tensor.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "benchmarks/tiny_onnx.hpp"

namespace troupe::tests {

/// Writes the model to a temporary file named after `tag` and this process; its path.
inline std::string add_relu_model(const std::string& tag) {
  tiny_onnx::model_builder b;
  b.input("a", {1, 16}).input("b", {1, 16}).output("y", {1, 16});
  b.node("Add", {"a", "b"}, {"s"}, "add").node("Relu", {"s"}, {"y"}, "relu");
  return b.write(
      (std::filesystem::temp_directory_path() / ("troupe_" + tag + "_" + std::to_string(::getpid()) + ".onnx")).string());
}

/// Element i is v + i - 8.
inline Tensor filled(float v) {
  Tensor t(element_type::f32, {1, 16});
  for (int i = 0; i < 16; ++i) t.data<float>()[i] = v + static_cast<float>(i) - 8;
  return t;
}

/// Output element i of request r, whose inputs are filled(r) and filled(1).
inline float expected(int r, int i) {
  return std::max(0.0f, 2.0f * (static_cast<float>(i) - 8) + static_cast<float>(r) + 1);
}

} // namespace troupe::tests
