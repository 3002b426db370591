/// exit_probe DEVICE MODEL MARKER: a program that returns from main while its completion
/// callback still runs. The callback tells main the request completed, then takes a while
/// before it writes MARKER. troupe's exit guard waits for the callback (a system tail) before the
/// exit handlers run, so MARKER exists after the process exits 0; without the guard the
/// process ends under the callback (and a Vulkan driver's exit handlers may run beside it).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include <troupe/troupe.hpp>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s DEVICE MODEL MARKER\n", argv[0]);
    return 2;
  }
  const std::string device = argv[1], marker = argv[3];
  try {
    troupe::Core core;
    auto compiled = core.compile_model(core.read_model(argv[2]), device);
    auto request = compiled.create_infer_request();
    for (const auto& in : compiled.inputs()) {
      troupe::Tensor t(in.get_element_type(), in.get_shape());
      std::fill_n(static_cast<char*>(t.data()), t.get_byte_size(), 0);
      request.set_tensor(in.get_any_name(), t);
    }
    std::promise<void> completed;
    request.set_callback([&completed, marker](std::exception_ptr) {
      completed.set_value();
      // Long enough that main has returned and the exit handlers wait (or run) meanwhile.
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      std::ofstream(marker) << "the callback finished before the process exited\n";
    });
    request.start_async();
    completed.get_future().wait();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exit_probe: %s\n", e.what());
    return 1;
  }
  return 0; // the callback may still be running here
}
