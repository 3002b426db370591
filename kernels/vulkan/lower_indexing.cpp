/// Index-driven ops: CumSum (shaders/cumsum.comp), TopK (topk.comp), GatherND (gather_nd.comp),
/// ScatterND, ScatterElements and the legacy Scatter (a copy of the data, then scatter.comp).
#include <numeric>

#include "kernels/vulkan/lowering.hpp"
#include "kernels/vulkan/lowering_shapes.hpp"

namespace troupe::kernels::vulkan {

namespace {

/// Indices bound as a buffer: int32 or int64 (a constant uploads as its raw words).
std::string check_indices(const graph::Graph& g, const graph::Op& op, std::size_t i) {
  const auto t = g.value(op.inputs[i]).type;
  if (t != element_type::i64 && t != element_type::i32) return "indices are " + to_string(t) + "; int32 or int64 only";
  return "";
}

uint32_t idx_words(const graph::Graph& g, const graph::Op& op, std::size_t i) {
  return g.value(op.inputs[i]).type == element_type::i64 ? 2u : 1u;
}

/// The variant of `shader` for the data type: float, or 32-bit words.
std::string variant(const std::string& shader, element_type t) { return words_of(t) == 0 ? shader : shader + "_words"; }

// ---- CumSum -------------------------------------------------------------------------------

bool runtime_axis(const graph::Graph& g, const graph::Op& op) { return !g.is_constant(op.inputs[1]); }

std::string cumsum_check(const graph::Graph& g, const graph::Op& op) {
  const auto t = g.value(op.inputs[0]).type;
  if (t != element_type::f32 && !integer_words(t)) return "element type " + to_string(t) + " has no Vulkan CumSum shader";
  if (op.inputs.size() < 2 || op.inputs[1] == graph::no_value) return std::string("expects axis (input 1)");
  if (shape_of(g, op.inputs[0]).empty()) return std::string("a scalar input has no axis");
  if (runtime_axis(g, op)) {
    const auto at = g.value(op.inputs[1]).type;
    if (at != element_type::i32 && at != element_type::i64) return "axis (input 1) is " + to_string(at) + "; int32 or int64 only";
    if (shape_size(shape_of(g, op.inputs[1])) != 1) return std::string("axis (input 1) must hold one value");
  } else if (const_ints(g, op, 1).size() != 1) {
    return std::string("axis (input 1) must hold one value");
  }
  return check_rank(g, op);
}

void cumsum_lower(op_builder& b) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const Shape x = shape_of(g, op.inputs[0]);
  if (shape_size(x) == 0) return;
  const auto t = g.value(op.inputs[0]).type;
  spec_map s{{3, op.attr_int("exclusive", 0) != 0 ? 1u : 0u},
             {4, op.attr_int("reverse", 0) != 0 ? 1u : 0u},
             {5, words_of(t) == 2 ? 2u : 1u}};
  uint64_t inv = static_cast<uint64_t>(shape_size(x));
  buffer_ref axis_ref = b.input(0); // bound but unread with a constant axis
  if (runtime_axis(g, op)) { // the shader finds the axis' length and stride itself
    s[0] = u32(shape_size(x));
    s[6] = 1u;
    s[7] = u32(static_cast<int64_t>(x.size()));
    const std::size_t lead = 6 - x.size();
    for (std::size_t i = 0; i < 6; ++i) s[u32(8 + static_cast<int64_t>(i))] = i >= lead ? u32(x[i - lead]) : 1u;
    axis_ref = b.input(1);
  } else {
    const auto axis = axis_of(const_ints(g, op, 1).at(0), x.size());
    const int64_t len = x[axis];
    inv = static_cast<uint64_t>(shape_size(x) / len);
    s[0] = u32(shape_size(x) / len);
    s[1] = u32(len);
    s[2] = u32(dims_between(x, axis + 1, x.size()));
  }
  b.dispatch(t == element_type::f32 ? "cumsum" : "cumsum_int", std::move(s), {b.input(0), axis_ref, b.output(0)}, inv);
}

// ---- TopK ---------------------------------------------------------------------------------

int64_t topk_k(const graph::Graph& g, const graph::Op& op) {
  return has_input(op, 1) ? const_ints(g, op, 1).at(0) : op.attr_int("k", -1);
}

std::string topk_check(const graph::Graph& g, const graph::Op& op) {
  if (g.value(op.inputs[0]).type != element_type::f32) return std::string("the shader is float32 only");
  if (has_input(op, 1)) {
    if (!g.is_constant(op.inputs[1])) return std::string("K (input 1) is not a constant");
    if (const_ints(g, op, 1).size() != 1) return std::string("K (input 1) must hold one value");
  }
  const Shape x = shape_of(g, op.inputs[0]);
  if (x.empty()) return std::string("a scalar input has no axis");
  const int64_t k = topk_k(g, op), len = x[axis_of(op.attr_int("axis", -1), x.size())];
  if (k < 0 || k > len) return "K = " + std::to_string(k) + " is out of range [0, " + std::to_string(len) + "]";
  if (!has_output(op, 1) || g.value(op.outputs[1]).type != element_type::i64)
    return std::string("expects the int64 Indices output");
  return check_rank(g, op);
}

void topk_lower(op_builder& b) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const Shape x = shape_of(g, op.inputs[0]);
  const auto axis = axis_of(op.attr_int("axis", -1), x.size());
  const int64_t k = topk_k(g, op);
  if (shape_size(x) == 0 || k == 0) return;
  spec_map s{{0, u32(shape_size(x))},
             {1, u32(x[axis])},
             {2, u32(dims_between(x, axis + 1, x.size()))},
             {3, u32(k)},
             {4, op.attr_int("largest", 1) == 0 ? 1u : 0u}};
  b.dispatch("topk", std::move(s), {b.input(0), b.output(0), b.output(1)}, static_cast<uint64_t>(shape_size(x)), 1, 2);
}

