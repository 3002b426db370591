#pragma once
/// An inference request's shared state. It is the completion sink of its inferences: the
/// device worker that finishes one writes the result here and wakes the waiting thread through
/// a condition variable (no scoped_actor round trip on the hot path).
#include <condition_variable>
#include <mutex>

#include <troupe/infer_request.hpp>

#include "actors/messages.hpp"
#include "runtime/compiled_model_impl.hpp"

namespace troupe {

struct InferRequest::Impl : actors::completion_sink, std::enable_shared_from_this<InferRequest::Impl> {
  explicit Impl(std::shared_ptr<CompiledModel::Impl> m);

  void on_outputs(uint64_t request, std::vector<Tensor> outputs,
                  std::vector<kernels::op_profile> profile) noexcept override;
  void on_error(uint64_t request, const actors::failure& f) noexcept override;
  bool wanted(uint64_t request) const noexcept override;

  /// wait()'s condition: not running and no callback running (unless called from inside one).
  bool settled() const;

  /// Completes the running inference `request` unless it already completed; true if it did.
  bool complete(uint64_t request, std::exception_ptr error, std::vector<Tensor>* outputs,
                std::vector<kernels::op_profile>* profile);

  std::shared_ptr<CompiledModel::Impl> model;
  std::vector<Tensor> inputs;       ///< by input index; empty = not set
  std::vector<Tensor> user_outputs; ///< output tensors the user set; results are copied into them

  mutable std::mutex mutex;
  std::condition_variable done_cv;
  uint64_t current = 0;  ///< id of the latest inference
  bool running = false;
  int callbacks_running = 0; ///< wait() also waits for the completion callback to return
  std::exception_ptr error;
  std::vector<Tensor> outputs;
  std::vector<kernels::op_profile> profile;
  std::function<void(std::exception_ptr)> callback;
};

} // namespace troupe
