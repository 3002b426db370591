#pragma once
/// Graph rewrites run before compilation. Each keeps the graph's inputs, outputs and
/// the friendly names of the ops that survive.
#include "graph/ir.hpp"

namespace troupe::graph {

/// Every rewrite below, in the order compiles run them (graph/rewrite_pipeline.cpp). The graph
/// must be shape-inferred.
void rewrite(Graph& g);

/// BatchNormalization (inference form) whose input is a Conv used only by it: scale and shift
/// fold into the Conv's weights and bias.
void fold_batch_norm(Graph& g);

/// Add (or Sub) of a constant that is uniform over each channel, read only by an inference
/// BatchNormalization, folds into the BN's mean: BN(x + c) is BN(x) with mean - c. Runs after
/// fold_batch_norm so that it never hands a bias to a ConvTranspose (oneDNN 2.6's
/// deconvolution is many times slower with one); det's head (ConvTranspose, bias Add, BN,
/// Relu) keeps one BN then, which the CPU runs on the blocked layout with the Relu fused.
void fold_shift_into_batch_norm(Graph& g);

/// Mul / Div / Add / Sub of a Conv's output (its only reader) by a constant that is uniform
/// over each output channel (a scalar or [OC, 1, 1]) fold into the Conv's weights and bias;
/// chains (conv * s + t) fold one after the other.
void fold_conv_affine(Graph& g);

/// Mul / Div of a Conv's input by a constant that is uniform over each input channel (a scalar
/// or [IC, 1, 1]), when nothing else reads the product, fold into the Conv's weights:
/// conv(x * s, W) = conv(x, W * s) per input channel, exact with zero padding too. A
/// preprocessing scale (PrePostProcessor's scale()) costs nothing then.
void fold_conv_input_scale(Graph& g);

/// Relu, Sigmoid, Tanh, HardSigmoid, HardSwish, Clip (constant bounds), LeakyRelu fold into the
/// preceding Conv/ConvTranspose/MatMul/Gemm/Add when it has no other reader: the producer gets
/// attrs "activation" (op type) and "activation_params" (floats: alpha, beta / min, max).
/// Runs eliminate_identities and fuse_hardswish first, so the fused patterns fold too.
void fuse_activations(Graph& g);

/// GELU spelled in elementary ops, x * 0.5 * (1 + Erf(x / sqrt 2)) or with 0.5 * (1 + Tanh(sqrt(2
/// / pi) * (x + 0.044715 x^3))) (x^3 as Pow or x * x * x; the factors in any order and
/// grouping, / sqrt 2 or * 1 / sqrt 2), becomes one "Gelu" op (approximate "none" / "tanh") when
/// its intermediates have no other reader and share the root's affinity.
void fuse_gelu(Graph& g);

/// Layer normalization spelled out as exporters write it before opset 17: ReduceMean(x) over
/// trailing axes, d = x - mean, ReduceMean(Pow(d, 2) or d * d), Sqrt(var + eps), d / that,
/// optionally * gamma and + beta (constants over the normalized dims), becomes one
/// LayerNormalization (scale of ones without gamma) when the intermediates have no other reader
/// and share the Div's affinity.
void fuse_layer_norm(Graph& g);

/// Before opset 7, a PRelu's constant per-channel slope [C] (axis 1, no broadcasting rule)
/// becomes [C, 1, ..., 1] against its input's rank: today's broadcasting, for every device.
/// Needs the input's rank (run after shape inference, which accepts the legacy form).
void upgrade_legacy_prelu(Graph& g);

/// A PRelu with one constant slope for every element becomes LeakyRelu(alpha = slope): the
/// same values, and an activation the devices fuse into the op before it.
void scalar_prelu_as_leaky_relu(Graph& g);

/// ReduceMean / ReduceMax over every spatial axis of a rank >= 4 map (keepdims) becomes GlobalAveragePool /
/// GlobalMaxPool: how IR spells the global pools, computed by the pooling kernels again.
void reduce_as_global_pool(Graph& g);

/// Removes Identity and inference-mode Dropout (mask unused); a graph output keeps its name.
void eliminate_identities(Graph& g);

/// Rewrites x * HardSigmoid(x) (alpha 1/6, beta 1/2) and x * Clip(x + 3, 0, 6) / 6 (PP-OCR's
/// exported hard-swish) into one "HardSwish" op when the intermediates have no other reader.
void fuse_hardswish(Graph& g);

} // namespace troupe::graph
