#pragma once
/// The PP-OCR models at the shapes the tests use, with onnxruntime's output for the seeded
/// input (scripts/fetch_test_data.sh puts both under data/).
#include <troupe/troupe.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace troupe::tests {

struct model_case {
  std::string model; ///< file in data/models without .onnx
  Shape shape;
  std::string tag;   ///< 1x3x48x192
};

extern const model_case ppocr_cls, ppocr_rec, ppocr_det320, ppocr_det640;

/// data/ort/<model>_<tag>: onnxruntime's input and output files for the case.
std::filesystem::path ort_dir(const model_case& c);

/// onnxruntime's output for the case (its only output).
std::vector<float> ort_output(const model_case& c);

/// The model's only output on `device` for the seeded input onnxruntime saw. Throws, naming
/// what is missing and how to get it (tests/support/test_data.hpp), when the test data is missing.
std::vector<float> run_on_device(Core& core, const model_case& c, const std::string& device, const AnyMap& props = {});

/// The case's model, read and reshaped to the case's shape (to set affinities on, say).
Model read_case_model(Core& core, const model_case& c);
/// As run_on_device, for a model read with read_case_model (and maybe edited).
std::vector<float> run_model_on_device(Core& core, const model_case& c, const Model& model, const std::string& device,
                                       const AnyMap& props = {});
/// The model's only output, run once on `compiled` with the seeded input onnxruntime saw.
std::vector<float> run_compiled(const model_case& c, CompiledModel& compiled);

} // namespace troupe::tests
