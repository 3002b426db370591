#pragma once
/// One inference request (as ov::InferRequest). Requests of one compiled model may run
/// concurrently; one request runs one inference at a time.
#include <troupe/export.hpp>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <troupe/profiling_info.hpp>
#include <troupe/tensor.hpp>

namespace troupe {

class TROUPE_API InferRequest {
public:
  struct TROUPE_INTERNAL Impl; ///< hidden: a shared libtroupe exports the public API only
  InferRequest() = default;
  explicit InferRequest(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  /// By input or output name; the tensor is checked against the port's type and shape.
  void set_tensor(const std::string& name, const Tensor& t);
  Tensor get_tensor(const std::string& name);
  void set_input_tensor(std::size_t index, const Tensor& t);
  void set_input_tensor(const Tensor& t); ///< the only input
  Tensor get_input_tensor(std::size_t index = 0);
  Tensor get_output_tensor(std::size_t index = 0);

  /// Runs one inference and waits for it; rethrows its error. An input of static shape that was
  /// never set runs with the request's own zero-filled tensor (get_tensor's), as in OpenVINO; an
  /// unset dynamic input is an error naming it.
  void infer();
  void start_async();
  /// Waits for the running inference; rethrows its error.
  void wait();
  /// True when it completed within the timeout; rethrows its error.
  bool wait_for(std::chrono::milliseconds timeout);
  /// Called on completion (on an engine thread) with the error, if any.
  void set_callback(std::function<void(std::exception_ptr)> callback);
  /// The running inference ends with a "cancelled" error, unless it already completed.
  void cancel();
  /// Per-op counters of the last inference (needs enable_profiling).
  std::vector<ProfilingInfo> get_profiling_info() const;

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace troupe
