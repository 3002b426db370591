#pragma once
/// Whether a tensor fits a model's port: shared by InferRequest::set_tensor and the CAF model
/// actor (troupe/caf.hpp), so both reject the same tensors with the same words.
#include <troupe/model.hpp>
#include <troupe/tensor.hpp>

#include <vector>

namespace troupe {

/// Checks a tensor against a port: not empty, element type, rank, static dims. Throws
/// troupe::Exception naming the port (`kind` is "input" or "output").
void check_tensor(const char* kind, const Port& p, const Tensor& t);

/// Dynamic dims that the model names alike (ONNX dim_params: input_ids and attention_mask both
/// [batch, sequence]) must have one value across the inputs: else a troupe::Exception naming
/// both inputs, the dim and the two values. Inputs not set (empty) are skipped.
void check_named_dims(const std::vector<Port>& ports, const std::vector<Tensor>& inputs);

} // namespace troupe
