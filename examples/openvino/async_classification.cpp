// OpenVINO's classification_sample_async on troupe: as many requests as the device wants
// (ov::optimal_number_of_infer_requests), each with its own image; every completion callback
// starts its request again until ITERATIONS inferences have run.
//   async_classification MODEL DEVICE ITERATIONS
// Request r's image is synthetic: pixel = (31h + 17w + 59c + 101r) mod 256.
#include <troupe/openvino.hpp>

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
    const std::string model_path = argv[1], device_name = argv[2];
    const int iterations = std::atoi(argv[3]);
    OPENVINO_ASSERT(iterations > 0, "iterations must be positive, got '", argv[3], "'");

    ov::Core core;
    std::shared_ptr<ov::Model> model = core.read_model(model_path);
    const std::size_t height = 48, width = 192, channels = 3;
    ov::preprocess::PrePostProcessor ppp(model);
    ppp.input().tensor().set_shape(ov::Shape{1, height, width, channels}).set_element_type(ov::element::u8)
        .set_layout("NHWC");
    ppp.input().preprocess().convert_element_type(ov::element::f32).mean(127.5f).scale(127.5f);
    ppp.input().model().set_layout("NCHW");
    model = ppp.build();

    ov::CompiledModel compiled_model =
        core.compile_model(model, device_name, ov::hint::performance_mode(ov::hint::PerformanceMode::THROUGHPUT));
    const uint32_t nireq = std::max(2u, compiled_model.get_property(ov::optimal_number_of_infer_requests));
    std::printf("%u requests on %s\n", nireq, device_name.c_str());

    std::vector<ov::InferRequest> requests(nireq);
    std::vector<std::vector<float>> results(nireq);
    std::mutex mutex;
    std::condition_variable all_done;
    int started = 0, completed = 0, idle = 0;
    std::exception_ptr failure;
    for (uint32_t r = 0; r < nireq; ++r) {
      requests[r] = compiled_model.create_infer_request();
      ov::Tensor image = requests[r].get_input_tensor();
      unsigned char* pixels = image.data<unsigned char>();
      for (std::size_t h = 0; h < height; ++h)
        for (std::size_t w = 0; w < width; ++w)
          for (std::size_t c = 0; c < channels; ++c)
            pixels[(h * width + w) * channels + c] = static_cast<unsigned char>((31 * h + 17 * w + 59 * c + 101 * r) % 256);
      requests[r].set_callback([&, r](std::exception_ptr ex) {
        std::lock_guard<std::mutex> lock(mutex);
        if (ex) failure = ex;
        ++completed;
        ov::Tensor out = requests[r].get_output_tensor();
        if (!ex) results[r].assign(out.data<float>(), out.data<float>() + out.get_size());
        if (!failure && started < iterations) {
          ++started;
          requests[r].start_async(); // the callback restarts its own request
        } else if (++idle == static_cast<int>(nireq)) {
          all_done.notify_all();
        }
      });
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (auto& request : requests)
        if (started < iterations) ++started, request.start_async();
        else ++idle; // more requests than iterations: this one never runs
    }
    std::unique_lock<std::mutex> lock(mutex);
    all_done.wait(lock, [&] { return idle == static_cast<int>(nireq); });
    for (auto& request : requests) request.wait();
    if (failure) std::rethrow_exception(failure);
    std::printf("Completed %d async requests\n", completed);
    for (uint32_t r = 0; r < nireq; ++r) {
      if (results[r].empty()) continue;
      std::printf("result request %u:", r);
      for (float v : results[r]) std::printf(" %.9g", v);
      std::printf("\n");
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "%s\n", ex.what());
    return 1;
  }
  return 0;
}
