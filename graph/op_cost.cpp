#include "graph/op_cost.hpp"

#include <algorithm>
#include <string>

namespace troupe::graph {

namespace {

/// Elements of a static shape; -1 when it is not static.
double elements(const PartialShape& s) {
  if (!s.is_static()) return -1;
  double n = 1;
  for (int64_t d : s.dims) n *= static_cast<double>(d);
  return n;
}

const PartialShape& shape_of(const Graph& g, ValueId v) { return g.value(v).shape; }

bool has(const std::string& type, const char* part) { return type.find(part) != std::string::npos; }

/// Multiply-adds of the op, 0 when it has none or its shapes are not known.
double macs(const Graph& g, const Op& op) {
  if (op.inputs.size() < 2 || op.outputs.empty() || op.inputs[0] == no_value || op.inputs[1] == no_value) return 0;
  const PartialShape& a = shape_of(g, op.inputs[0]);
  const PartialShape& w = shape_of(g, op.inputs[1]);
  const double out = elements(shape_of(g, op.outputs[0]));
  if (out < 0 || !a.is_static() || !w.is_static() || a.dims.empty() || w.dims.empty()) return 0;
  double per = 1; // weights per output (Conv) or per input (ConvTranspose) element
  for (std::size_t i = 1; i < w.dims.size(); ++i) per *= static_cast<double>(w.dims[i]);
  if (has(op.type, "ConvTranspose")) return elements(a) * per;
  if (has(op.type, "Conv")) return out * per;
  if (has(op.type, "MatMul")) return out * static_cast<double>(a.dims.back());
  if (has(op.type, "Gemm")) {
    const bool trans_a = op.attr_int("transA", 0) != 0;
    return out * static_cast<double>(a.dims.size() == 2 ? a.dims[trans_a ? 0 : 1] : 0);
  }
  return 0;
}

} // namespace

double value_bytes(const Graph& g, ValueId v) {
  const double n = elements(shape_of(g, v));
  return n < 0 ? 0 : n * static_cast<double>(element_size(g.value(v).type));
}

op_cost cost_of(const Graph& g, const Op& op) {
  op_cost c;
  for (ValueId v : op.inputs)
    if (v != no_value) c.bytes += value_bytes(g, v);
  double out = 0;
  for (ValueId v : op.outputs) {
    c.bytes += value_bytes(g, v);
    out += std::max(0.0, elements(shape_of(g, v)));
  }
  const double m = macs(g, op);
  c.flops = m > 0 ? 2 * m : out;
  return c;
}

} // namespace troupe::graph
