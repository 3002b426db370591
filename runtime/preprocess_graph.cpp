#include "runtime/preprocess_graph.hpp"

#include <algorithm>

#include <troupe/exception.hpp>

#include "graph/shape_inference.hpp"
#include "runtime/model_impl.hpp"

namespace troupe {

namespace {

using preprocess::ColorFormat;
using preprocess::ResizeAlgorithm;
using preprocess::Step;
using Kind = Step::Kind;

const char* step_name(Kind k) {
  switch (k) {
  case Kind::convert_element_type: return "convert_element_type";
  case Kind::convert_color: return "convert_color";
  case Kind::mean: return "mean";
  case Kind::scale: return "scale";
  case Kind::resize: return "resize";
  case Kind::convert_layout: return "convert_layout";
  case Kind::reverse_channels: return "reverse_channels";
  }
  return "?";
}

const char* color_name(ColorFormat c) {
  switch (c) {
  case ColorFormat::RGB: return "RGB";
  case ColorFormat::BGR: return "BGR";
  case ColorFormat::UNDEFINED: break;
  }
  return "UNDEFINED";
}

bool is_float(element_type t) {
  return t == element_type::f32 || t == element_type::f16 || t == element_type::bf16 || t == element_type::f64;
}

/// The permutation that takes a tensor laid out as `from` to `to` (Transpose's perm), or
/// empty when the two do not name the same dimensions.
std::vector<int64_t> permutation(const Layout& from, const Layout& to) {
  if (from.rank() != to.rank()) return {};
  std::vector<int64_t> perm;
  for (char c : to.letters()) {
    if (c == '?') return {};
    long i = from.index_of(c);
    if (i < 0) return {};
    perm.push_back(i);
  }
  return perm;
}

/// "preprocessing of input 'x', step mean: why" (no step part while none is running).
Exception step_error(const std::string& subject, const std::string& step, const std::string& why) {
  return Exception(subject + (step.empty() ? "" : ", step " + step) + ": " + why);
}

/// Empty when `layout` (named `which`: "model layout", "layout") fits `shape` of the `port`
/// ("input", "output"), else why not.
std::string rank_mismatch(const char* which, const Layout& layout, const PartialShape& shape, const char* port) {
  if (layout.empty() || !shape.rank_known || layout.rank() == shape.rank()) return "";
  return std::string(which) + " " + layout.to_string() + " has " + std::to_string(layout.rank()) + " dimensions, the " +
         port + " " + std::to_string(shape.rank()) + " (" + shape.to_string() + ")";
}

/// The ops of one pre- or post-processing chain, and what is known of its current value.
class chain {
public:
  chain(graph::Graph& g, std::string subject, std::string prefix, graph::ValueId start, Layout layout)
      : g_(g), subject_(std::move(subject)), prefix_(std::move(prefix)), cur_(start), layout_(std::move(layout)) {}

  Exception error(const std::string& why) const { return step_error(subject_, step_, why); }
  void at_step(std::string name) { step_ = std::move(name); }
  graph::ValueId current() const { return cur_; }
  const graph::Value& value() const { return g_.value(cur_); }
  const Layout& layout() const { return layout_; }
  std::vector<graph::Op>& ops() { return ops_; }

  void cast(element_type t) {
    if (value().type == t) return;
    add("Cast", {cur_}, {{"to", static_cast<int64_t>(t)}});
  }

  void transpose_to(const Layout& to) {
    if (layout_ == to) return;
    auto perm = permutation(layout_, to);
    if (perm.empty())
      throw error("cannot convert layout " + layout_.to_string() + " to " + to.to_string() +
                  " (both need the same named dimensions, one letter each)");
    add("Transpose", {cur_}, {{"perm", perm}});
    layout_ = to;
  }

  void permute(const std::vector<uint64_t>& order) {
    const std::size_t r = rank();
    std::vector<int64_t> perm(order.begin(), order.end());
    auto sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    bool is_permutation = sorted.size() == r;
    for (std::size_t i = 0; is_permutation && i < r; ++i) is_permutation = sorted[i] == static_cast<int64_t>(i);
    if (!is_permutation)
      throw error("order of " + std::to_string(order.size()) + " dimensions is not a permutation of the tensor's " +
                  std::to_string(r));
    add("Transpose", {cur_}, {{"perm", perm}});
    if (!layout_.empty()) {
      std::string names;
      for (auto i : perm) names += layout_.letters()[static_cast<std::size_t>(i)];
      layout_ = Layout(names);
    }
  }

