#pragma once
/// Which version of an ai.onnx op a model's opset means, and whether troupe knows it: an op
/// whose version is newer than troupe implements must be an error naming it, never a run
/// under the older semantics.
#include <cstdint>
#include <string>

namespace troupe::graph {

/// The newest ai.onnx opset whose op versions this reader knows: opsets up to 17 from the
/// ONNX library's schemas (Debian's libonnx 1.12), 18 to 20 from a table (op_versions.cpp).
inline constexpr int64_t newest_known_opset = 20;

/// The version (the opset that introduced it) of op `type` at `opset`; 0 when ONNX has no such
/// op at that opset (the caller's later checks name an unknown op type).
int64_t op_version(const std::string& type, int64_t opset);

/// Empty, or why the op of `type` at the model's `opset` cannot be read: the opset is newer
/// than this reader knows, or the op's version is newer than troupe implements.
std::string check_op_version(const std::string& type, int64_t opset);

} // namespace troupe::graph
