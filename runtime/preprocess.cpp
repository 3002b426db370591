#include <troupe/preprocess.hpp>

#include <troupe/exception.hpp>

#include "runtime/model_impl.hpp"
#include "runtime/preprocess_graph.hpp"

namespace troupe::preprocess {

namespace {
/// `t` itself, or an error naming the call: strings and undefined have no values to convert.
element_type numeric(element_type t, const char* call) {
  if (element_size(t) == 0) throw Exception(std::string(call) + ": " + to_string(t) + " is not a numeric element type");
  return t;
}
Step step(Step::Kind k) {
  Step s;
  s.kind = k;
  return s;
}
Step values_step(Step::Kind k, std::vector<float> values) {
  Step s = step(k);
  s.values = std::move(values);
  return s;
}
Step layout_step(const Layout& layout) {
  Step s = step(Step::Kind::convert_layout);
  if (layout.empty()) throw Exception("convert_layout: the layout is empty");
  s.layout = layout;
  return s;
}
Step order_step(const std::vector<uint64_t>& order) {
  Step s = step(Step::Kind::convert_layout);
  if (order.empty()) throw Exception("convert_layout: the order is empty");
  s.order = order;
  return s;
}
Step type_step(element_type t) {
  Step s = step(Step::Kind::convert_element_type);
  s.type = numeric(t, "convert_element_type");
  return s;
}
} // namespace

InputTensorInfo& InputTensorInfo::set_element_type(element_type type) {
  type_ = numeric(type, "tensor().set_element_type");
  return *this;
}
InputTensorInfo& InputTensorInfo::set_layout(const Layout& layout) {
  layout_ = layout;
  return *this;
}
InputTensorInfo& InputTensorInfo::set_color_format(ColorFormat format) {
  color_ = format;
  return *this;
}
InputTensorInfo& InputTensorInfo::set_shape(const PartialShape& shape) {
  if (!shape.rank_known) throw Exception("tensor().set_shape: the shape needs a rank");
  shape_ = shape;
  return *this;
}
InputTensorInfo& InputTensorInfo::set_spatial_static_shape(std::size_t height, std::size_t width) {
  if (height == 0 || width == 0) throw Exception("tensor().set_spatial_static_shape: a size of 0");
  height_ = static_cast<int64_t>(height);
  width_ = static_cast<int64_t>(width);
  return *this;
}
InputTensorInfo& InputTensorInfo::set_spatial_dynamic_shape() {
  height_ = width_ = -1;
  return *this;
}

PreProcessSteps& PreProcessSteps::convert_element_type(element_type type) {
  steps_.push_back(type_step(type));
  return *this;
}
PreProcessSteps& PreProcessSteps::convert_color(ColorFormat format) {
  Step s = step(Step::Kind::convert_color);
  s.color = format;
  steps_.push_back(s);
  return *this;
}
PreProcessSteps& PreProcessSteps::mean(float value) { return mean(std::vector<float>{value}); }
PreProcessSteps& PreProcessSteps::mean(const std::vector<float>& values) {
  steps_.push_back(values_step(Step::Kind::mean, values));
  return *this;
}
PreProcessSteps& PreProcessSteps::scale(float value) { return scale(std::vector<float>{value}); }
PreProcessSteps& PreProcessSteps::scale(const std::vector<float>& values) {
  steps_.push_back(values_step(Step::Kind::scale, values));
  return *this;
}
PreProcessSteps& PreProcessSteps::resize(ResizeAlgorithm algorithm) {
  Step s = step(Step::Kind::resize);
  s.algorithm = algorithm;
  steps_.push_back(s);
  return *this;
}
PreProcessSteps& PreProcessSteps::resize(ResizeAlgorithm algorithm, std::size_t height, std::size_t width) {
  if (height == 0 || width == 0) throw Exception("preprocess().resize: a size of 0");
  Step s = step(Step::Kind::resize);
  s.algorithm = algorithm;
  s.height = static_cast<int64_t>(height);
  s.width = static_cast<int64_t>(width);
  steps_.push_back(s);
  return *this;
}
PreProcessSteps& PreProcessSteps::convert_layout(const Layout& layout) {
  steps_.push_back(layout_step(layout));
  return *this;
}
PreProcessSteps& PreProcessSteps::convert_layout(const std::vector<uint64_t>& order) {
  steps_.push_back(order_step(order));
  return *this;
}
PreProcessSteps& PreProcessSteps::reverse_channels() {
  steps_.push_back(step(Step::Kind::reverse_channels));
  return *this;
}

InputModelInfo& InputModelInfo::set_layout(const Layout& layout) {
  layout_ = layout;
  return *this;
}

OutputTensorInfo& OutputTensorInfo::set_element_type(element_type type) {
  type_ = numeric(type, "tensor().set_element_type");
  return *this;
}
OutputTensorInfo& OutputTensorInfo::set_layout(const Layout& layout) {
  layout_ = layout;
  return *this;
}
PostProcessSteps& PostProcessSteps::convert_element_type(element_type type) {
  steps_.push_back(type_step(type));
  return *this;
}
PostProcessSteps& PostProcessSteps::convert_layout(const Layout& layout) {
  steps_.push_back(layout_step(layout));
  return *this;
}
PostProcessSteps& PostProcessSteps::convert_layout(const std::vector<uint64_t>& order) {
  steps_.push_back(order_step(order));
  return *this;
}
OutputModelInfo& OutputModelInfo::set_layout(const Layout& layout) {
  layout_ = layout;
  return *this;
}

InputInfo& PrePostProcessor::input_at(std::size_t index) {
  for (auto& i : inputs_)
    if (i.index_ == index) return i;
  inputs_.emplace_back().index_ = index;
  return inputs_.back();
}
OutputInfo& PrePostProcessor::output_at(std::size_t index) {
  for (auto& o : outputs_)
    if (o.index_ == index) return o;
  outputs_.emplace_back().index_ = index;
  return outputs_.back();
}

InputInfo& PrePostProcessor::input() {
  auto ports = model_.inputs();
  if (ports.size() != 1)
    throw Exception("PrePostProcessor::input() needs a model with one input; model '" + model_.get_friendly_name() +
                    "' has " + std::to_string(ports.size()) + ": " + port_list(ports));
  return input_at(0);
}
InputInfo& PrePostProcessor::input(const std::string& name) { return input_at(model_.input(name).get_index()); }
InputInfo& PrePostProcessor::input(std::size_t index) { return input_at(model_.input(index).get_index()); }
OutputInfo& PrePostProcessor::output() {
  auto ports = model_.outputs();
  if (ports.size() != 1)
    throw Exception("PrePostProcessor::output() needs a model with one output; model '" + model_.get_friendly_name() +
                    "' has " + std::to_string(ports.size()) + ": " + port_list(ports));
  return output_at(0);
}
OutputInfo& PrePostProcessor::output(const std::string& name) { return output_at(model_.output(name).get_index()); }
OutputInfo& PrePostProcessor::output(std::size_t index) { return output_at(model_.output(index).get_index()); }

Model PrePostProcessor::build() {
  graph::Graph g = model_.impl()->graph; // all or nothing
  for (const auto& i : inputs_) {
    input_plan p;
    p.index = i.index_;
    p.tensor_type = i.tensor_.type_;
    p.tensor_layout = i.tensor_.layout_;
    p.model_layout = i.model_.layout_;
    p.color = i.tensor_.color_;
    p.tensor_shape = i.tensor_.shape_;
    p.height = i.tensor_.height_;
    p.width = i.tensor_.width_;
    p.steps = i.steps_.steps_;
    add_preprocessing(g, p);
  }
  for (const auto& o : outputs_) {
    output_plan p;
    p.index = o.index_;
    p.tensor_type = o.tensor_.type_;
    p.tensor_layout = o.tensor_.layout_;
    p.model_layout = o.model_.layout_;
    p.steps = o.steps_.steps_;
    add_postprocessing(g, p);
  }
  rederive_shapes(g);
  model_.impl()->graph = std::move(g);
  return model_;
}

} // namespace troupe::preprocess
