#include "graph/shape_inference.hpp"

#include <troupe/exception.hpp>

#include <algorithm>

#include "graph/op_domain.hpp"
#include "graph/sequence.hpp"
#include "graph/shape_rules.hpp"

namespace troupe::graph {

namespace detail {

const Value& infer_ctx::in(std::size_t i) const {
  if (!has(i)) fail("input " + std::to_string(i) + " is missing");
  return g.value(op.inputs[i]);
}

const Tensor* infer_ctx::data(std::size_t i) const {
  if (!has(i)) return nullptr;
  const auto& v = g.value(op.inputs[i]);
  return v.constant ? &*v.constant : nullptr;
}

const Tensor* infer_ctx::constant(std::size_t i) const {
  const Tensor* t = data(i);
  if (!t && wanted && has(i)) wanted->push_back(op.inputs[i]);
  return t;
}

namespace {
template <class T, class R> void append(const Tensor& t, std::vector<R>& r) {
  const T* p = t.data<T>();
  for (int64_t i = 0; i < t.get_size(); ++i) r.push_back(static_cast<R>(p[i]));
}

/// Copies an integer or float tensor into `r`; false for other element types.
template <class R> bool to_vector(const Tensor& t, std::vector<R>& r, bool allow_float) {
  switch (t.get_element_type()) {
  case element_type::i64: append<int64_t>(t, r); return true;
  case element_type::i32: append<int32_t>(t, r); return true;
  case element_type::i16: append<int16_t>(t, r); return true;
  case element_type::i8: append<int8_t>(t, r); return true;
  case element_type::u8: append<uint8_t>(t, r); return true;
  case element_type::u16: append<uint16_t>(t, r); return true;
  case element_type::u32: append<uint32_t>(t, r); return true;
  case element_type::u64: append<uint64_t>(t, r); return true;
  case element_type::f32: if (allow_float) append<float>(t, r); return allow_float;
  case element_type::f64: if (allow_float) append<double>(t, r); return allow_float;
  default: return false;
  }
}
} // namespace

std::optional<std::vector<int64_t>> infer_ctx::const_ints(std::size_t i) const {
  const Tensor* t = constant(i);
  if (!t) return std::nullopt;
  std::vector<int64_t> r;
  if (!to_vector(*t, r, false)) fail("input " + std::to_string(i) + " must be an integer tensor, not " + to_string(t->get_element_type()));
  return r;
}

std::optional<std::vector<double>> infer_ctx::const_floats(std::size_t i) const {
  const Tensor* t = constant(i);
  if (!t) return std::nullopt;
  std::vector<double> r;
  if (!to_vector(*t, r, true)) fail("input " + std::to_string(i) + " has unsupported element type " + to_string(t->get_element_type()));
  return r;
}

int64_t infer_ctx::axis(int64_t a, int64_t rank) const {
  if (a < -rank || a >= rank) fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
  return a < 0 ? a + rank : a;
}

void infer_ctx::fail(const std::string& why) const { throw Exception(describe(op) + ": " + why); }

int64_t checked_elements(const std::vector<int64_t>& dims) {
  constexpr int64_t limit = int64_t{1} << 62;
  int64_t n = 1;
  for (auto d : dims) {
    if (d < 0) return -1;
    if (d != 0 && n > limit / d) return -1;
    n *= d;
  }
  return n;
}

PartialShape dynamic_of_rank(std::size_t rank) { return PartialShape(Shape(rank, -1)); }

PartialShape broadcast(const infer_ctx& c, const PartialShape& a, const PartialShape& b) {
  if (!a.rank_known || !b.rank_known) return PartialShape::unknown_rank();
  std::size_t r = std::max(a.rank(), b.rank());
  PartialShape out = dynamic_of_rank(r);
  for (std::size_t i = 0; i < r; ++i) {
    int64_t x = i < r - a.rank() ? 1 : a.dims[i - (r - a.rank())];
    int64_t y = i < r - b.rank() ? 1 : b.dims[i - (r - b.rank())];
    int64_t o;
    if (x == 1) o = y;
    else if (y == 1) o = x;
    else if (x < 0) o = y > 1 ? y : -1;
    else if (y < 0) o = x;
    else if (x == y) o = x;
    else c.fail("shapes " + a.to_string() + " and " + b.to_string() + " cannot be broadcast together");
    out.dims[i] = o;
  }
  return out;
}

const rule_table& rules() {
  static const rule_table table = [] {
    rule_table t;
    add_elementwise_rules(t);
    add_nn_rules(t);
    add_tensor_rules(t);
    add_selection_rules(t);
    add_signal_rules(t);
    add_control_flow_rules(t);
    add_sequence_rules(t);
    add_detection_rules(t);
    return t;
  }();
  return table;
}

} // namespace detail

std::vector<value_info> infer_op(const Graph& g, const Op& op) { return detail::infer_op_recording(g, op, nullptr); }

std::vector<value_info> detail::infer_op_recording(const Graph& g, const Op& op, std::vector<ValueId>* wanted) {
  detail::infer_ctx c{g, op, wanted};
  if (auto why = domain_refusal(op); !why.empty()) c.fail(why);
  auto it = detail::rules().find(op.type);
  if (it == detail::rules().end()) c.fail("unsupported op type (no shape inference rule)");
  const auto& r = it->second;
  std::size_t n = op.input_count();
  if (n < r.min_inputs || n > r.max_inputs)
    c.fail("has " + std::to_string(n) + " inputs but expects " +
           (r.min_inputs == r.max_inputs ? std::to_string(r.min_inputs)
                                         : std::to_string(r.min_inputs) + " to " + std::to_string(r.max_inputs)));
  for (std::size_t i = 0; i < r.min_inputs; ++i)
    if (!c.has(i)) c.fail("required input " + std::to_string(i) + " is omitted");
  for (auto v : op.inputs)
    if (v != no_value && (v < 0 || static_cast<std::size_t>(v) >= g.values.size())) c.fail("refers to a value that does not exist");
  // Sequences and tensors do not mix: a rule sees on each input the kind it expects.
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    if (!c.has(i) || c.in(i).sequence == takes_sequence(op.type, i)) continue;
    c.fail("input " + std::to_string(i) + " '" + c.in(i).name + "' is a " + (c.in(i).sequence ? "sequence" : "tensor") +
           " where " + op.type + " takes a " + (c.in(i).sequence ? "tensor" : "sequence"));
  }
  auto out = r.fn(c);
  for (auto& o : out) {
    o.sequence = makes_sequence(op.type);
    o.shape.ranges.clear(); // a model input's bounds say nothing certain about what ops make
  }
  std::size_t declared = op.outputs.empty() ? 1 : op.outputs.size();
  if (out.size() < declared) c.fail("declares " + std::to_string(declared) + " outputs but produces " + std::to_string(out.size()));
  out.resize(declared);
  return out;
}