  /// An explicit convert_layout step: to a layout (from the one known here), or by order.
  void convert_layout(const Step& s, const char* unknown_layout) {
    if (s.layout.empty()) return permute(s.order);
    if (layout_.empty()) throw error(unknown_layout);
    transpose_to(s.layout);
  }

  /// Sub or Div by one value, or by one value per channel.
  void per_channel(const char* type, const std::vector<float>& values) {
    if (values.empty()) throw error("no values given");
    require_f32();
    Shape s;
    if (values.size() > 1) {
      long c = axis('C');
      s.assign(rank(), 1);
      s[static_cast<std::size_t>(c)] = static_cast<int64_t>(values.size());
      int64_t have = value().shape.dims[static_cast<std::size_t>(c)];
      if (have >= 0 && have != static_cast<int64_t>(values.size()))
        throw error(std::to_string(values.size()) + " values for " + std::to_string(have) + " channels (dimension 'C' of " +
                    layout_.to_string() + " in " + value().shape.to_string() + ")");
    }
    Tensor t(element_type::f32, s);
    std::copy(values.begin(), values.end(), t.data<float>());
    if (std::string(type) == "Div")
      for (float v : values)
        if (v == 0.0f) throw error("a scale of 0");
    add(type, {cur_, constant("values", std::move(t))});
  }

  void reverse_channels() {
    long c = axis('C');
    int64_t n = value().shape.dims[static_cast<std::size_t>(c)];
    if (n < 0) throw error("the channel dimension of " + value().shape.to_string() + " is dynamic");
    Tensor idx(element_type::i32, {n}); // i32: the GPU binds 32-bit constants as they are
    for (int64_t i = 0; i < n; ++i) idx.data<int32_t>()[i] = static_cast<int32_t>(n - 1 - i);
    add("Gather", {cur_, constant("order", std::move(idx))}, {{"axis", static_cast<int64_t>(c)}});
  }

  void resize(ResizeAlgorithm a, int64_t height, int64_t width) {
    long h = axis('H'), w = axis('W');
    require_f32();
    Tensor sizes(element_type::i64, {2});
    sizes.data<int64_t>()[0] = height;
    sizes.data<int64_t>()[1] = width;
    const auto k = constant("sizes", std::move(sizes));
    std::map<std::string, graph::AttributeValue> attrs{{"axes", std::vector<int64_t>{h, w}}};
    if (a == ResizeAlgorithm::RESIZE_NEAREST) {
      attrs["mode"] = std::string("nearest");
      attrs["coordinate_transformation_mode"] = std::string("asymmetric");
      attrs["nearest_mode"] = std::string("floor");
    } else {
      attrs["mode"] = std::string(a == ResizeAlgorithm::RESIZE_CUBIC ? "cubic" : "linear");
      attrs["coordinate_transformation_mode"] = std::string("half_pixel");
      attrs["cubic_coeff_a"] = -0.75f;
    }
    add("Resize", {cur_, graph::no_value, graph::no_value, k}, std::move(attrs));
  }

  /// The dimension named `name` in the current layout.
  long axis(char name) const {
    if (layout_.empty())
      throw error("needs to know the '" + std::string(1, name) +
                  "' dimension: give a layout (tensor().set_layout or model().set_layout)");
    long i = layout_.index_of(name);
    if (i < 0) throw error("layout " + layout_.to_string() + " has no '" + std::string(1, name) + "' dimension");
    return i;
  }

  std::size_t rank() const {
    if (!value().shape.rank_known) throw error("the tensor's rank is unknown");
    return value().shape.rank();
  }

private:
  /// "x/preprocess/<n>_<step>": the name of the next op (and, with a suffix, of its constants).
  std::string next_name() const { return prefix_ + "/" + std::to_string(ops_.size()) + "_" + step_; }
  graph::ValueId constant(const char* what, Tensor t) { return g_.add_constant(next_name() + "_" + what, std::move(t)); }
  void require_f32() const {
    if (value().type != element_type::f32)
      throw error("needs an f32 tensor, the tensor is " + to_string(value().type) +
                  " here (add convert_element_type(f32) before it)");
  }

  void add(const std::string& type, std::vector<graph::ValueId> inputs, std::map<std::string, graph::AttributeValue> attrs = {}) {
    graph::Op op;
    op.type = type;
    op.name = next_name();
    op.inputs = std::move(inputs);
    op.attrs = std::move(attrs);
    auto out = g_.add_value({op.name, element_type::undefined, PartialShape::unknown_rank(), std::nullopt});
    op.outputs = {out};
    try {
      auto info = graph::infer_op(g_, op);
      g_.value(out).type = info.at(0).type;
      g_.value(out).shape = info.at(0).shape;
    } catch (const Exception& e) {
      throw error(e.what());
    }
    ops_.push_back(std::move(op));
    cur_ = out;
  }

