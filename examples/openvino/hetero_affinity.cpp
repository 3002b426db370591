// HETERO with manual affinities, as OpenVINO's documentation sets them: every op the first
// device supports (core.query_model) gets it as its "affinity", the rest the last device;
// ops of type FORCE_TYPE go to the last device too. The affinities are read back from
// get_rt_info() and counted, then the model runs on HETERO:DEVICES.
//   hetero_affinity MODEL DEVICES [FORCE_TYPE]     e.g. hetero_affinity cls.onnx GPU,CPU Softmax
// The input is synthetic: element i is (i mod 255) / 127.5 - 1.
#include <troupe/openvino.hpp>

#include <cstdio>
#include <exception>
#include <map>
#include <string>

int main(int argc, char* argv[]) {
  try {
    if (argc != 3 && argc != 4) {
      std::printf("usage: %s <path_to_model> <device_list> [<op type for the last device>]\n", argv[0]);
      return 1;
    }
    const std::string devices = argv[2], forced = argc == 4 ? argv[3] : "";
    const std::string first = devices.substr(0, devices.find(','));
    const std::string last = devices.substr(devices.rfind(',') + 1);

    ov::Core core;
    std::shared_ptr<ov::Model> model = core.read_model(argv[1]);
    // The samples' model (PP-OCR's direction classifier) has dynamic dims: 1x3x48x192 here.
    if (model->input().get_partial_shape().is_dynamic())
      model->reshape({{model->input(), ov::PartialShape{1, 3, 48, 192}}});
    const ov::SupportedOpsMap supported = core.query_model(model, first);
    for (auto&& op : model->get_ops()) {
      auto it = supported.find(op->get_friendly_name());
      const bool on_first = it != supported.end() && op->get_type_name() != forced;
      op->get_rt_info()["affinity"] = on_first ? it->second : last;
    }
    std::map<std::string, int> per_device;
    for (auto&& op : model->get_ops()) ++per_device[op->get_rt_info()["affinity"].as<std::string>()];
    for (const auto& [device, count] : per_device) std::printf("affinity %s: %d ops\n", device.c_str(), count);

    ov::CompiledModel compiled_model = core.compile_model(model, "HETERO:" + devices);
    std::printf("execution devices:");
    for (const auto& d : compiled_model.get_property(ov::execution_devices)) std::printf(" %s", d.c_str());
    std::printf("\n");
    ov::InferRequest request = compiled_model.create_infer_request();
    ov::Tensor input = request.get_input_tensor();
    for (std::size_t i = 0; i < input.get_size(); ++i)
      input.data<float>()[i] = static_cast<float>(i % 255) / 127.5f - 1.0f;
    request.infer();
    const ov::Tensor out = request.get_output_tensor();
    std::printf("result:");
    for (std::size_t i = 0; i < out.get_size(); ++i) std::printf(" %.9g", out.data<float>()[i]);
    std::printf("\n");
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "%s\n", ex.what());
    return 1;
  }
  return 0;
}
