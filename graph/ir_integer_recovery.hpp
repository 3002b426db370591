#pragma once
/// Internal to the IR reader: onnxruntime's quantize_dynamic ops back from the arithmetic IR
/// spells them in (ir_integer_recovery.cpp).
#include <map>
#include <optional>
#include <string>

#include "graph/ir_op_mapping.hpp"

namespace troupe::graph::ir {

/// MatMulInteger (conv false) or ConvInteger (with `conv_attrs`) of the u8/i8 values behind the
/// i32 operands `a` and `w` of an IR MatMul or Convolution, emitted through `b`; nullopt when the
/// operands are not of the form Convert(q) [- zero point].
std::optional<ValueId> integer_product(builder& b, ValueId a, ValueId w, const std::map<std::string, AttributeValue>& conv_attrs,
                                       bool conv);

/// Replaces each DynamicQuantizeLinear written as arithmetic (ir_writer_quantize.cpp) by the op;
/// true when one was. The arithmetic left unread is for the caller to prune.
bool recover_dynamic_quantize(Graph& g);

} // namespace troupe::graph::ir
