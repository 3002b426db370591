// MULTI with live priorities: requests run on MULTI:DEVICES, then the priority order is
// reversed on the compiled model (ov::device::priorities, taking effect from the next request)
// and more run; adding a device that was not in the compiled list is refused.
//   multi_priorities MODEL DEVICES ROUNDS       e.g. multi_priorities cls.onnx GPU,CPU 8
// The input is synthetic: element i is (i mod 255) / 127.5 - 1.
#include <troupe/openvino.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace {

/// ROUNDS requests in flight together; each one's output as a "result" line.
void run(ov::CompiledModel& compiled, int rounds, const char* phase) {
  std::vector<ov::InferRequest> requests;
  for (int r = 0; r < rounds; ++r) {
    requests.push_back(compiled.create_infer_request());
    ov::Tensor input = requests.back().get_input_tensor();
    for (std::size_t i = 0; i < input.get_size(); ++i)
      input.data<float>()[i] = static_cast<float>(i % 255) / 127.5f - 1.0f;
  }
  for (auto& request : requests) request.start_async();
  for (auto& request : requests) request.wait();
  for (auto& request : requests) {
    const ov::Tensor out = request.get_output_tensor();
    std::printf("result %s:", phase);
    for (std::size_t i = 0; i < out.get_size(); ++i) std::printf(" %.9g", out.data<float>()[i]);
    std::printf("\n");
  }
}

} // namespace

int main(int argc, char* argv[]) {
  try {
    if (argc != 4) {
      std::printf("usage: %s <path_to_model> <device_list> <rounds>\n", argv[0]);
      return 1;
    }
    const std::string devices = argv[2];
    const int rounds = std::atoi(argv[3]);
    OPENVINO_ASSERT(rounds > 0, "rounds must be positive, got '", argv[3], "'");
    ov::Core core;
    std::shared_ptr<ov::Model> model = core.read_model(argv[1]);
    // The samples' model (PP-OCR's direction classifier) has dynamic dims: 1x3x48x192 here.
    if (model->input().get_partial_shape().is_dynamic())
      model->reshape({{model->input(), ov::PartialShape{1, 3, 48, 192}}});
    ov::CompiledModel compiled = core.compile_model(model, "MULTI:" + devices);
    std::printf("priorities: %s\n", compiled.get_property(ov::device::priorities).c_str());
    run(compiled, rounds, "before");

    // Reverse the order while the compiled model serves.
    std::string reversed, rest = devices;
    while (!rest.empty()) {
      const auto comma = rest.rfind(',');
      if (!reversed.empty()) reversed.push_back(',');
      reversed.append(rest, comma == std::string::npos ? 0 : comma + 1);
      rest = comma == std::string::npos ? "" : rest.substr(0, comma);
    }
    compiled.set_property(ov::device::priorities(reversed));
    std::printf("priorities: %s\n", compiled.get_property(ov::device::priorities).c_str());
    run(compiled, rounds, "after");

    // A device the model was not compiled for cannot join.
    try {
      compiled.set_property(ov::device::priorities(reversed + ",REFERENCE"));
      std::printf("adding REFERENCE was accepted\n");
      return 1;
    } catch (const ov::Exception& e) {
      std::printf("refused: %s\n", e.what());
    }
    std::printf("priorities: %s\n", compiled.get_property(ov::device::priorities).c_str());
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "%s\n", ex.what());
    return 1;
  }
  return 0;
}
