#pragma once
/// The op domains troupe runs: ai.onnx (written "" or "ai.onnx") and, for the detection heads
/// of OpenVINO's models (read from IR, or from ONNX files that name the domain as OpenVINO's
/// ONNX frontend does), org.openvinotoolkit. One check for the shape rules, the reference
/// kernels and the CPU, so that they agree on what a graph may hold.
#include <string>
#include <string_view>

#include "graph/ir.hpp"

namespace troupe::graph {

inline constexpr std::string_view openvino_domain = "org.openvinotoolkit";

/// Whether `type` is one of the org.openvinotoolkit ops troupe runs.
bool is_openvino_op(std::string_view type);

/// Why troupe cannot run op's (domain, type) pair; "" when it can be looked up by type: an
/// ai.onnx op, or one of is_openvino_op's in org.openvinotoolkit.
std::string domain_refusal(const Op& op);

} // namespace troupe::graph