namespace {

constexpr int64_t max_folded_elements = int64_t{1} << 24; ///< larger results stay ops (memory)

/// Shape and Size of a static input need no kernel: they are the shape itself.
Tensor fold_shape_op(const Op& op, const PartialShape& in, const value_info& out) {
  Tensor t(element_type::i64, out.shape.to_shape());
  if (op.type == "Size") {
    *t.data<int64_t>() = detail::checked_elements(in.dims);
    return t;
  }
  int64_t r = static_cast<int64_t>(in.rank());
  int64_t s = op.attr_int("start", 0);
  if (s < 0) s += r;
  s = std::clamp<int64_t>(s, 0, r);
  for (int64_t i = 0; i < t.get_size(); ++i) t.data<int64_t>()[i] = in.dims[static_cast<std::size_t>(s + i)];
  return t;
}

bool foldable(const Graph& g, const Op& op, const std::vector<value_info>& outs) {
  if (op.inputs.empty() || op.outputs.empty()) return false;
  if (touches_sequence(g, op) || makes_sequence(op.type)) return false; // a constant is a tensor
  for (std::size_t i = 0; i < outs.size(); ++i) {
    if (op.outputs[i] == no_value) continue;
    if (!outs[i].shape.is_static() || element_size(outs[i].type) == 0) return false;
    int64_t n = detail::checked_elements(outs[i].shape.dims);
    if (n < 0 || n > max_folded_elements) return false;
  }
  if ((op.type == "Shape" || op.type == "Size") && op.domain.empty() && op.input_count() == 1 &&
      g.value(op.inputs[0]).shape.is_static() && detail::checked_elements(g.value(op.inputs[0]).shape.dims) >= 0)
    return true;
  for (auto v : op.inputs)
    if (v != no_value && !g.is_constant(v)) return false;
  return true;
}

} // namespace

