// examples/openvino/hello_classification.cpp in troupe's own spelling (troupe/troupe.hpp): the
// same calls in the same order, the yardstick of scripts/compile_time.sh, which times both.
// Built in the tree (troupe_hello_classification) so that it keeps compiling; it prints the
// same "result:" line as ov_hello_classification.
#include <troupe/troupe.hpp>

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
    std::printf("troupe %s\n", troupe::version());

    troupe::Core core;
    troupe::Model model = core.read_model(model_path);
    if (model.inputs().size() != 1 || model.outputs().size() != 1) throw troupe::Exception("the sample takes models of 1 input and 1 output");

    const std::size_t height = 48, width = 192, channels = 3;
    std::vector<unsigned char> pixels(height * width * channels);
    for (std::size_t h = 0; h < height; ++h)
      for (std::size_t w = 0; w < width; ++w)
        for (std::size_t c = 0; c < channels; ++c)
          pixels[(h * width + w) * channels + c] = static_cast<unsigned char>((31 * h + 17 * w + 59 * c) % 256);
    const troupe::Shape shape{1, static_cast<int64_t>(height), static_cast<int64_t>(width), static_cast<int64_t>(channels)};
    troupe::Tensor input_tensor(troupe::element_type::u8, shape, pixels.data());

    using namespace troupe::preprocess;
    PrePostProcessor ppp(model);
    ppp.input().tensor().set_shape(troupe::PartialShape(shape)).set_element_type(troupe::element_type::u8).set_layout("NHWC")
        .set_color_format(ColorFormat::BGR);
    ppp.input().preprocess().convert_element_type(troupe::element_type::f32).convert_color(ColorFormat::RGB).mean({127.5f}).scale(127.5f);
    ppp.input().model().set_layout("NCHW");
    ppp.output().tensor().set_element_type(troupe::element_type::f32);
    model = ppp.build();

    troupe::CompiledModel compiled_model = core.compile_model(model, device_name);
    troupe::InferRequest infer_request = compiled_model.create_infer_request();
    infer_request.set_input_tensor(input_tensor);
    infer_request.infer();

    const troupe::Tensor output_tensor = infer_request.get_output_tensor();
    const float* scores = output_tensor.data<float>();
    std::vector<std::size_t> order(static_cast<std::size_t>(output_tensor.get_size()));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
    std::printf("Top %zu results (output shape %s):\n", order.size(), troupe::to_string(output_tensor.get_shape()).c_str());
    for (auto id : order) std::printf("class %zu: %.6f\n", id, scores[id]);
    std::printf("result:");
    for (std::size_t i = 0; i < order.size(); ++i) std::printf(" %.9g", scores[i]);
    std::printf("\n");
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "%s\n", ex.what());
    return 1;
  }
  return 0;
}
