#pragma once
/// Inputs from files or the seeded generator, outputs as float32 files, JSON helpers.
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

namespace troupe::cli {

/// One input tensor per model input: from `files` (name -> path; raw data in the input's own
/// element type) or from the seeded generator (one generator shared across inputs in model
/// order, so the draws continue as in tools/ort/bench.js).
std::vector<Tensor> make_inputs(const CompiledModel& cm, const std::vector<std::string>& file_specs);

/// Element values converted to float.
std::vector<float> to_floats(const Tensor& t);

std::string json_escape(const std::string& s);

} // namespace troupe::cli
