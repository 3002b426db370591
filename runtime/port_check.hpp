#pragma once
/// Whether a tensor fits a model's port: shared by InferRequest::set_tensor and the CAF model
/// actor (troupe/caf.hpp), so both reject the same tensors with the same words.
#include <troupe/model.hpp>
#include <troupe/tensor.hpp>

namespace troupe {

/// Checks a tensor against a port: not empty, element type, rank, static dims. Throws
/// troupe::Exception naming the port (`kind` is "input" or "output").
void check_tensor(const char* kind, const Port& p, const Tensor& t);

} // namespace troupe
