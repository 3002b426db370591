#pragma once
/// The messages actors exchange: atoms, one inference (request id + input handles + where its
/// result goes) and one unit of device work. Tensors travel as handles, never as byte copies;
/// these types are local-only (CAF_ALLOW_UNSAFE_MESSAGE_TYPE), remote nodes will need blobs.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include <troupe/tensor.hpp>

#include "kernels/device.hpp"

namespace troupe::actors {

using infer_atom = caf::atom_constant<caf::atom("infer")>;
using run_atom = caf::atom_constant<caf::atom("run")>;
using warm_atom = caf::atom_constant<caf::atom("warm")>;
using forget_atom = caf::atom_constant<caf::atom("forget")>;

/// Where a request's result goes. Called exactly once per submitted request id, on the thread
/// of the actor that finished it (a device worker), so implementations must be cheap and
/// thread-safe. A HETERO stage forwarding to the next subgraph actor is another sink.
using kernels::failure_kind;

/// A request's error: its kind (what a scheduler may re-dispatch) and the message the user sees.
struct failure {
  failure_kind kind = failure_kind::device_failure;
  std::string message;
};

/// The kind of the exception being handled (call inside a catch block): a kernels::device_error
/// says its own; running out of memory is the device's; any other troupe::Exception is the
/// input's (kernels check data and shapes); anything else is the device's.
failure current_failure();

class completion_sink {
public:
  virtual ~completion_sink() = default;
  virtual void on_outputs(uint64_t request, std::vector<Tensor> outputs,
                          std::vector<kernels::op_profile> profile) noexcept = 0;
  virtual void on_error(uint64_t request, const failure& f) noexcept = 0;
  /// A worker is about to run the request (HETERO times each device crossing up to here).
  virtual void on_started(uint64_t) noexcept {}
  /// False once the request was cancelled or superseded: queued work for it is dropped.
  virtual bool wanted(uint64_t request) const noexcept = 0;
};

/// One inference entering a subgraph actor.
struct inference {
  uint64_t request = 0;
  std::vector<Tensor> inputs; ///< in the subgraph's input order
  std::shared_ptr<completion_sink> sink;
  uint64_t age = 0; ///< device_pool::next_age() when the request entered the model: older runs first
};

/// A compiled program shared by every stream: workers clone `prototype` once and keep the clone.
struct program {
  std::unique_ptr<kernels::executable> prototype;
  bool profiling = false; ///< compiled with PERF_COUNT: the worker reads its counters after each run
};

/// A program of `exe`, as every compile path builds one.
inline std::shared_ptr<const program> make_program(std::unique_ptr<kernels::executable> exe, bool profiling) {
  auto p = std::make_shared<program>();
  p->prototype = std::move(exe);
  p->profiling = profiling;
  return p;
}

/// One run handed to a device worker.
struct work {
  inference job;
  std::shared_ptr<const program> prog;
  std::size_t client = 0; ///< the device_pool client (subgraph) it belongs to
};

} // namespace troupe::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::actors::inference)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::actors::work)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<const troupe::actors::program>)
