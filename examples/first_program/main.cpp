/// troupe's first program: PP-OCR's text-direction classifier on one 48x192 text-line image
/// (raw float32, CHW, values in [0,1)), on the device given (CPU by default).
#include <cstdio>
#include <fstream>
#include <string>

#include <troupe/troupe.hpp>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s ch_ppocr_mobile_v2.0_cls_infer.onnx image.f32 [DEVICE]\n", argv[0]);
    return 2;
  }
  const std::string device = argc > 3 ? argv[3] : "CPU";
  try {
    troupe::Core core;
    troupe::Model model = core.read_model(argv[1]);
    model.reshape(troupe::PartialShape{1, 3, 48, 192});
    troupe::CompiledModel compiled = core.compile_model(model, device);
    troupe::InferRequest request = compiled.create_infer_request();

    troupe::Tensor image(troupe::element_type::f32, {1, 3, 48, 192});
    std::ifstream file(argv[2], std::ios::binary | std::ios::ate);
    if (!file || static_cast<std::size_t>(file.tellg()) != image.get_byte_size())
      throw troupe::Exception(std::string(argv[2]) + ": expected " + std::to_string(image.get_byte_size()) +
                              " bytes of float32");
    file.seekg(0).read(static_cast<char*>(image.data()), static_cast<std::streamsize>(image.get_byte_size()));

    request.set_input_tensor(image);
    request.infer(); // or start_async() + wait(), or set_callback()
    troupe::Tensor probs = request.get_output_tensor();
    std::printf("troupe %s, %s: 0 degrees %.6f, 180 degrees %.6f\n", troupe::version(), device.c_str(),
                probs.data<float>()[0], probs.data<float>()[1]);
    return 0;
  } catch (const troupe::Exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
