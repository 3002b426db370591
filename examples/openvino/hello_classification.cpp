// OpenVINO's hello_classification on troupe: one image (u8, NHWC, BGR) through
// PrePostProcessor, one synchronous inference, the top classes.
//   hello_classification MODEL DEVICE
// The image is synthetic (pixel = (31h + 17w + 59c) mod 256), so the program needs no image
// reader; the model is PP-OCR's direction classifier (48x192, two classes).
#include <troupe/openvino.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <numeric>
#include <string>
#include <vector>

int main(int argc, char* argv[]) {
  try {
    if (argc != 3) {
      std::printf("usage: %s <path_to_model> <device_name>\n", argv[0]);
      return 1;
    }
    const std::string model_path = argv[1], device_name = argv[2];
    std::printf("%s %s\n", ov::get_openvino_version().description, ov::get_openvino_version().buildNumber);

    ov::Core core;
    std::shared_ptr<ov::Model> model = core.read_model(model_path);
    OPENVINO_ASSERT(model->inputs().size() == 1, "Sample supports models with 1 input only");
    OPENVINO_ASSERT(model->outputs().size() == 1, "Sample supports models with 1 output only");

    const std::size_t height = 48, width = 192, channels = 3;
    std::vector<unsigned char> pixels(height * width * channels);
    for (std::size_t h = 0; h < height; ++h)
      for (std::size_t w = 0; w < width; ++w)
        for (std::size_t c = 0; c < channels; ++c)
          pixels[(h * width + w) * channels + c] = static_cast<unsigned char>((31 * h + 17 * w + 59 * c) % 256);
    ov::Tensor input_tensor(ov::element::u8, {1, height, width, channels}, pixels.data());

    ov::preprocess::PrePostProcessor ppp(model);
    ppp.input().tensor().set_shape(input_tensor.get_shape()).set_element_type(ov::element::u8).set_layout("NHWC")
        .set_color_format(ov::preprocess::ColorFormat::BGR);
    ppp.input().preprocess().convert_element_type(ov::element::f32).convert_color(ov::preprocess::ColorFormat::RGB)
        .mean(127.5f).scale(127.5f);
    ppp.input().model().set_layout("NCHW");
    ppp.output().tensor().set_element_type(ov::element::f32);
    model = ppp.build();

    ov::CompiledModel compiled_model = core.compile_model(model, device_name);
    ov::InferRequest infer_request = compiled_model.create_infer_request();
    infer_request.set_input_tensor(input_tensor);
    infer_request.infer();

    const ov::Tensor& output_tensor = infer_request.get_output_tensor();
    const float* scores = output_tensor.data<float>();
    std::vector<std::size_t> order(output_tensor.get_size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
    std::printf("Top %zu results (output shape %s):\n", order.size(), output_tensor.get_shape().to_string().c_str());
    for (auto id : order) std::printf("class %zu: %.6f\n", id, scores[id]);
    std::printf("result:");
    for (std::size_t i = 0; i < output_tensor.get_size(); ++i) std::printf(" %.9g", scores[i]);
    std::printf("\n");
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "%s\n", ex.what());
    return 1;
  }
  return 0;
}
