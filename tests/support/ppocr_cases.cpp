#include "tests/support/ppocr_cases.hpp"

#include <cstring>

#include "tests/support/tensor_compare.hpp"
#include "tests/support/test_data.hpp"

namespace fs = std::filesystem;

namespace troupe::tests {

const model_case ppocr_cls{"ch_ppocr_mobile_v2.0_cls_infer", {1, 3, 48, 192}, "1x3x48x192"};
const model_case ppocr_rec{"ch_PP-OCRv4_rec_infer", {1, 3, 48, 320}, "1x3x48x320"};
const model_case ppocr_det320{"ch_PP-OCRv4_det_presigmoid", {1, 3, 320, 320}, "1x3x320x320"};
const model_case ppocr_det640{"ch_PP-OCRv4_det_presigmoid", {1, 3, 640, 640}, "1x3x640x640"};

fs::path ort_dir(const model_case& c) { return data_path("ort/" + c.model + "_" + c.tag); }

std::vector<float> ort_output(const model_case& c) {
  require_data(data_of(c));
  for (const auto& e : fs::directory_iterator(ort_dir(c)))
    if (e.path().filename().string().rfind("output_", 0) == 0) return read_f32_file(e.path().string());
  throw Exception("no reference output in " + ort_dir(c).string());
}

Model read_case_model(Core& core, const model_case& c) {
  require_data(data_of(c));
  Model model = core.read_model(ppocr_model(c.model).path.string());
  model.reshape({{model.input().get_any_name(), PartialShape(c.shape)}});
  return model;
}

std::vector<float> run_on_device(Core& core, const model_case& c, const std::string& device, const AnyMap& props) {
  return run_model_on_device(core, c, read_case_model(core, c), device, props);
}

std::vector<float> run_model_on_device(Core& core, const model_case& c, const Model& model, const std::string& device,
                                       const AnyMap& props) {
  CompiledModel compiled = core.compile_model(model, device, props);
  return run_compiled(c, compiled);
}

std::vector<float> run_compiled(const model_case& c, CompiledModel& compiled) {
  const fs::path ref = ort_dir(c);
  InferRequest request = compiled.create_infer_request();
  auto input = read_f32_file((ref / "input_x.f32").string());
  Tensor x(element_type::f32, c.shape);
  if (static_cast<int64_t>(input.size()) != x.get_size())
    throw Exception((ref / "input_x.f32").string() + " has " + std::to_string(input.size()) + " floats, the input " +
                    std::to_string(x.get_size()));
  std::memcpy(x.data(), input.data(), input.size() * sizeof(float));
  request.set_input_tensor(x);
  request.infer();
  Tensor out = request.get_output_tensor();
  if (out.get_element_type() != element_type::f32) throw Exception(c.model + ": the output is not float32");
  return {out.data<float>(), out.data<float>() + out.get_size()};
}

} // namespace troupe::tests
