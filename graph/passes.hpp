#pragma once
/// Graph rewrites run before compilation. Each keeps the graph's inputs, outputs and
/// the friendly names of the ops that survive.
#include "graph/ir.hpp"

namespace troupe::graph {

/// BatchNormalization (inference form) whose input is a Conv used only by it: scale and shift
/// fold into the Conv's weights and bias.
void fold_batch_norm(Graph& g);

/// Relu, Sigmoid, Tanh, HardSigmoid, HardSwish, Clip (constant bounds), LeakyRelu fold into the
/// preceding Conv/ConvTranspose/MatMul/Gemm/Add when it has no other reader: the producer gets
/// attrs "activation" (op type) and "activation_params" (floats: alpha, beta / min, max).
void fuse_activations(Graph& g);

} // namespace troupe::graph