void forget_derived_shapes(Graph& g) {
  std::vector<bool> is_input(g.values.size(), false);
  for (auto id : g.inputs) is_input[static_cast<std::size_t>(id)] = true;
  for (std::size_t i = 0; i < g.values.size(); ++i)
    if (!is_input[i] && !g.values[i].constant) g.values[i].shape = PartialShape::unknown_rank();
}

void infer_shapes(Graph& g, const evaluator* eval) {
  std::vector<bool> folded(g.ops.size(), false);
  bool any_folded = false;
  for (std::size_t k = 0; k < g.ops.size(); ++k) {
    const Op& op = g.ops[k];
    auto outs = infer_op(g, op);
    for (std::size_t i = 0; i < op.outputs.size(); ++i) {
      if (op.outputs[i] == no_value) continue;
      Value& v = g.value(op.outputs[i]);
      v.type = outs[i].type;
      v.shape = outs[i].shape;
      v.sequence = outs[i].sequence;
    }
    if (!eval || !foldable(g, op, outs)) continue;
    std::vector<Tensor> results;
    if (op.type == "Shape" || op.type == "Size") {
      results.push_back(fold_shape_op(op, g.value(op.inputs[0]).shape, outs[0]));
    } else {
      std::vector<Tensor> ins;
      for (auto v : op.inputs) ins.push_back(v == no_value ? Tensor() : *g.value(v).constant);
      for (std::size_t i = 0; i < outs.size(); ++i)
        results.push_back(op.outputs[i] == no_value ? Tensor() : Tensor(outs[i].type, outs[i].shape.to_shape()));
      try {
        (*eval)(op, ins, results);
      } catch (const std::exception& e) {
        throw Exception(describe(op) + ": constant folding failed: " + e.what());
      }
      for (std::size_t i = 0; i < outs.size(); ++i)
        if (op.outputs[i] != no_value && (results[i].empty() || results[i].get_shape() != outs[i].shape.dims))
          throw Exception(describe(op) + ": constant folding produced output " + std::to_string(i) + " of shape " +
                          to_string(results[i].get_shape()) + " instead of " + outs[i].shape.to_string());
    }
    for (std::size_t i = 0; i < op.outputs.size(); ++i)
      if (op.outputs[i] != no_value) g.value(op.outputs[i]).constant = results[i];
    folded[k] = true;
    any_folded = true;
  }
  for (auto id : g.outputs)
    if (g.value(id).sequence)
      throw Exception("graph output '" + g.value(id).name +
                      "' is a sequence; sequences are supported inside a graph, not as its inputs or outputs");
  if (!any_folded) return;
  std::vector<Op> kept;
  kept.reserve(g.ops.size());
  for (std::size_t k = 0; k < g.ops.size(); ++k)
    if (!folded[k]) kept.push_back(std::move(g.ops[k]));
  g.ops = std::move(kept);
  g.prune();
}

} // namespace troupe::graph
