#include "graph/op_domain.hpp"

#include <array>

namespace troupe::graph {

bool is_openvino_op(std::string_view type) {
  static constexpr std::array<std::string_view, 3> ops{"DetectionOutput", "PriorBox", "PriorBoxClustered"};
  for (auto t : ops)
    if (t == type) return true;
  return false;
}

std::string domain_refusal(const Op& op) {
  const bool onnx = op.domain.empty() || op.domain == "ai.onnx";
  if (onnx && is_openvino_op(op.type))
    return "op type '" + op.type + "' is not an ai.onnx op (it is OpenVINO's: domain " + std::string(openvino_domain) + ")";
  if (onnx || (op.domain == openvino_domain && is_openvino_op(op.type))) return "";
  if (op.domain == openvino_domain)
    return "op type '" + op.type + "' of domain " + op.domain +
           " is not supported (troupe runs DetectionOutput, PriorBox and PriorBoxClustered from it)";
  return "op domain '" + op.domain + "' is not supported";
}

} // namespace troupe::graph
