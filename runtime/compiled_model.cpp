#include "runtime/compiled_model_impl.hpp"
#include "runtime/device_properties.hpp"
#include "runtime/infer_request_impl.hpp"

#include <troupe/exception.hpp>

namespace troupe {

namespace {
void need(const std::shared_ptr<CompiledModel::Impl>& impl) {
  if (!impl) throw Exception("CompiledModel: empty handle (not compiled)");
}
} // namespace

InferRequest CompiledModel::create_infer_request() {
  need(impl_);
  return InferRequest(std::make_shared<InferRequest::Impl>(impl_));
}

std::vector<Port> CompiledModel::inputs() const { need(impl_); return impl_->inputs; }
std::vector<Port> CompiledModel::outputs() const { need(impl_); return impl_->outputs; }

Port CompiledModel::input(std::size_t index) const {
  need(impl_);
  if (index >= impl_->inputs.size())
    throw Exception("the compiled model has " + std::to_string(impl_->inputs.size()) + " inputs; no input #" +
                    std::to_string(index));
  return impl_->inputs[index];
}

Port CompiledModel::output(std::size_t index) const {
  need(impl_);
  if (index >= impl_->outputs.size())
    throw Exception("the compiled model has " + std::to_string(impl_->outputs.size()) + " outputs; no output #" +
                    std::to_string(index));
  return impl_->outputs[index];
}

Any CompiledModel::get_property(const std::string& name) const {
  need(impl_);
  const auto& c = impl_->config;
  if (auto* split = impl_->split.get()) {
    std::lock_guard lock(split->mutex);
    if (name == "OPTIMAL_NUMBER_OF_INFER_REQUESTS") return Any(split->optimal_requests);
    if (name == "EXECUTION_DEVICES") return Any(split->devices);
    if (name == "HETERO_NUMBER_OF_SUBMODELS") return Any(split->submodels);
  }
  if (name == "OPTIMAL_NUMBER_OF_INFER_REQUESTS") return Any(c.streams);
  if (name == "EXECUTION_DEVICES") return Any(std::vector<std::string>{impl_->device});
  if (name == "NUM_STREAMS") return Any(c.streams);
  if (name == "INFERENCE_NUM_THREADS") return Any(c.threads_per_stream * c.streams);
  if (name == "INFERENCE_PRECISION_HINT") return Any(c.precision);
  if (name == "PERF_COUNT") return Any(c.profiling);
  if (name == "GPU_F16_ARITHMETIC" && impl_->device.rfind("GPU", 0) == 0) return Any(c.compile.f16_arithmetic);
  if (name == "PERFORMANCE_HINT") return Any(c.hint);
  if (name == "LOADED_FROM_CACHE") return Any(impl_->loaded_from_cache);
  std::string list, gpu_only, hetero_only;
  for (const auto& row : compiled_model_property_table()) {
    auto& to = std::string(row.on) == "all" ? list : std::string(row.on) == "HETERO" ? hetero_only : gpu_only;
    to += (to.empty() ? "" : ", ") + std::string(row.name);
  }
  throw Exception("the compiled model has no property '" + name + "'; its properties: " + list + " (and " + gpu_only +
                  " on a GPU, " + hetero_only + " on HETERO)");
}

} // namespace troupe
