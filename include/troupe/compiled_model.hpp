#pragma once
#include <troupe/export.hpp>
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
  /// INFERENCE_PRECISION_HINT, PERF_COUNT, PERFORMANCE_HINT.
  Any get_property(const std::string& name) const;

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace troupe
