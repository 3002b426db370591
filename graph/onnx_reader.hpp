#pragma once
/// ONNX -> IR. Initializers (raw and typed fields), opset-aware attributes, graph inputs and
/// outputs with dynamic dims (dim_param kept as a symbol). Errors name the file and node.
#include <string>

#include "graph/ir.hpp"

namespace troupe::graph {

Graph read_onnx_file(const std::string& path);
/// `source` names the bytes in error messages.
Graph read_onnx_bytes(const void* data, std::size_t size, const std::string& source);

} // namespace troupe::graph

namespace troupe::graph {

/// A serialized TensorProto (the ONNX test data's input_0.pb / output_0.pb); returns its name too.
Tensor read_onnx_tensor_file(const std::string& path, std::string* name = nullptr);

} // namespace troupe::graph