// ---- GatherND -----------------------------------------------------------------------------

std::string gather_nd_check(const graph::Graph& g, const graph::Op& op) {
  const auto t = g.value(op.inputs[0]).type;
  if (words_of(t) < 0) return "element type " + to_string(t) + " has no Vulkan GatherND shader (32- and 64-bit types only)";
  auto w = check_indices(g, op, 1);
  if (!w.empty()) return w;
  const Shape x = shape_of(g, op.inputs[0]), idx = shape_of(g, op.inputs[1]);
  const auto bd = static_cast<std::size_t>(op.attr_int("batch_dims", 0));
  if (idx.empty() || bd >= idx.size() || bd + static_cast<std::size_t>(idx.back()) > x.size())
    return std::string("indices' shape does not fit the data and batch_dims");
  return check_rank(g, op);
}

void gather_nd_lower(op_builder& b) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const Shape x = shape_of(g, op.inputs[0]), idx = shape_of(g, op.inputs[1]), y = shape_of(g, op.outputs[0]);
  const auto t = g.value(op.inputs[0]).type;
  const uint32_t per = words_of(t) == 2 ? 2 : 1;
  if (shape_size(y) == 0) return;
  const auto bd = static_cast<std::size_t>(op.attr_int("batch_dims", 0));
  const auto m = static_cast<std::size_t>(idx.back());
  const auto xs = row_strides(x);
  spec_map s{{0, u32(shape_size(y)) * per},
             {1, idx_words(g, op, 1)},
             {2, per},
             {3, u32(static_cast<int64_t>(m))},
             {4, u32(dims_between(x, bd + m, x.size()))},
             {5, u32(dims_between(idx, bd, idx.size() - 1))},
             {6, u32(dims_between(x, bd, x.size()))}};
  for (std::size_t k = 0; k < 6; ++k) {
    s[u32(7 + static_cast<int64_t>(k))] = k < m ? u32(x[bd + k]) : 1u;
    s[u32(13 + static_cast<int64_t>(k))] = k < m ? u32(xs[bd + k]) : 0u;
  }
  b.dispatch(variant("gather_nd", t), std::move(s), {b.input(0), b.input(1), b.output(0)},
             static_cast<uint64_t>(shape_size(y)) * per);
}

// ---- ScatterND, ScatterElements, Scatter ---------------------------------------------------

uint32_t reduction_code(const graph::Op& op) {
  const auto r = op.attr_string("reduction", "none");
  return r == "add" ? 1u : r == "mul" ? 2u : 0u;
}

std::string scatter_check(const graph::Graph& g, const graph::Op& op) {
  const auto t = g.value(op.inputs[0]).type;
  const auto red = op.attr_string("reduction", "none");
  if (red != "none" && red != "add" && red != "mul") return "reduction '" + red + "' has no Vulkan shader";
  if (red == "none" ? words_of(t) < 0 : t != element_type::f32 && !integer_words(t))
    return "element type " + to_string(t) + " with reduction '" + red + "' has no Vulkan scatter shader";
  auto w = check_indices(g, op, 1);
  if (!w.empty()) return w;
  if (g.value(op.inputs[2]).type != t) return std::string("updates are not of the data's type");
  const Shape x = shape_of(g, op.inputs[0]), idx = shape_of(g, op.inputs[1]);
  if (op.type == "ScatterND") {
    if (idx.empty() || idx.back() < 1 || static_cast<std::size_t>(idx.back()) > x.size())
      return std::string("indices' last dim does not fit the data's rank (1 to rank)");
  } else if (idx.size() != x.size()) {
    return std::string("indices' rank differs from the data's");
  }
  return check_rank(g, op);
}

/// y = data, word for word (the copy shader; float data float16 in f16 mode).
void copy_data(op_builder& b, element_type t, int64_t n) {
  const int64_t items = n * (words_of(t) == 2 ? 2 : 1);
  strided_copy(b, b.input(0), b.output(0), Shape{items}, {1}, 0, {1}, 0);
}

