#pragma once
/// Internal to the IR reader: one IR layer as read from the .xml, and the builder through which
/// a mapping turns it into ONNX ops of the graph. Each op family registers its mappings in a
/// file of its own (ir_op_mapping_*.cpp).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph::ir {

/// The opset the reader's graphs are written in: LayerNormalization and the opset-13 input
/// forms (Squeeze, Unsqueeze, Split, ReduceSum axes as inputs) are there.
inline constexpr int64_t graph_opset = 17;

struct port {
  int64_t id = 0;
  element_type type = element_type::undefined; ///< from `precision`; undefined when absent
  PartialShape shape = PartialShape::unknown_rank();
  std::vector<std::string> names; ///< tensor names (`names` attribute, v11)
  std::string layout;             ///< rt_info layout, "" when none
};

/// A body of If, TensorIterator or Loop, read as a graph of its own: which of its inputs each
/// Parameter layer became, which of its outputs each Result layer.
struct body {
  std::shared_ptr<Graph> graph;
  std::map<int64_t, std::size_t> parameter; ///< Parameter layer id -> graph input index
  std::map<int64_t, std::size_t> result;    ///< Result layer id -> graph output index
};

/// One entry of a port map: the layer's port `external` is the body's layer `internal`; a
/// sliced input or concatenated output has an axis (and start, end, stride, part_size).
struct port_mapping {
  int64_t external = -1, internal = -1;
  std::optional<int64_t> axis;
  int64_t start = 0, end = -1, stride = 1, part_size = 1;
  std::string purpose; ///< Loop's "current_iteration", "execution_condition"
};

struct layer {
  int64_t id = 0;
  std::string name, type, version;
  std::map<std::string, std::string> data; ///< the <data> element's attributes
  std::vector<port> inputs, outputs;
  std::map<std::string, std::string> rt_info; ///< fused_names, ...
  /// Sub-graph layers: bodies by element name ("body", "then_body", "else_body"), port maps by
  /// element name ("port_map", "then_port_map", ...) as (inputs, outputs), back edges as
  /// (Result layer id, Parameter layer id).
  std::map<std::string, body> bodies;
  std::map<std::string, std::pair<std::vector<port_mapping>, std::vector<port_mapping>>> port_maps;
  std::vector<std::pair<int64_t, int64_t>> back_edges;
};

/// How every reader error names a layer: "layer 12 'conv1' (Convolution, opset1)".
std::string describe(const layer& l);

/// Builds the ops of one layer. Attribute getters parse the <data> strings and fail naming the
/// layer on bad text; op() appends an ONNX op whose output is a fresh value.
class builder {
public:
  builder(Graph& g, const layer& l, std::vector<ValueId> in, std::string where);

  const layer& l;
  Graph& g;

  // <data> attributes
  bool has(const std::string& k) const { return l.data.count(k) != 0; }
  std::string str(const std::string& k, const std::string& def) const;
  std::string str(const std::string& k) const; ///< required
  int64_t i64(const std::string& k, int64_t def) const;
  int64_t i64(const std::string& k) const;
  double f64(const std::string& k, double def) const;
  double f64(const std::string& k) const;
  bool flag(const std::string& k, bool def) const;
  std::vector<int64_t> ints(const std::string& k, std::vector<int64_t> def = {}) const;
  std::vector<int64_t> ints_required(const std::string& k) const;
  /// A comma-separated list of numbers ("" or absent: none).
  std::vector<float> floats(const std::string& k) const;

  // inputs
  std::size_t inputs() const { return in_.size(); }
  ValueId input(std::size_t i) const; ///< fails when the port is absent
  const port& in_port(std::size_t i) const { return l.inputs.at(i); }
  const port& out_port(std::size_t i) const { return l.outputs.at(i); }
  /// Element type of input i (its value's, else its port's).
  element_type in_type(std::size_t i) const;
  /// Rank of input i from its port (or its constant); fails when unknown.
  std::size_t in_rank(std::size_t i) const;
  const Tensor* constant(std::size_t i) const; ///< nullptr unless input i is a constant
  /// The integers of constant input i; fails naming `what` when it is computed at run time.
  std::vector<int64_t> const_ints(std::size_t i, const std::string& what) const;
  std::vector<double> const_doubles(std::size_t i, const std::string& what) const;
  /// The values and shape of input i when it is a constant or a float Convert of one (f16 IRs
  /// convert their constants to f32), nullopt otherwise: for rewrites that need the numbers.
  std::optional<std::pair<std::vector<double>, Shape>> known_values(std::size_t i) const;

  // emitting
  ValueId op(const std::string& type, std::vector<ValueId> inputs, std::map<std::string, AttributeValue> attrs = {});
  std::vector<ValueId> op_n(const std::string& type, std::vector<ValueId> inputs,
                            std::map<std::string, AttributeValue> attrs, std::size_t outputs,
                            const std::string& domain = ""); ///< "": ai.onnx
  ValueId constant(Tensor t);
  ValueId i64s(const std::vector<int64_t>& v); ///< 1-D i64 constant
  ValueId i64_scalar(int64_t v);
  ValueId scalar(double v, element_type t); ///< 0-D constant of type t
  /// A constant's values as a 0-D or 1-D tensor of type t (f32, f16, f64, integers).
  static Tensor make_tensor(const std::vector<double>& v, element_type t, Shape shape);

  [[noreturn]] void fail(const std::string& why) const;
  const std::string& where() const { return where_; }
  /// Output ports the mapping does not produce (their consumers are refused), by index.
  std::vector<std::size_t> unsupported_outputs;
  /// Indices into g.ops of the ops this layer emitted.
  std::vector<std::size_t> emitted;

private:
  std::vector<ValueId> in_;
  std::string where_;
  int counter_ = 0;
};

/// Maps one layer; returns one value per output port (no_value for an output not produced).
using mapper = std::function<std::vector<ValueId>(builder&)>;

struct op_entry {
  std::vector<std::string> versions; ///< "opset1", ...
  mapper map;
};

using op_table = std::map<std::string, std::vector<op_entry>>;

void add_elementwise_ops(op_table& t);
void add_nn_ops(op_table& t);
void add_tensor_ops(op_table& t);
void add_detection_ops(op_table& t);
void add_recurrent_ops(op_table& t);
void add_control_ops(op_table& t);

/// Every mapping, keyed by IR type.
const op_table& ops();
/// The mapping for (type, version), or nullptr.
const mapper* find_mapper(const std::string& type, const std::string& version);

/// IR precision ("FP32", "I64", "BOOL") or element_type ("f32", "i64", "boolean") text ->
/// element type; undefined for "dynamic"/"undefined"; nullopt when unknown or unsupported
/// (u1, i4, u4, nf4, ...).
std::optional<element_type> parse_element_type(const std::string& text);
/// The last op of `g` writing value `v`, or nullptr (graph inputs, constants): the mappings'
/// look back at what earlier layers emitted.
const Op* producer_of(const Graph& g, ValueId v);
/// A constant's values as doubles; nullopt for element types without numbers (strings, ...).
std::optional<std::vector<double>> doubles_of(const Tensor& t);
/// "FP32", "I64", ... for port precisions of the writer.
std::string precision_name(element_type t);

} // namespace troupe::graph::ir
