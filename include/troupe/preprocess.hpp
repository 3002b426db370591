#pragma once
/// Pre- and post-processing as ops of the model, with ov::preprocess::PrePostProcessor's shape:
/// describe the tensor the application has (u8, NHWC, BGR) and the steps to the tensor the
/// model wants; build() puts the steps at the front (and back) of the graph, so every device
/// runs them and the application hands its frames over as they are.
///
///   PrePostProcessor ppp(model);
///   ppp.input("x").tensor().set_element_type(element_type::u8).set_layout("NHWC")
///       .set_color_format(ColorFormat::BGR);
///   ppp.input("x").preprocess().convert_element_type(element_type::f32)
///       .convert_color(ColorFormat::RGB).mean({123.7f, 116.3f, 103.5f}).scale({58.4f, 57.1f, 57.4f});
///   ppp.input("x").model().set_layout("NCHW");
///   model = ppp.build();
#include <troupe/export.hpp>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <troupe/element_type.hpp>
#include <troupe/layout.hpp>
#include <troupe/model.hpp>
#include <troupe/partial_shape.hpp>

namespace troupe::preprocess {

enum class ColorFormat { UNDEFINED, RGB, BGR };

/// Linear and cubic use half-pixel centres, nearest takes the pixel at floor(x * in / out):
/// the conventions of OpenCV's INTER_LINEAR, INTER_CUBIC and INTER_NEAREST.
enum class ResizeAlgorithm {
  RESIZE_LINEAR,
  RESIZE_NEAREST,
  RESIZE_CUBIC,
  LINEAR = RESIZE_LINEAR,
  NEAREST = RESIZE_NEAREST,
  CUBIC = RESIZE_CUBIC
};

/// One recorded step (what build() turns into ops).
struct Step {
  enum class Kind { convert_element_type, convert_color, mean, scale, resize, convert_layout, reverse_channels };
  Kind kind;
  element_type type = element_type::undefined; ///< convert_element_type
  ColorFormat color = ColorFormat::UNDEFINED;  ///< convert_color
  std::vector<float> values;                   ///< mean, scale: one value, or one per channel
  ResizeAlgorithm algorithm = ResizeAlgorithm::RESIZE_LINEAR;
  int64_t height = -1, width = -1;             ///< resize target; -1: the model's H and W
  Layout layout;                               ///< convert_layout by layout
  std::vector<uint64_t> order;                 ///< convert_layout by dimension order
};

/// What the application's tensor is.
class TROUPE_API InputTensorInfo {
public:
  InputTensorInfo& set_element_type(element_type type);
  InputTensorInfo& set_layout(const Layout& layout);
  InputTensorInfo& set_color_format(ColorFormat format);
  InputTensorInfo& set_shape(const PartialShape& shape);
  /// H and W of the tensor are fixed / left dynamic; resize() scales them to the model's.
  InputTensorInfo& set_spatial_static_shape(std::size_t height, std::size_t width);
  InputTensorInfo& set_spatial_dynamic_shape();

private:
  friend class PrePostProcessor;
  std::optional<element_type> type_;
  Layout layout_;
  ColorFormat color_ = ColorFormat::UNDEFINED;
  std::optional<PartialShape> shape_;
  int64_t height_ = -2, width_ = -2; ///< -2: not set; -1: dynamic
};

/// The steps from the application's tensor to the model's input, in order.
class TROUPE_API PreProcessSteps {
public:
  PreProcessSteps& convert_element_type(element_type type);
  PreProcessSteps& convert_color(ColorFormat format);
  /// Subtracts: one value for all channels, or one per channel (needs the layout's 'C').
  PreProcessSteps& mean(float value);
  PreProcessSteps& mean(const std::vector<float>& values);
  /// Divides, as mean subtracts.
  PreProcessSteps& scale(float value);
  PreProcessSteps& scale(const std::vector<float>& values);
  /// To the model's H and W (which must be static), or to height x width.
  PreProcessSteps& resize(ResizeAlgorithm algorithm);
  PreProcessSteps& resize(ResizeAlgorithm algorithm, std::size_t height, std::size_t width);
  /// Permutes to `layout` (from the tensor's layout), or by dimension order (as Transpose).
  PreProcessSteps& convert_layout(const Layout& layout);
  PreProcessSteps& convert_layout(const std::vector<uint64_t>& order);
  /// Reverses the channel dimension (RGB <-> BGR).
  PreProcessSteps& reverse_channels();

private:
  friend class PrePostProcessor;
  std::vector<Step> steps_;
};

class TROUPE_API InputModelInfo {
public:
  InputModelInfo& set_layout(const Layout& layout);

private:
  friend class PrePostProcessor;
  Layout layout_;
};

class TROUPE_API InputInfo {
public:
  InputTensorInfo& tensor() { return tensor_; }
  PreProcessSteps& preprocess() { return steps_; }
  InputModelInfo& model() { return model_; }

private:
  friend class PrePostProcessor;
  InputTensorInfo tensor_;
  PreProcessSteps steps_;
  InputModelInfo model_;
  std::size_t index_ = 0;
};

/// What the application wants back.
class TROUPE_API OutputTensorInfo {
public:
  OutputTensorInfo& set_element_type(element_type type);
  OutputTensorInfo& set_layout(const Layout& layout);

private:
  friend class PrePostProcessor;
  std::optional<element_type> type_;
  Layout layout_;
};

class TROUPE_API PostProcessSteps {
public:
  PostProcessSteps& convert_element_type(element_type type);
  PostProcessSteps& convert_layout(const Layout& layout);
  PostProcessSteps& convert_layout(const std::vector<uint64_t>& order);

private:
  friend class PrePostProcessor;
  std::vector<Step> steps_;
};

class TROUPE_API OutputModelInfo {
public:
  OutputModelInfo& set_layout(const Layout& layout);

private:
  friend class PrePostProcessor;
  Layout layout_;
};

class TROUPE_API OutputInfo {
public:
  OutputTensorInfo& tensor() { return tensor_; }
  PostProcessSteps& postprocess() { return steps_; }
  OutputModelInfo& model() { return model_; }

private:
  friend class PrePostProcessor;
  OutputTensorInfo tensor_;
  PostProcessSteps steps_;
  OutputModelInfo model_;
  std::size_t index_ = 0;
};

class TROUPE_API PrePostProcessor {
public:
  explicit PrePostProcessor(Model model) : model_(std::move(model)) {}
  /// The model's only input / output, or by name or index (throws naming the unknown one).
  InputInfo& input();
  InputInfo& input(const std::string& name);
  InputInfo& input(std::size_t index);
  OutputInfo& output();
  OutputInfo& output(const std::string& name);
  OutputInfo& output(std::size_t index);
  /// Adds the steps to the model (all or nothing) and returns it. Throws naming the input or
  /// output, the step and the mismatch when a step does not fit.
  Model build();

private:
  InputInfo& input_at(std::size_t index);
  OutputInfo& output_at(std::size_t index);
  Model model_;
  std::deque<InputInfo> inputs_;   ///< deque: references handed out stay valid
  std::deque<OutputInfo> outputs_;
};

} // namespace troupe::preprocess