void scatter_lower(op_builder& b) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const Shape x = shape_of(g, op.inputs[0]), idx = shape_of(g, op.inputs[1]);
  const auto t = g.value(op.inputs[0]).type;
  if (shape_size(x) == 0) return;
  copy_data(b, t, shape_size(x));
  if (shape_size(idx) == 0) return;
  const auto xs = row_strides(x);
  spec_map s{{1, idx_words(g, op, 1)}, {2, words_of(t) == 2 ? 2u : 1u}, {3, reduction_code(op)}};
  uint64_t inv;
  std::string shader;
  if (op.type == "ScatterND") {
    const auto m = static_cast<std::size_t>(idx.back());
    const int64_t slice = dims_between(x, m, x.size());
    inv = static_cast<uint64_t>(slice);
    s[4] = u32(static_cast<int64_t>(m));
    s[5] = u32(slice);
    s[6] = u32(shape_size(idx) / static_cast<int64_t>(m));
    for (std::size_t k = 0; k < 6; ++k) {
      s[u32(7 + static_cast<int64_t>(k))] = k < m ? u32(x[k]) : 1u;
      s[u32(13 + static_cast<int64_t>(k))] = k < m ? u32(xs[k]) : 0u;
    }
    shader = variant("scatter_nd", t);
  } else {
    const auto axis = axis_of(op.attr_int("axis", 0), x.size());
    const std::size_t lead = 6 - x.size();
    inv = static_cast<uint64_t>(shape_size(idx) / idx[axis]);
    s[4] = u32(static_cast<int64_t>(lead + axis));
    s[5] = u32(x[axis]);
    for (std::size_t k = 0; k < 6; ++k) {
      s[u32(7 + static_cast<int64_t>(k))] = k >= lead ? u32(idx[k - lead]) : 1u;
      s[u32(13 + static_cast<int64_t>(k))] = k >= lead ? u32(xs[k - lead]) : 0u;
    }
    shader = variant("scatter_elements", t);
  }
  s[0] = u32(static_cast<int64_t>(inv));
  b.dispatch(shader, std::move(s), {b.input(1), b.input(2), b.output(0)}, inv);
}

} // namespace

void add_indexing_rules(rule_table& t) {
  t["CumSum"] = {cumsum_check, cumsum_lower,
                 "f32, int32 or int64 (and unsigned), rank 1 to 6; axis a constant or a run-time input; exclusive and reverse"};
  t["TopK"] = {topk_check, topk_lower,
               "f32, rank <= 6; K constant (input or opset 1 attribute); largest or smallest; always sorted, ties "
               "by the lower index"};
  t["GatherND"] = {gather_nd_check, gather_nd_lower,
                   "any 32- or 64-bit element type, rank <= 6, batch_dims; int32 or int64 indices; an index out "
                   "of range gives 0"};
  const op_rule scatter{scatter_check, scatter_lower,
                        "reduction none (any 32- or 64-bit element type), add or mul (f32, int32, int64); rank <= 6; "
                        "int32 or int64 indices; duplicates apply in order (the last one wins); "
                        "an index out of range is skipped"};
  t["ScatterND"] = scatter;
  t["ScatterElements"] = scatter;
  t["Scatter"] = scatter;
  // CumSum and TopK: one loop along the axis; ScatterElements: along the indices' axis, in
  // order; ScatterND: over every index tuple.
  auto axis_len = [](const Shape& x, int64_t axis) {
    if (x.empty()) return uint64_t{1};
    if (axis < 0) axis += static_cast<int64_t>(x.size());
    return axis >= 0 && axis < static_cast<int64_t>(x.size()) ? static_cast<uint64_t>(x[static_cast<std::size_t>(axis)]) : uint64_t{1};
  };
  t["CumSum"].trips = [axis_len](const graph::Graph& g, const graph::Op& op) {
    const Shape x = shape_of(g, op.inputs[0]);
    if (!g.is_constant(op.inputs[1])) return std::accumulate(x.begin(), x.end(), uint64_t{0}, [](uint64_t m, int64_t d) { return std::max(m, static_cast<uint64_t>(d)); });
    return axis_len(x, const_ints(g, op, 1).at(0));
  };
  t["TopK"].trips = [axis_len](const graph::Graph& g, const graph::Op& op) {
    return axis_len(shape_of(g, op.inputs[0]), op.attr_int("axis", -1));
  };
  auto scatter_trips = [axis_len](const graph::Graph& g, const graph::Op& op) {
    const Shape idx = shape_of(g, op.inputs[1]);
    if (op.type != "ScatterND") return axis_len(idx, op.attr_int("axis", 0)) + 32;
    const uint64_t m = idx.empty() ? 1 : static_cast<uint64_t>(idx.back());
    const uint64_t tuples = m == 0 ? 0 : static_cast<uint64_t>(shape_size(idx)) / m;
    return tuples * (m + 1) + 1;
  };
  for (const char* n : {"ScatterND", "ScatterElements", "Scatter"}) t[n].trips = scatter_trips;
}

} // namespace troupe::kernels::vulkan
