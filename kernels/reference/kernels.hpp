#pragma once
/// The reference kernels: a plain, obviously-correct implementation of every supported op,
/// the oracle every device is tested against. Kernels read op attributes directly (ONNX
/// semantics at the model's opset) and write pre-allocated outputs.
#include <string>
#include <vector>

#include <troupe/tensor.hpp>

#include "graph/ir.hpp"

namespace troupe::kernels::reference {

using kernel_fn = void (*)(const graph::Op& op, const std::vector<Tensor>& in, std::vector<Tensor>& out);

/// The kernel for an op type, or nullptr. Omitted optional inputs arrive as empty Tensors.
kernel_fn find_kernel(const std::string& op_type);
/// Every op type with a reference kernel, sorted.
std::vector<std::string> supported_ops();

/// Applies op.attrs "activation"/"activation_params" (set by graph::fuse_activations) in place.
void apply_fused_activation(const graph::Op& op, Tensor& t);

/// Runs one op: allocates outputs from the graph's inferred types/shapes, then the kernel.
void evaluate(const graph::Op& op, const std::vector<Tensor>& in, std::vector<Tensor>& out);

} // namespace troupe::kernels::reference
