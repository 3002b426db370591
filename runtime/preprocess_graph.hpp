#pragma once
/// PrePostProcessor's steps as ops: a chain in front of a model input (Cast, Gather on the
/// channel axis, Sub, Div, Resize, Transpose), a chain after a model output (Cast, Transpose).
#include <optional>
#include <vector>

#include <troupe/preprocess.hpp>

#include "graph/ir.hpp"

namespace troupe {

/// One input's description, as PrePostProcessor collected it.
struct input_plan {
  std::size_t index = 0; ///< of the model input
  std::optional<element_type> tensor_type;
  Layout tensor_layout, model_layout;
  preprocess::ColorFormat color = preprocess::ColorFormat::UNDEFINED;
  std::optional<PartialShape> tensor_shape;
  int64_t height = -2, width = -2; ///< -2: not set; -1: dynamic
  std::vector<preprocess::Step> steps;
};

struct output_plan {
  std::size_t index = 0; ///< of the model output
  std::optional<element_type> tensor_type;
  Layout tensor_layout, model_layout;
  std::vector<preprocess::Step> steps;
};

/// Puts the input's steps in front of it: a new graph input of the tensor's type and shape
/// takes the input's name and place; ops are prepended. Shapes of the chain are inferred;
/// the caller re-derives the rest of the graph. Throws naming input, step and mismatch.
void add_preprocessing(graph::Graph& g, const input_plan& p);
/// Appends the output's steps; the last value takes the output's name and place.
void add_postprocessing(graph::Graph& g, const output_plan& p);

} // namespace troupe
