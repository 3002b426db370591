/// OpenVINO's detection heads (domain org.openvinotoolkit): PriorBox, PriorBoxClustered,
/// DetectionOutput, computed by graph/detection.hpp (which also sizes their outputs).
#include "graph/detection.hpp"
#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

/// Writes `v` into the allocated output 0, whose size the shape rule set from the same inputs.
void put(const context& ctx, std::vector<Tensor>& out, const std::vector<float>& v) {
  Tensor& y = output(ctx, out, 0);
  if (y.get_element_type() != element_type::f32 || y.get_size() != static_cast<int64_t>(v.size()))
    fail(ctx, "the output holds " + std::to_string(y.get_size()) + " " + to_string(y.get_element_type()) +
                  " elements where " + std::to_string(v.size()) + " f32 were computed");
  std::copy(v.begin(), v.end(), y.data<float>());
}

/// PriorBox's and PriorBoxClustered's inputs: the feature map's [H, W] and the image's [H, W].
std::array<int64_t, 4> map_and_image(const context& ctx, const std::vector<Tensor>& in) {
  const auto map = to_ints(input(ctx, in, 0)), image = to_ints(input(ctx, in, 1));
  if (map.size() != 2 || image.size() != 2)
    fail(ctx, "the feature map's and the image's sizes must be [H, W] each, not " + std::to_string(map.size()) + " and " +
                  std::to_string(image.size()) + " values");
  return {map[0], map[1], image[0], image[1]};
}

/// PriorBox or PriorBoxClustered: `Params` read from the op, `boxes` computing them.
template <class Params, std::vector<float> (*boxes)(const Params&, int64_t, int64_t, int64_t, int64_t)>
void priors_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const auto [h, w, ih, iw] = map_and_image(ctx, in);
  try {
    put(ctx, out, boxes(Params(ctx.op), h, w, ih, iw));
  } catch (const Exception& e) {
    fail(ctx, e.what());
  }
}

void detection_output_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<const float*> data;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const Tensor& t = input(ctx, in, i);
    if (t.get_element_type() != element_type::f32) fail(ctx, "input " + std::to_string(i) + " must be f32");
    shapes.emplace_back(t.get_shape().begin(), t.get_shape().end());
    data.push_back(t.data<float>());
  }
  try {
    const graph::detection_output_params p(ctx.op);
    const graph::detection_output_sizes s(p, shapes);
    const bool arm = data.size() == 5;
    put(ctx, out, graph::detection_output(p, s, data[0], data[1], data[2], arm ? data[3] : nullptr, arm ? data[4] : nullptr));
  } catch (const Exception& e) {
    fail(ctx, e.what());
  }
}

} // namespace

void register_detection(kernel_map& m) {
  m["PriorBox"] = priors_kernel<graph::prior_box_params, graph::prior_box>;
  m["PriorBoxClustered"] = priors_kernel<graph::prior_box_clustered_params, graph::prior_box_clustered>;
  m["DetectionOutput"] = detection_output_kernel;
}

} // namespace troupe::kernels::reference