  graph::Graph& g_;
  std::string subject_, prefix_, step_;
  graph::ValueId cur_;
  Layout layout_;
  std::vector<graph::Op> ops_;
};

/// True when every dim known in both is equal.
bool compatible(const PartialShape& a, const PartialShape& b) {
  if (!a.rank_known || !b.rank_known) return true;
  if (a.rank() != b.rank()) return false;
  for (std::size_t i = 0; i < a.rank(); ++i)
    if (a.dims[i] >= 0 && b.dims[i] >= 0 && a.dims[i] != b.dims[i]) return false;
  return true;
}

/// The tensor's shape: given, or the model's permuted to the tensor's layout, with H and W
/// as set (or dynamic when a resize step makes any size fit).
PartialShape tensor_shape(const std::string& subject, const input_plan& p, const PartialShape& model_shape,
                          const Layout& tl, const Layout& ml, bool resizes) {
  auto fail = [&](const std::string& why) { return step_error(subject, "", why); };
  if (p.tensor_shape) return *p.tensor_shape;
  if (!model_shape.rank_known) throw fail("the model input's rank is unknown; give tensor().set_shape");
  PartialShape s = model_shape;
  s.symbols.clear();
  if (!tl.empty() && !ml.empty() && tl != ml) {
    auto perm = permutation(ml, tl);
    if (perm.empty() || ml.rank() != model_shape.rank())
      throw fail("cannot convert the tensor's layout " + tl.to_string() + " to the model's " + ml.to_string() + " of " +
                 model_shape.to_string());
    for (std::size_t i = 0; i < perm.size(); ++i) s.dims[i] = model_shape.dims[static_cast<std::size_t>(perm[i])];
  }
  if (auto why = rank_mismatch("layout", tl, s, "input"); !why.empty()) throw fail(why);
  if (p.height != -2 || resizes) {
    if (!tl.has('H') || !tl.has('W'))
      throw fail("a spatial shape or resize needs the layout's 'H' and 'W': give tensor().set_layout");
    s.dims[static_cast<std::size_t>(tl.index_of('H'))] = p.height >= 0 ? p.height : -1;
    s.dims[static_cast<std::size_t>(tl.index_of('W'))] = p.width >= 0 ? p.width : -1;
  }
  return s;
}

} // namespace

void add_preprocessing(graph::Graph& g, const input_plan& p) {
  const graph::ValueId v = g.inputs.at(p.index);
  const std::string name = g.value(v).name;
  const element_type model_type = g.value(v).type;
  const PartialShape model_shape = g.value(v).shape;
  const Layout ml = !p.model_layout.empty()                  ? p.model_layout
                    : !declared_layout(g.value(v)).empty() ? declared_layout(g.value(v))
                                                           : p.tensor_layout;
  const Layout tl = p.tensor_layout.empty() ? ml : p.tensor_layout;
  bool resizes = false, converts = false, lays_out = false;
  for (const auto& s : p.steps) {
    resizes = resizes || s.kind == Kind::resize;
    converts = converts || s.kind == Kind::convert_element_type;
    lays_out = lays_out || s.kind == Kind::convert_layout;
  }

  const std::string subject = "preprocessing of input '" + name + "'";
  if (auto why = rank_mismatch("model layout", ml, model_shape, "input"); !why.empty())
    throw step_error(subject, "", why);
  const element_type tt = p.tensor_type.value_or(model_type);
  const PartialShape ts = tensor_shape(subject, p, model_shape, tl, ml, resizes);
  graph::Graph work = g;
  const graph::ValueId input = work.add_value({name, tt, ts, std::nullopt});
  work.value(v).name = name + "/model";

  chain c(work, subject, name + "/preprocess", input, tl);
  ColorFormat color = p.color;
  bool layout_pending = !lays_out && !tl.empty() && !ml.empty() && tl != ml;
  // The layout changes as early as the tensor is float, so that the steps after it see the
  // model's layout (the GPU resizes and normalizes NCHW) and nothing moves u8 around twice.
  auto settle_layout = [&] {
    if (!layout_pending || !is_float(c.value().type)) return;
    c.at_step("convert_layout (to the model's " + ml.to_string() + ")");
    c.transpose_to(ml);
    layout_pending = false;
  };
  if (!converts && tt != model_type && is_float(model_type)) {
    c.at_step("convert_element_type (to the model's " + to_string(model_type) + ")");
    c.cast(model_type);
  }
  settle_layout();
  for (const auto& s : p.steps) {
    c.at_step(step_name(s.kind));
    switch (s.kind) {
    case Kind::convert_element_type:
      c.cast(s.type);
      settle_layout();
      break;
    case Kind::convert_color:
      if (color == ColorFormat::UNDEFINED)
        throw c.error("the tensor's color format is not set (tensor().set_color_format)");
      if (s.color != ColorFormat::RGB && s.color != ColorFormat::BGR)
        throw c.error(std::string("cannot convert ") + color_name(color) + " to " + color_name(s.color));
      if (s.color != color) c.reverse_channels();
      color = s.color;
      break;
    case Kind::reverse_channels:
      c.reverse_channels();
      if (color == ColorFormat::RGB) color = ColorFormat::BGR;
      else if (color == ColorFormat::BGR) color = ColorFormat::RGB;
      break;
    case Kind::mean: c.per_channel("Sub", s.values); break;
    case Kind::scale: c.per_channel("Div", s.values); break;
    case Kind::resize: {
      int64_t h = s.height, w = s.width;
      if (h < 0) {
        if (ml.empty() || !ml.has('H') || !ml.has('W'))
          throw c.error("resize to the model's size needs the model's layout with 'H' and 'W' (model().set_layout)");
        h = model_shape.dims[static_cast<std::size_t>(ml.index_of('H'))];
        w = model_shape.dims[static_cast<std::size_t>(ml.index_of('W'))];
        if (h < 0 || w < 0)
          throw c.error("the model's H and W are dynamic in " + model_shape.to_string() +
                        ": reshape the model or give resize(algorithm, height, width)");
      }
      c.resize(s.algorithm, h, w);
      break;
    }
    case Kind::convert_layout: c.convert_layout(s, "the tensor's layout is not known (tensor().set_layout)"); break;
    }
  }
  if (c.value().type != model_type) {
    c.at_step("convert_element_type (to the model's " + to_string(model_type) + ")");
    c.cast(model_type);
  }
  if (!c.layout().empty() && !ml.empty() && c.layout() != ml) {
    c.at_step("convert_layout (to the model's " + ml.to_string() + ")");
    c.transpose_to(ml);
  }
  c.at_step("");
  if (!compatible(c.value().shape, model_shape))
    throw c.error("gives " + to_string(c.value().type) + " " + c.value().shape.to_string() + " but the model wants " +
                  model_shape.to_string() + (resizes ? "" : " (a different H or W needs a resize step)"));
  if (c.ops().empty()) return; // the tensor is what the model wants
  // The last op writes the model's old input value; its own fresh value was the last added.
  auto& last = c.ops().back();
  work.value(v).type = c.value().type;
  work.value(v).shape = c.value().shape;
  if (last.outputs[0] + 1 == static_cast<graph::ValueId>(work.values.size())) work.values.pop_back();
  last.outputs[0] = v;
  work.inputs.at(p.index) = input;
  work.ops.insert(work.ops.begin(), c.ops().begin(), c.ops().end());
  g = std::move(work);
}

void add_postprocessing(graph::Graph& g, const output_plan& p) {
  const graph::ValueId v = g.outputs.at(p.index);
  const std::string name = g.value(v).name;
  const Layout ml = !p.model_layout.empty()                  ? p.model_layout
                    : !declared_layout(g.value(v)).empty() ? declared_layout(g.value(v))
                                                           : p.tensor_layout;
  const Layout tl = p.tensor_layout.empty() ? ml : p.tensor_layout;
  graph::Graph work = g;
  chain c(work, "postprocessing of output '" + name + "'", name + "/postprocess", v, ml);
  if (auto why = rank_mismatch("model layout", ml, c.value().shape, "output"); !why.empty()) throw c.error(why);
  for (const auto& s : p.steps) {
    c.at_step(step_name(s.kind));
    if (s.kind == Kind::convert_element_type) c.cast(s.type);
    else c.convert_layout(s, "the output's layout is not known (model().set_layout)");
  }
  if (p.tensor_type && c.value().type != *p.tensor_type) {
    c.at_step("convert_element_type (to the tensor's " + to_string(*p.tensor_type) + ")");
    c.cast(*p.tensor_type);
  }
  if (!tl.empty() && !c.layout().empty() && c.layout() != tl) {
    c.at_step("convert_layout (to the tensor's " + tl.to_string() + ")");
    c.transpose_to(tl);
  }
  if (c.ops().empty()) return;
  // The last value takes the output's name; the model's own value keeps its readers.
  work.value(v).name = name + "/model";
  work.value(c.current()).name = name;
  work.outputs.at(p.index) = c.current();
  work.ops.insert(work.ops.end(), c.ops().begin(), c.ops().end());
  g = std::move(work);
}

} // namespace troupe
