#pragma once
/// A public model run on the seeded input onnxruntime saw, every output compared by name:
/// scripts/fetch_test_data.sh's `expect` writes data/ort/<model>_<tag>/ (inputs, outputs,
/// meta.json naming their files, shapes and element types).
#include <troupe/troupe.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/tensor_compare.hpp"
#include "tests/support/test_data.hpp"

namespace troupe::tests {

struct ort_case {
  std::string model; ///< file in data/models without .onnx
  std::string tag;   ///< the shapes as `expect` was given them: 1x256x256x3
};

/// The model, the folder's meta.json and every file it names.
std::vector<data_item> data_of(const ort_case& c);
/// Test-case decorator: the case's model and onnxruntime's folder (see needs_data).
needs_data needs_ort_case(const ort_case& c);

struct output_comparison {
  std::string name; ///< the output's name
  comparison result;
};

/// A case run on a device: the compiled model (its properties), the request (its profiling
/// info, with PERF_COUNT), troupe's outputs by name and onnxruntime's, both in meta.json's order.
struct ort_case_run {
  CompiledModel compiled;
  InferRequest request;
  std::vector<std::pair<std::string, Tensor>> outputs;
  std::vector<Tensor> expected; ///< onnxruntime's output i, for outputs[i]
};

/// The case's tensors as onnxruntime saw and gave them, by name in meta.json's order.
struct ort_case_tensors {
  std::vector<std::pair<std::string, Tensor>> inputs, outputs;
};
/// Reads the case's meta.json and every file it names (require_data first).
ort_case_tensors load_ort_case(const ort_case& c);

/// Reads the model, gives each input the shape and element type onnxruntime ran it at, compiles
/// it on `device` and runs the seeded inputs once. An output troupe lacks, or one of another shape or element
/// type than onnxruntime's, throws naming it. `edit` changes the model before it is compiled.
ort_case_run run_ort_case(Core& core, const ort_case& c, const std::string& device, const AnyMap& props = {},
                          const std::function<void(Model&)>& edit = {});

/// Every output of a run compared with onnxruntime's by `compare_scaled`
/// (max|got - ref| <= rel * max|ref| + abs), as doubles whatever the element type.
std::vector<output_comparison> compare_with_ort(const ort_case_run& run, double rel, double abs);

} // namespace troupe::tests
