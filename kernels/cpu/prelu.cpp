/// PRelu on oneDNN's prelu primitive: y = x where x >= 0, else slope * x, the slope broadcast as
/// ONNX's unidirectional broadcasting gives it (one value, one per channel, or any dims of x's).
/// A slope per channel (InsightFace's, MTCNN's) is the common case; one slope for all has become
/// LeakyRelu before (graph/legacy_prelu.cpp). oneDNN 2.6 has no jit kernel for some layouts
/// (blocked x with a plain slope): those stay on the reference kernel.
#include <string>
#include <vector>

#include "kernels/cpu/plan_builder.hpp"

namespace troupe::kernels::cpu {

bool build_prelu(plan_builder& b, const graph::Op& op) {
  using dt = memory::data_type;
  if (op.input_count() != 2 || op.inputs[1] == graph::no_value) return false;
  const graph::ValueId X = op.inputs[0], S = op.inputs[1], Y = op.outputs[0];
  if (b.val(X).type != element_type::f32 || b.val(S).type != element_type::f32 || b.val(Y).type != element_type::f32 ||
      !b.val(S).shape.is_static())
    return false;
  const Shape xs = b.shape(X);
  Shape ss = b.shape(S);
  if (xs.empty() || ss.size() > xs.size() || shape_size(xs) == 0) return false;
  while (ss.size() < xs.size()) ss.insert(ss.begin(), 1);
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (ss[i] != xs[i] && ss[i] != 1) return false;
  // The slope as a buffer of x's rank: a constant reshaped, or a run-time value of that rank.
  if (!b.g.is_constant(S) && b.shape(S).size() != xs.size()) return false;
  // oneDNN's jit prelu takes the slope in a layout of its choosing and x in plain, channels-last
  // or blocked layouts: x where it lives first (a convolution's blocked output), else the others;
  // its reference implementation (slower than troupe's own) is not used.
  const memory::desc wei(memory::dims(ss.begin(), ss.end()), dt::f32, memory::format_tag::any);
  std::vector<memory::desc> layouts;
  const memory::desc here = b.current_md(X);
  if (here != memory::desc() && here.data_type() == dt::f32 && here.dims() == memory::dims(xs.begin(), xs.end())) layouts.push_back(here);
  layouts.push_back(plain_md(xs, dt::f32));
  if (xs.size() == 4) layouts.emplace_back(memory::dims(xs.begin(), xs.end()), dt::f32, memory::format_tag::nhwc);
  dnnl::prelu_forward::primitive_desc pd;
  bool found = false;
  for (const auto& src : layouts) {
    try {
      pd = dnnl::prelu_forward::primitive_desc(dnnl::prelu_forward::desc(dnnl::prop_kind::forward_inference, src, wei),
                                               plan_builder::base_attr(), b.p.eng);
    } catch (const dnnl::error&) {
      continue;
    }
    if (std::string(pd.impl_info_str()).rfind("ref", 0) != 0) {
      found = true;
      break;
    }
  }
  if (!found) return false;
  const int slope = b.g.is_constant(S) ? b.const_buffer(b.reorder_constant(b.val(S).constant->clone().reshaped(ss), plain_md(ss, dt::f32), pd.weights_desc()))
                                       : b.input(S, pd.weights_desc());
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(X, pd.src_desc()), pd.src_desc()},
                            {DNNL_ARG_WEIGHTS, slope, pd.weights_desc()},
                            {DNNL_ARG_DST, b.output(Y, pd.dst_desc()), pd.dst_desc()}};
  b.add_dnnl(op, pd, dnnl::prelu_forward(pd), std::move(args));
  return true;
}

} // namespace troupe::kernels::cpu
