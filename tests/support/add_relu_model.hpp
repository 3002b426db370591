#pragma once
/// The small model the MULTI and remote tests spread over devices: y = relu(a + b) over
/// [1, 16], with inputs whose every output element says which request it belongs to.
#include <troupe/compiled_model.hpp>
#include <troupe/infer_request.hpp>
#include <troupe/tensor.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

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

/// Starts `n` requests at once, request r with inputs filled(r) and filled(1).
inline std::vector<InferRequest> start_requests(CompiledModel& cm, int n) {
  std::vector<InferRequest> reqs;
  for (int r = 0; r < n; ++r) {
    reqs.push_back(cm.create_infer_request());
    reqs.back().set_tensor("a", filled(static_cast<float>(r)));
    reqs.back().set_tensor("b", filled(1));
    reqs.back().start_async();
  }
  return reqs;
}

/// REQUESTS_SERVED ("DEV:N,DEV:N") as device -> requests completed.
inline std::map<std::string, uint64_t> served_counts(CompiledModel& cm) {
  std::map<std::string, uint64_t> served;
  const std::string text = cm.get_property("REQUESTS_SERVED").as_string();
  for (std::size_t at = 0; at < text.size();) {
    auto comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    const auto item = text.substr(at, comma - at);
    const auto colon = item.rfind(':');
    served[item.substr(0, colon)] = std::stoull(item.substr(colon + 1));
    at = comma + 1;
  }
  return served;
}

} // namespace troupe::tests
