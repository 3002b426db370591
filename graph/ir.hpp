#pragma once
/// The model IR: a graph of ops over values. Values are named SSA edges with an element
/// type, a (possibly partial) shape and, when known at compile time, a constant tensor.
/// Ops are kept in topological order.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <troupe/element_type.hpp>
#include <troupe/partial_shape.hpp>
#include <troupe/tensor.hpp>

namespace troupe::graph {

using troupe::PartialShape;

struct Graph;

/// A subgraph attribute (If's branches, Loop's and Scan's body) is a Graph of its own, shared
/// and immutable: copying an op copies the pointer. Its inputs are the ONNX-declared ones
/// followed by one per outer-scope value it reads; the op lists those outer values as its inputs
/// after its declared ones (see subgraph_inputs_attr), so every dependency stays an op input.
using AttributeValue = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                                    std::vector<std::string>, Tensor, std::shared_ptr<const Graph>>;

/// The int attribute of an op with subgraphs counting its ONNX-declared inputs; the inputs
/// after them are the outer-scope values its subgraphs read (captures), in the order of the
/// subgraphs' trailing inputs.
inline constexpr const char* declared_inputs_attr = "troupe_declared_inputs";

struct Value {
  std::string name;
  element_type type = element_type::undefined;
  PartialShape shape = PartialShape::unknown_rank();
  std::optional<Tensor> constant; ///< set for initializers and folded values
  /// A sequence of tensors (SequenceConstruct's output, ...): `type` is its elements' type and
  /// `shape` the merge of their shapes. Only the sequence ops read one; it is never a constant.
  bool sequence = false;
  /// A model input's or output's layout as OpenVINO IR's rt_info gives it ("[N,C,H,W]"); ""
  /// when none. Kept as text: OpenVINO's names may be longer than troupe's one letter.
  std::string layout = {};
};

/// The largest dimension (and element count) a model may have: the reader refuses more, and
/// shape rules, the wire format and tensor decoding use the same bound against forged input.
inline constexpr int64_t max_dim = int64_t{1} << 40;

using ValueId = int32_t;
constexpr ValueId no_value = -1; ///< an omitted optional input

struct Op {
  std::string type;     ///< ONNX op type ("Conv"), or a fused type ("FusedConv")
  std::string domain;   ///< "" for ai.onnx
  std::string name;     ///< the friendly name: the ONNX node name, or "<type>_<index>"
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::map<std::string, AttributeValue> attrs;
  std::map<std::string, std::string> rt_info; ///< runtime info, e.g. "affinity" -> "GPU"

  bool has_attr(const std::string& k) const { return attrs.count(k) != 0; }
  int64_t attr_int(const std::string& k, int64_t def) const;
  float attr_float(const std::string& k, float def) const;
  std::string attr_string(const std::string& k, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& k, std::vector<int64_t> def = {}) const;
  std::vector<float> attr_floats(const std::string& k, std::vector<float> def = {}) const;
  /// The subgraph attribute k, or nullptr when absent.
  const Graph* attr_graph(const std::string& k) const;
  /// True when some attribute holds a subgraph (If, Loop, Scan).
  bool has_subgraphs() const;
  /// The ONNX-declared inputs (all of them for ops without subgraphs); the rest are captures.
  std::size_t declared_inputs() const;
  /// Number of inputs actually given (trailing omitted optionals excluded).
  std::size_t input_count() const;
};

struct Graph {
  std::vector<Value> values;
  std::vector<Op> ops;           ///< topological order
  std::vector<ValueId> inputs;   ///< graph inputs that are not constants
  std::vector<ValueId> outputs;
  int64_t opset = 13;            ///< ai.onnx opset the model was written for
  std::string source;            ///< file the model came from (for error messages)

  ValueId add_value(Value v);
  /// A graph input (appended to `inputs`).
  ValueId add_input(std::string name, element_type type, PartialShape shape);
  /// A constant value holding `t` (type and shape from t).
  ValueId add_constant(std::string name, Tensor t);
  ValueId find_value(const std::string& name) const; ///< no_value when absent
  const Value& value(ValueId id) const { return values.at(static_cast<std::size_t>(id)); }
  Value& value(ValueId id) { return values.at(static_cast<std::size_t>(id)); }
  bool is_constant(ValueId id) const { return id != no_value && value(id).constant.has_value(); }
  /// For each value, the index of the op producing it (-1 for graph inputs and constants).
  std::vector<int> producers() const;
  /// For each value, how many op inputs and graph outputs read it.
  std::vector<int> use_counts() const;
  /// For each value, the op reading it when that op's one input is its only use (no other
  /// reader, no graph output); -1 otherwise. What a fusion needs to take an intermediate away.
  std::vector<int> sole_readers() const;
  /// Drops ops whose outputs nobody reads and values nobody references (ids are renumbered).
  void prune();
};

/// The value of a constant named `name` holding `t`.
Value constant_value(std::string name, Tensor t);

/// "Conv node 'conv1' (op #3)" -- how every error names an op.
std::string describe(const Op& op);

} // namespace troupe::graph
