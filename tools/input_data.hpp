#pragma once
/// The tensors fed to a model: from -i files (raw binary in the input's data type, or .npy),
/// from folders of them, or from the seeded generator; one set of tensors per test
/// configuration or per batch of files, as benchmark_app prepares them.
#include <map>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

#include "tools/input_shapes.hpp"
#include "tools/io_types.hpp"

namespace troupe::cli {

/// -i values by input name: benchmark_app's "name:f1,f2", troupe's "name=file", or files with
/// no name for a model with one input. A folder stands for its .npy, .bin, .raw and .f32
/// files in name order. Errors name the -i value and what is wrong.
std::map<std::string, std::vector<std::string>> parse_input_files(const std::vector<std::string>& specs,
                                                                  const std::vector<Port>& ports);

struct input_sets {
  std::vector<std::vector<Tensor>> sets; ///< sets[s][k]: input k (model order) of set s
  std::vector<std::size_t> configuration; ///< the -data_shape configuration of each set
  std::vector<std::vector<std::string>> sources; ///< [set][input]: what filled it (files or "seeded random")
};

/// One set per test configuration, or more when files outnumber one batch: set s takes the
/// next batch of each input's files (wrapping around). Each file holds one batch item (the
/// whole tensor when the input has no N). Tensors are in the model's element types; data
/// made or read in another type (-ip/-iop) is converted.
input_sets make_input_sets(const input_setup& setup, const std::map<std::string, std::vector<std::string>>& files,
                           const io_types& types);

} // namespace troupe::cli
