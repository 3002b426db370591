/// IR data-movement and shape ops -> ONNX: Reshape, Transpose, Concat, Squeeze, Unsqueeze,
/// Gather*, ShapeOf, StridedSlice, Slice, Split, VariadicSplit, Pad, Broadcast, Tile, Range,
/// TopK, DepthToSpace, SpaceToDepth, Scatter*, CumSum, NonZero, OneHot, Einsum.
#include "graph/ir_op_mapping.hpp"

#include <limits>
#include <numeric>

namespace troupe::graph::ir {

namespace {

std::vector<std::string> v(std::initializer_list<const char*> l) { return {l.begin(), l.end()}; }

constexpr int64_t big = std::numeric_limits<int64_t>::max();

ValueId as_i64(builder& b, std::size_t i) {
  if (b.in_type(i) == element_type::i64) return b.input(i);
  return b.op("Cast", {b.input(i)}, {{"to", static_cast<int64_t>(element_type::i64)}});
}

ValueId cast(builder& b, ValueId x, element_type t) { return b.op("Cast", {x}, {{"to", static_cast<int64_t>(t)}}); }

/// special_zero: 0 copies the input's dim (ONNX's default); without it a 0 is a zero-size dim.
std::vector<ValueId> reshape(builder& b) {
  bool special = b.flag("special_zero", false);
  return {b.op("Reshape", {b.input(0), as_i64(b, 1)}, {{"allowzero", int64_t{!special}}})};
}

std::vector<ValueId> transpose(builder& b) {
  auto perm = b.const_ints(1, "order");
  if (perm.empty()) return {b.op("Transpose", {b.input(0)})}; // reverses the dims, as IR's empty order
  return {b.op("Transpose", {b.input(0)}, {{"perm", perm}})};
}

std::vector<ValueId> concat(builder& b) {
  std::vector<ValueId> in;
  for (std::size_t k = 0; k < b.inputs(); ++k) in.push_back(b.input(k));
  return {b.op("Concat", in, {{"axis", b.i64("axis")}})};
}

std::vector<ValueId> squeeze(builder& b) {
  if (b.inputs() < 2) return {b.op("Squeeze", {b.input(0)})};
  return {b.op("Squeeze", {b.input(0), as_i64(b, 1)})};
}

std::vector<ValueId> unsqueeze(builder& b) { return {b.op("Unsqueeze", {b.input(0), as_i64(b, 1)})}; }

/// Gather with batch_dims b and axis b is GatherND over indices[..., None] with batch_dims b.
std::vector<ValueId> gather(builder& b) {
  auto axis_v = b.const_ints(2, "axis");
  if (axis_v.size() != 1) b.fail("axis must be one value");
  int64_t axis = axis_v[0];
  int64_t batch = b.i64("batch_dims", 0);
  if (batch == 0) return {b.op("Gather", {b.input(0), b.input(1)}, {{"axis", axis}})};
  if (batch < 0) batch += static_cast<int64_t>(b.in_rank(1));
  if (axis < 0) axis += static_cast<int64_t>(b.in_rank(0));
  if (axis != batch) b.fail("batch_dims " + std::to_string(batch) + " with another axis (" + std::to_string(axis) +
                            ") has no ONNX counterpart");
  ValueId idx = b.op("Unsqueeze", {as_i64(b, 1), b.i64s({-1})});
  return {b.op("GatherND", {b.input(0), idx}, {{"batch_dims", batch}})};
}

std::vector<ValueId> gather_nd(builder& b) {
  if (b.l.version == "opset5" && b.i64("batch_dims", 0) > 1)
    b.fail("GatherND-5 with batch_dims > 1 flattens its batch dims; ONNX keeps them");
  return {b.op("GatherND", {b.input(0), as_i64(b, 1)}, {{"batch_dims", b.i64("batch_dims", 0)}})};
}

std::vector<ValueId> shape_of(builder& b) {
  ValueId s = b.op("Shape", {b.input(0)});
  std::string t = b.str("output_type", "i64");
  if (t == "i32") return {cast(b, s, element_type::i32)};
  if (t != "i64") b.fail("output_type '" + t + "' is not i64 or i32");
  return {s};
}

/// StridedSlice with constant begin, end and strides (any masks but ellipsis), or computed
/// ones without masks: Unsqueeze (new axes), Slice, Squeeze (shrunk axes).
std::vector<ValueId> strided_slice(builder& b) {
  auto bm = b.ints("begin_mask"), em = b.ints("end_mask"), nm = b.ints("new_axis_mask"),
       sm = b.ints("shrink_axis_mask"), el = b.ints("ellipsis_mask");
  auto bit = [](const std::vector<int64_t>& m, std::size_t k) { return k < m.size() && m[k] != 0; };
  for (std::size_t k = 0; k < el.size(); ++k)
    if (el[k]) b.fail("ellipsis_mask is not supported");
  bool masks = false;
  for (const auto* m : {&bm, &em, &nm, &sm})
    for (auto x : *m) masks = masks || x != 0;
  const bool has_strides = b.inputs() > 3;
  if (!b.constant(1) || !b.constant(2) || (has_strides && !b.constant(3))) {
    if (masks) b.fail("begin, end and strides computed at run time are supported only without masks");
    ValueId begin = as_i64(b, 1);
    ValueId axes = b.op("Range", {b.i64_scalar(0), b.op("Squeeze", {b.op("Shape", {begin})}), b.i64_scalar(1)});
    std::vector<ValueId> in{b.input(0), begin, as_i64(b, 2), axes};
    if (has_strides) in.push_back(as_i64(b, 3));
    return {b.op("Slice", in)};
  }
  auto begin = b.const_ints(1, "begin"), end = b.const_ints(2, "end");
  std::vector<int64_t> strides = has_strides ? b.const_ints(3, "strides") : std::vector<int64_t>(begin.size(), 1);
  if (begin.size() != end.size() || begin.size() != strides.size()) b.fail("begin, end and strides differ in length");
  std::vector<int64_t> new_axes, starts, ends, axes, steps, shrink;
  int64_t out_axis = 0; // index in the tensor after the new axes are inserted
  for (std::size_t k = 0; k < begin.size(); ++k, ++out_axis) {
    if (bit(nm, k)) {
      new_axes.push_back(out_axis);
      continue;
    }
    int64_t s = strides[k];
    if (s == 0) b.fail("a stride is 0");
    if (bit(sm, k)) {
      int64_t st = begin[k];
      starts.push_back(st);
      ends.push_back(st == -1 ? big : st + 1);
      steps.push_back(1);
      axes.push_back(out_axis);
      shrink.push_back(out_axis);
      continue;
    }
    int64_t st = bit(bm, k) ? (s > 0 ? 0 : big) : begin[k];
    int64_t en = bit(em, k) ? (s > 0 ? big : -big) : end[k];
    if (st == (s > 0 ? 0 : big) && en == (s > 0 ? big : -big) && s == 1) continue; // the whole axis
    starts.push_back(st);
    ends.push_back(en);
    axes.push_back(out_axis);
    steps.push_back(s);
  }
  ValueId x = b.input(0);
  if (!new_axes.empty()) x = b.op("Unsqueeze", {x, b.i64s(new_axes)});
  if (!axes.empty()) x = b.op("Slice", {x, b.i64s(starts), b.i64s(ends), b.i64s(axes), b.i64s(steps)});
  if (!shrink.empty()) x = b.op("Squeeze", {x, b.i64s(shrink)});
  if (new_axes.empty() && axes.empty() && shrink.empty()) x = b.op("Identity", {x});
  return {x};
}

std::vector<ValueId> slice(builder& b) {
  std::vector<ValueId> in{b.input(0), as_i64(b, 1), as_i64(b, 2)};
  ValueId steps = as_i64(b, 3);
  if (b.inputs() > 4) in.push_back(as_i64(b, 4));
  else in.push_back(b.op("Range", {b.i64_scalar(0), b.op("Squeeze", {b.op("Shape", {in[1]})}), b.i64_scalar(1)}));
  in.push_back(steps);
  return {b.op("Slice", in)};
}

std::vector<ValueId> split(builder& b) {
  auto axis = b.const_ints(1, "axis");
  if (axis.size() != 1) b.fail("axis must be one value");
  auto n = static_cast<std::size_t>(b.i64("num_splits"));
  if (n != b.l.outputs.size()) b.fail("num_splits differs from the number of output ports");
  return b.op_n("Split", {b.input(0)}, {{"axis", axis[0]}}, n);
}

/// VariadicSplit: a -1 length takes the rest (computed from the input's dim when not static).
std::vector<ValueId> variadic_split(builder& b) {
  auto axis_v = b.const_ints(1, "axis");
  if (axis_v.size() != 1) b.fail("axis must be one value");
  int64_t axis = axis_v[0];
  ValueId lengths = as_i64(b, 2);
  std::size_t n = b.l.outputs.size();
  if (b.constant(2)) {
    auto l = b.const_ints(2, "split_lengths");
    if (l.size() != n) b.fail("split_lengths differs from the number of output ports");
    auto minus = std::find(l.begin(), l.end(), -1);
    if (minus != l.end()) {
      const PartialShape& ps = b.in_port(0).shape;
      int64_t a = axis < 0 ? axis + static_cast<int64_t>(ps.rank()) : axis;
      if (ps.rank_known && a >= 0 && a < static_cast<int64_t>(ps.rank()) && ps.dims[static_cast<std::size_t>(a)] >= 0) {
        int64_t rest = ps.dims[static_cast<std::size_t>(a)];
        for (auto x : l) rest -= x == -1 ? 0 : x;
        *minus = rest;
        lengths = b.i64s(l);
      } else {
        int64_t known = 0;
        for (auto x : l) known += x == -1 ? 0 : x;
        ValueId dim = b.op("Gather", {b.op("Shape", {b.input(0)}), b.i64s({axis})}, {{"axis", int64_t{0}}});
        ValueId rest = b.op("Sub", {dim, b.i64s({known})});
        auto idx = static_cast<int64_t>(minus - l.begin());
        ValueId with = b.op("ScatterElements", {b.i64s(l), b.i64s({idx}), rest}, {{"axis", int64_t{0}}});
        lengths = with;
      }
    }
  }
  return b.op_n("Split", {b.input(0), lengths}, {{"axis", axis}}, n);
}

std::vector<ValueId> pad(builder& b) {
  std::string mode = b.str("pad_mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    b.fail("pad_mode '" + mode + "' has no ONNX counterpart");
  ValueId pads;
  if (b.constant(1) && b.constant(2)) { // known now: one constant
    auto begin = b.const_ints(1, "pads_begin"), end = b.const_ints(2, "pads_end");
    begin.insert(begin.end(), end.begin(), end.end());
    pads = b.i64s(begin);
  } else {
    pads = b.op("Concat", {as_i64(b, 1), as_i64(b, 2)}, {{"axis", int64_t{0}}});
  }
  std::vector<ValueId> in{b.input(0), pads};
  if (b.inputs() > 3 && mode == "constant") in.push_back(b.input(3));
  return {b.op("Pad", in, {{"mode", mode}})};
}

/// numpy and bidirectional are Expand; explicit puts the data's dims at axes_mapping first.
std::vector<ValueId> broadcast(builder& b) {
  std::string mode = b.str("mode", "numpy");
  ValueId x = b.input(0);
  if (mode == "explicit") {
    auto mapping = b.const_ints(2, "axes_mapping");
    const PartialShape& ts = b.in_port(1).shape;
    if (!ts.rank_known || ts.rank() != 1 || ts.dims[0] < 0) b.fail("explicit broadcast needs a target shape of known length");
    std::vector<int64_t> missing;
    for (int64_t k = 0; k < ts.dims[0]; ++k)
      if (std::find(mapping.begin(), mapping.end(), k) == mapping.end()) missing.push_back(k);
    if (!missing.empty()) x = b.op("Unsqueeze", {x, b.i64s(missing)});
  } else if (mode != "numpy" && mode != "bidirectional") {
    b.fail("mode '" + mode + "' is not numpy, bidirectional or explicit");
  }
  return {b.op("Expand", {x, as_i64(b, 1)})};
}

std::vector<ValueId> range(builder& b) {
  element_type t = element_type::undefined;
  if (b.l.version == "opset4") {
    auto p = parse_element_type(b.str("output_type"));
    if (!p || *p == element_type::undefined) b.fail("output_type '" + b.str("output_type") + "' is not supported");
    t = *p;
  } else {
    t = b.in_type(0);
  }
  std::vector<ValueId> in;
  for (std::size_t k = 0; k < 3; ++k) {
    ValueId x = b.in_type(k) == t ? b.input(k) : cast(b, b.input(k), t);
    // ONNX wants scalars; a one-element 1-D input is reshaped.
    if (b.in_port(k).shape.rank_known && b.in_port(k).shape.rank() == 1) x = b.op("Reshape", {x, b.i64s({})});
    in.push_back(x);
  }
  return {b.op("Range", in)};
}

std::vector<ValueId> topk(builder& b) {
  std::string mode = b.str("mode");
  std::string sort = b.str("sort", "none");
  if (mode != "max" && mode != "min") b.fail("mode '" + mode + "' is not max or min");
  if (sort == "index") b.fail("sort 'index' has no ONNX counterpart");
  ValueId k = b.op("Reshape", {as_i64(b, 1), b.i64s({1})});
  auto out = b.op_n("TopK", {b.input(0), k},
                    {{"axis", b.i64("axis")}, {"largest", int64_t{mode == "max"}}, {"sorted", int64_t{1}}}, 2);
  std::string it = b.str("index_element_type", "i32");
  if (b.l.version == "opset1") it = b.str("index_element_type", "i32");
  if (it == "i32") out[1] = cast(b, out[1], element_type::i32);
  return out;
}

std::vector<ValueId> depth_to_space(builder& b) {
  std::string mode = b.str("mode");
  if (mode != "blocks_first" && mode != "depth_first") b.fail("mode '" + mode + "' is not blocks_first or depth_first");
  return {b.op("DepthToSpace", {b.input(0)},
               {{"blocksize", b.i64("block_size")}, {"mode", std::string(mode == "blocks_first" ? "DCR" : "CRD")}})};
}

std::vector<ValueId> space_to_depth(builder& b) {
  if (b.str("mode") != "blocks_first") b.fail("SpaceToDepth mode '" + b.str("mode") + "' has no ONNX counterpart");
  return {b.op("SpaceToDepth", {b.input(0)}, {{"blocksize", b.i64("block_size")}})};
}

std::vector<ValueId> scatter_elements(builder& b) {
  auto axis = b.const_ints(3, "axis");
  if (axis.size() != 1) b.fail("axis must be one value");
  std::string red = b.str("reduction", "none");
  if (red != "none") b.fail("reduction '" + red + "' is not supported");
  return {b.op("ScatterElements", {b.input(0), as_i64(b, 1), b.input(2)}, {{"axis", axis[0]}})};
}

std::vector<ValueId> cumsum(builder& b) {
  ValueId axis = b.inputs() > 1 ? as_i64(b, 1) : b.i64_scalar(0);
  return {b.op("CumSum", {b.input(0), axis},
               {{"exclusive", int64_t{b.flag("exclusive", false)}}, {"reverse", int64_t{b.flag("reverse", false)}}})};
}

std::vector<ValueId> nonzero(builder& b) {
  ValueId r = b.op("NonZero", {b.input(0)});
  std::string t = b.str("output_type", "i64");
  return {t == "i32" ? cast(b, r, element_type::i32) : r};
}

std::vector<ValueId> one_hot(builder& b) {
  ValueId values = b.op("Concat", {b.op("Reshape", {b.input(3), b.i64s({1})}), b.op("Reshape", {b.input(2), b.i64s({1})})},
                        {{"axis", int64_t{0}}});
  return {b.op("OneHot", {b.input(0), b.input(1), values}, {{"axis", b.i64("axis")}})};
}

std::vector<ValueId> einsum(builder& b) {
  std::vector<ValueId> in;
  for (std::size_t k = 0; k < b.inputs(); ++k) in.push_back(b.input(k));
  return {b.op("Einsum", in, {{"equation", b.str("equation")}})};
}

} // namespace

void add_tensor_ops(op_table& t) {
  t["Reshape"].push_back({v({"opset1"}), reshape});
  t["Transpose"].push_back({v({"opset1"}), transpose});
  t["Concat"].push_back({v({"opset1"}), concat});
  t["Squeeze"].push_back({v({"opset1"}), squeeze});
  t["Unsqueeze"].push_back({v({"opset1"}), unsqueeze});
  t["Gather"].push_back({v({"opset1", "opset7", "opset8"}), gather});
  t["GatherND"].push_back({v({"opset5", "opset8"}), gather_nd});
  t["GatherElements"].push_back({v({"opset6"}), [](builder& b) -> std::vector<ValueId> {
                                   return {b.op("GatherElements", {b.input(0), as_i64(b, 1)}, {{"axis", b.i64("axis")}})};
                                 }});
  t["ShapeOf"].push_back({v({"opset1", "opset3"}), shape_of});
  t["StridedSlice"].push_back({v({"opset1"}), strided_slice});
  t["Slice"].push_back({v({"opset8"}), slice});
  t["Split"].push_back({v({"opset1"}), split});
  t["VariadicSplit"].push_back({v({"opset1"}), variadic_split});
  t["Pad"].push_back({v({"opset1", "opset12"}), pad});
  t["Broadcast"].push_back({v({"opset1", "opset3"}), broadcast});
  t["Tile"].push_back({v({"opset1"}), [](builder& b) -> std::vector<ValueId> {
                         return {b.op("Tile", {b.input(0), as_i64(b, 1)})};
                       }});
  t["Range"].push_back({v({"opset1", "opset4"}), range});
  t["TopK"].push_back({v({"opset1", "opset3", "opset11"}), topk});
  t["DepthToSpace"].push_back({v({"opset1"}), depth_to_space});
  t["SpaceToDepth"].push_back({v({"opset1"}), space_to_depth});
  t["ScatterElementsUpdate"].push_back({v({"opset3", "opset12"}), scatter_elements});
  t["ScatterNDUpdate"].push_back({v({"opset3"}), [](builder& b) -> std::vector<ValueId> {
                                    return {b.op("ScatterND", {b.input(0), as_i64(b, 1), b.input(2)})};
                                  }});
  t["CumSum"].push_back({v({"opset3"}), cumsum});
  t["NonZero"].push_back({v({"opset3"}), nonzero});
  t["OneHot"].push_back({v({"opset1"}), one_hot});
  t["Einsum"].push_back({v({"opset7"}), einsum});
}

} // namespace troupe::graph::ir
