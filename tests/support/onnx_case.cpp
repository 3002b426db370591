#include "tests/support/onnx_case.hpp"

#include "graph/onnx_reader.hpp"
#include "tests/support/tensor_compare.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace troupe::tests {

namespace {

/// input_0.pb, input_1.pb, ... in index order.
std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> r;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    r.push_back(p);
  }
  return r;
}

/// Error messages carry the case's path; drop it so reasons group across cases.
std::string without_paths(std::string msg, const fs::path& dir) {
  const std::string d = dir.string();
  for (std::size_t at; (at = msg.find(d)) != std::string::npos;) msg.erase(at, d.size());
  return msg;
}

/// ONNX 1.12 stores bfloat16 test tensors as uint16 bit patterns: view them as bf16.
Tensor as_bf16(const Tensor& t) {
  Tensor r(element_type::bf16, t.get_shape());
  if (t.get_byte_size()) std::memcpy(r.data(), t.data(), t.get_byte_size());
  return r;
}

case_result make(case_result::kind k, std::string detail) {
  case_result r;
  r.outcome = k;
  r.detail = std::move(detail);
  return r;
}

} // namespace

case_result run_onnx_case(Core& core, const fs::path& dir, const std::string& device, double rtol, double atol) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return make(case_result::skipped, "no test data sets");

  std::optional<Model> model;
  try {
    model = core.read_model((dir / "model.onnx").string());
  } catch (const Exception& e) {
    return make(case_result::skipped, "model not readable: " + without_paths(e.what(), dir));
  }
  // Skip (naming the op) when any op lacks support on this device.
  std::map<std::string, std::string> supported;
  try {
    supported = core.query_model(*model, device);
  } catch (const Exception& e) {
    return make(case_result::failed, std::string("query_model: ") + e.what());
  }
  std::set<std::string> missing;
  for (const auto& node : model->get_ops())
    if (!supported.count(node.get_friendly_name())) missing.insert(node.get_type_name());
  if (!missing.empty()) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
    return make(case_result::skipped, "unsupported op on " + device + ": " + names);
  }

  for (const auto& set : sets) {
    try {
      auto in_files = numbered(set, "input_");
      auto out_files = numbered(set, "output_");
      auto ports = model->inputs();
      if (in_files.size() != ports.size())
        return make(case_result::skipped, "test data gives " + std::to_string(in_files.size()) + " of " +
                                              std::to_string(ports.size()) + " inputs (optional inputs omitted)");
      std::vector<Tensor> inputs;
      std::map<std::string, PartialShape> shapes;
      for (std::size_t i = 0; i < in_files.size(); ++i) {
        inputs.push_back(graph::read_onnx_tensor_file(in_files[i].string()));
        if (ports[i].get_element_type() == element_type::bf16 && inputs.back().get_element_type() == element_type::u16)
          inputs.back() = as_bf16(inputs.back());
        shapes[ports[i].get_any_name()] = PartialShape(inputs.back().get_shape());
      }
      model->reshape(shapes);
      auto compiled = core.compile_model(*model, device);
      auto request = compiled.create_infer_request();
      for (std::size_t i = 0; i < inputs.size(); ++i) request.set_input_tensor(i, inputs[i]);
      request.infer();
      if (out_files.size() != compiled.outputs().size())
        return make(case_result::failed, "model has " + std::to_string(compiled.outputs().size()) + " outputs, data " +
                                             std::to_string(out_files.size()));
      for (std::size_t i = 0; i < out_files.size(); ++i) {
        Tensor expected = graph::read_onnx_tensor_file(out_files[i].string());
        Tensor got = request.get_output_tensor(i);
        if (got.get_element_type() == element_type::bf16 && expected.get_element_type() == element_type::u16)
          expected = as_bf16(expected);
        // One ulp of a 16-bit float near 1.
        const bool half = got.get_element_type() == element_type::f16 || got.get_element_type() == element_type::bf16;
        auto c = compare(got, expected, rtol, half ? std::max(atol, 1e-3) : atol);
        if (!c.ok)
          return make(case_result::failed, set.filename().string() + " output " + std::to_string(i) + ": " + c.message);
      }
    } catch (const std::exception& e) {
      return make(case_result::failed, set.filename().string() + ": " + without_paths(e.what(), dir));
    }
  }
  return make(case_result::passed, "");
}

} // namespace troupe::tests
