#pragma once
/// Runs one ONNX test-data case (model.onnx + test_data_set_*/input_N.pb, output_N.pb) on a
/// device through the public API.
#include <troupe/troupe.hpp>

#include <filesystem>
#include <string>

namespace troupe::tests {

struct case_result {
  enum kind { passed, failed, skipped } outcome = passed;
  std::string detail; ///< why it failed or was skipped ("unsupported op 'X'")
};

case_result run_onnx_case(Core& core, const std::filesystem::path& dir, const std::string& device,
                          double rtol = 1e-3, double atol = 1e-5);

} // namespace troupe::tests
