#pragma once
#include <troupe/export.hpp>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <troupe/any.hpp>
#include <troupe/infer_request.hpp>
#include <troupe/model.hpp>

namespace troupe {

/// A model compiled for a device (as ov::CompiledModel).
class TROUPE_API CompiledModel {
public:
  struct TROUPE_INTERNAL Impl; ///< hidden: a shared libtroupe exports the public API only
  CompiledModel() = default;
  explicit CompiledModel(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  InferRequest create_infer_request();
  std::vector<Port> inputs() const;
  std::vector<Port> outputs() const;
  Port input(std::size_t index = 0) const;
  Port output(std::size_t index = 0) const;
  /// OPTIMAL_NUMBER_OF_INFER_REQUESTS, EXECUTION_DEVICES, NUM_STREAMS, INFERENCE_NUM_THREADS,
  /// INFERENCE_PRECISION_HINT, PERF_COUNT, PERFORMANCE_HINT; see docs/properties.md.
  Any get_property(const std::string& name) const;
  /// What may change while the model serves: MULTI's (and AUTO's with CUMULATIVE_THROUGHPUT)
  /// DEVICE_PRIORITIES, taking effect from the next request dispatched. Anything else, and a
  /// device that was not in the compiled list, is an error naming it.
  void set_property(const AnyMap& properties);

  /// Writes the compiled model (its optimized graph, for the device it was compiled for) for
  /// Core::import_model. One device and static shapes only: HETERO, MULTI, AUTO and a model
  /// with dynamic inputs are an error saying so.
  void export_model(std::ostream& stream) const;

  const std::shared_ptr<Impl>& impl() const { return impl_; }

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace troupe
