// OpenVINO's throughput_benchmark on troupe: the THROUGHPUT hint, as many requests as the device
// wants, each callback starting its request again until ITERATIONS inferences have run.
//   throughput_benchmark MODEL DEVICE ITERATIONS
// Every request's input is the same synthetic one: element i is (i mod 255) / 127.5 - 1.
#include <troupe/openvino.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
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
        core.compile_model(model, argv[2], ov::hint::performance_mode(ov::hint::PerformanceMode::THROUGHPUT));
    const uint32_t nireq = compiled_model.get_property(ov::optimal_number_of_infer_requests);
    std::vector<ov::InferRequest> requests;
    for (uint32_t r = 0; r < nireq; ++r) {
      requests.push_back(compiled_model.create_infer_request());
      ov::Tensor input = requests.back().get_input_tensor();
      for (std::size_t i = 0; i < input.get_size(); ++i)
        input.data<float>()[i] = static_cast<float>(i % 255) / 127.5f - 1.0f;
    }
    requests[0].infer(); // warm-up

    std::mutex mutex;
    std::condition_variable finished;
    int started = 0, running = 0;
    std::exception_ptr failure;
    const auto start = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (auto& request : requests) {
        request.set_callback([&, self = &request](std::exception_ptr ex) {
          std::lock_guard<std::mutex> lock(mutex);
          if (ex) failure = ex;
          if (!failure && started < iterations) {
            ++started;
            self->start_async();
          } else if (--running == 0) {
            finished.notify_all();
          }
        });
        if (started < iterations) {
          ++started, ++running;
          request.start_async();
        }
      }
    }
    {
      std::unique_lock<std::mutex> lock(mutex);
      finished.wait(lock, [&] { return running == 0; });
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (auto& request : requests) request.wait();
    if (failure) std::rethrow_exception(failure);
    std::printf("Requests:   %u\nCount:      %d iterations\nThroughput: %.2f FPS\n", nireq, iterations,
                iterations / seconds);
    const ov::Tensor out = requests[0].get_output_tensor();
    std::printf("result:");
    for (std::size_t i = 0; i < out.get_size(); ++i) std::printf(" %.9g", out.data<float>()[i]);
    std::printf("\n");
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "%s\n", ex.what());
    return 1;
  }
  return 0;
}
