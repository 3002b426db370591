#pragma once
/// Internal to the IR writer: the layers and edges being written, and the emitter through which
/// an ONNX op's mapping (ir_writer_ops.cpp) adds them.
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph::ir {

/// An output port of a written layer.
struct out_ref {
  int64_t layer = -1;
  int64_t port = -1;
  element_type type = element_type::undefined;
  PartialShape shape = PartialShape::unknown_rank();
};

struct written_port {
  int64_t id = 0;
  element_type type = element_type::undefined;
  PartialShape shape;
  std::vector<std::string> names;
  std::string layout = {}; ///< rt_info layout of a Parameter's output or a Result's input, "" none
};

struct written_layer {
  int64_t id = 0;
  std::string name, type, version;
  std::vector<std::pair<std::string, std::string>> data;
  std::vector<written_port> inputs, outputs;
};

using attrs = std::vector<std::pair<std::string, std::string>>;

/// "1,2,3"
std::string join(const std::vector<int64_t>& v);
std::string number(double v);

class emitter {
public:
  emitter(const Graph& g, std::string& weights) : g_(g), weights_(weights) {}

  /// The port holding graph value v (a Const layer is written on first use).
  out_ref value(ValueId v);
  /// A layer; returns its output ports. Named after the op being written (set by begin()).
  std::vector<out_ref> layer(const std::string& type, const std::string& version, attrs data,
                             const std::vector<out_ref>& inputs,
                             const std::vector<std::pair<element_type, PartialShape>>& outputs);
  out_ref layer1(const std::string& type, const std::string& version, attrs data, const std::vector<out_ref>& inputs,
                 element_type t, PartialShape s) {
    return layer(type, version, std::move(data), inputs, {{t, std::move(s)}}).front();
  }
  out_ref constant(const Tensor& t, const std::string& name = "");
  out_ref i64s(const std::vector<int64_t>& v);
  out_ref i64_scalar(int64_t v);
  out_ref scalar(double v, element_type t);
  /// Graph value v is the port r (its name becomes the port's tensor name).
  void bind(ValueId v, const out_ref& r);
  /// Whether v is written already (a writer may write a later op's output with its own).
  bool is_bound(ValueId v) const { return bound_.count(v) != 0; }

  /// Starts writing `op`: layers are named after it; the one bound to its first output gets
  /// its name exactly.
  void begin(const Op& op);
  void end();

  out_ref parameter(ValueId v);
  void result(ValueId v, const std::string& name);

  const std::vector<written_layer>& layers() const { return layers_; }
  struct edge { int64_t from_layer, from_port, to_layer, to_port; };
  const std::vector<edge>& edges() const { return edges_; }
  const Graph& graph() const { return g_; }

private:
  const Graph& g_;
  std::string& weights_;
  std::vector<written_layer> layers_;
  std::vector<edge> edges_;
  std::map<ValueId, out_ref> bound_;
  const Op* op_ = nullptr;
  std::size_t op_first_layer_ = 0;
  int counter_ = 0;
  std::map<std::string, int> used_names_;
  std::string unique(const std::string& base);
};

/// Writes one op; throws naming the op when it has no IR equivalent.
using op_writer = std::function<void(emitter&, const Op&)>;
const std::map<std::string, op_writer>& op_writers();
/// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger (ir_writer_quantize.cpp).
void add_quantize_writers(std::map<std::string, op_writer>& m);
/// An operand of an integer product: Convert(q, i32), minus Convert(zp, i32) when zp is given
/// (a constant zero point reshaped to `zp_shape` unless that is empty).
out_ref integer_operand(emitter& e, ValueId q, ValueId zp, const Shape& zp_shape);

} // namespace troupe::graph::ir
