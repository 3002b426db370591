#pragma once
/// ov::InferRequest over troupe::InferRequest; ports, names and indices all name the same tensors.
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include <troupe/compiled_model.hpp>
#include <troupe/export.hpp>
#include <troupe/infer_request.hpp>
#include <troupe/profiling_info.hpp>
#include <troupe/openvino/model.hpp>
#include <troupe/openvino/tensor.hpp>

namespace ov {

using ProfilingInfo = troupe::ProfilingInfo;
class CompiledModel;

class InferRequest {
public:
  InferRequest() = default;
  InferRequest(troupe::InferRequest request, troupe::CompiledModel compiled)
      : request_(std::move(request)), compiled_(std::move(compiled)) {}

  void set_tensor(const std::string& name, const Tensor& t) { request_.set_tensor(name, t); }
  void set_tensor(const Output<const Node>& port, const Tensor& t) { request_.set_tensor(port.get_any_name(), t); }
  void set_tensor(const Output<Node>& port, const Tensor& t) { request_.set_tensor(port.get_any_name(), t); }
  void set_input_tensor(std::size_t i, const Tensor& t) { request_.set_input_tensor(i, t); }
  void set_input_tensor(const Tensor& t) { request_.set_input_tensor(t); }
  void set_output_tensor(std::size_t i, const Tensor& t) { request_.set_tensor(compiled_.output(i).get_any_name(), t); }
  void set_output_tensor(const Tensor& t) { request_.set_tensor(only_output().get_any_name(), t); }

  Tensor get_tensor(const std::string& name) { return request_.get_tensor(name); }
  Tensor get_tensor(const Output<const Node>& port) { return request_.get_tensor(port.get_any_name()); }
  Tensor get_tensor(const Output<Node>& port) { return request_.get_tensor(port.get_any_name()); }
  Tensor get_input_tensor(std::size_t i) { return request_.get_input_tensor(i); }
  TROUPE_API Tensor get_input_tensor();
  Tensor get_output_tensor(std::size_t i) { return request_.get_output_tensor(i); }
  TROUPE_API Tensor get_output_tensor();

  void infer() { request_.infer(); }
  void start_async() { request_.start_async(); }
  void wait() { request_.wait(); }
  bool wait_for(std::chrono::milliseconds timeout) { return request_.wait_for(timeout); }
  void cancel() { request_.cancel(); }
  /// Runs on the compiled model's callback thread, never on a device's (troupe's rule).
  void set_callback(std::function<void(std::exception_ptr)> callback) { request_.set_callback(std::move(callback)); }
  std::vector<ProfilingInfo> get_profiling_info() const { return request_.get_profiling_info(); }
  CompiledModel get_compiled_model();

  bool operator!() const noexcept { return !valid(); }
  explicit operator bool() const noexcept { return valid(); }

  /// troupe's handle to the same request.
  const troupe::InferRequest& troupe_request() const { return request_; }

private:
  bool valid() const noexcept { return compiled_.impl() != nullptr; }
  TROUPE_API troupe::Port only_output() const;

  troupe::InferRequest request_;
  troupe::CompiledModel compiled_;
};

} // namespace ov
