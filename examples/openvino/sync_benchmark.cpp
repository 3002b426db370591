// OpenVINO's sync_benchmark on troupe: the LATENCY hint, one request, ITERATIONS synchronous
// inferences; the median latency and the output of the last one.
//   sync_benchmark MODEL DEVICE ITERATIONS
// The input is synthetic: element i is (i mod 255) / 127.5 - 1.
#include <troupe/openvino.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

int main(int argc, char* argv[]) {
  try {
    if (argc != 4) {
      std::printf("usage: %s <path_to_model> <device_name> <iterations>\n", argv[0]);
      return 1;
    }
    const int iterations = std::atoi(argv[3]);
    OPENVINO_ASSERT(iterations > 0, "iterations must be positive, got '", argv[3], "'");
    ov::Core core;
    std::shared_ptr<ov::Model> model = core.read_model(argv[1]);
    // The samples' model (PP-OCR's direction classifier) has dynamic dims: 1x3x48x192 here.
    if (model->input().get_partial_shape().is_dynamic())
      model->reshape({{model->input(), ov::PartialShape{1, 3, 48, 192}}});
    ov::CompiledModel compiled_model =
        core.compile_model(model, argv[2], ov::hint::performance_mode(ov::hint::PerformanceMode::LATENCY));
    ov::InferRequest request = compiled_model.create_infer_request();
    ov::Tensor input = request.get_input_tensor();
    for (std::size_t i = 0; i < input.get_size(); ++i)
      input.data<float>()[i] = static_cast<float>(i % 255) / 127.5f - 1.0f;

    request.infer(); // warm-up
    std::vector<double> latencies;
    for (int i = 0; i < iterations; ++i) {
      const auto start = std::chrono::steady_clock::now();
      request.infer();
      latencies.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(latencies.begin(), latencies.end());
    double total = 0;
    for (double l : latencies) total += l;
    std::printf("Count:      %d iterations\n", iterations);
    std::printf("Latency:\n    Median: %.2f ms\n    Min:    %.2f ms\n    Max:    %.2f ms\n",
                latencies[latencies.size() / 2], latencies.front(), latencies.back());
    std::printf("Throughput: %.2f FPS\n", 1000.0 * iterations / total);
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
