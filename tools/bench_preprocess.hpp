#pragma once
/// -ip / -iop input types, -mean_values and -scale_values as steps of the model
/// (PrePostProcessor), as benchmark_app applies them: the device converts and normalizes, and
/// the measurement includes it.
#include <map>
#include <string>

#include <troupe/troupe.hpp>

#include "tools/input_shapes.hpp"

namespace troupe::cli {

/// Adds the steps to `model` and updates each input's type in `setup`; true when it changed
/// the model. `input_types`: the inputs whose type the flags change. Mean and scale need the
/// input's layout (-layout, or the one guessed from its rank) to find 'C'.
bool add_bench_preprocessing(Model& model, input_setup& setup, const std::map<std::string, element_type>& input_types,
                             const std::string& mean_values, const std::string& scale_values);

} // namespace troupe::cli
