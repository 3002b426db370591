#include "runtime/compiled_model_impl.hpp"
#include "runtime/device_properties.hpp"
#include "runtime/device_string.hpp"
#include "runtime/infer_request_impl.hpp"

#include "actors/scheduler.hpp"

#include <troupe/exception.hpp>

#include <algorithm>
#include <map>
#include <ostream>

namespace troupe {

callback_runner& CompiledModel::Impl::callbacks() {
  std::call_once(callbacks_once_, [&] {
    engine::thread_release done{*eng};
    callbacks_ = std::make_unique<callback_runner>(*eng->system);
  });
  return *callbacks_;
}

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
    if (name == "HETERO_NUMBER_OF_SUBMODELS" && !impl_->multi) return Any(split->submodels);
    if (name == "HETERO_PREDICTION" && !impl_->multi) return Any(split->prediction);
    if (name == "HETERO_PREDICTED_TIMES" && !impl_->multi) return Any(split->predicted_times);
  }
  if (auto* multi = impl_->multi.get()) {
    if (name == "DEVICE_PRIORITIES") {
      std::lock_guard lock(multi->mutex);
      return Any(multi->priorities.empty() ? multi->devices : multi->priorities);
    }
    if (name == "SCHEDULE_POLICY") return Any(multi->policy);
    if (name == "REQUESTS_REDISPATCHED") return Any(std::to_string(multi->sched->redispatched()));
    if (name == "REQUESTS_SERVED") {
      const auto served = multi->sched->served();
      std::string r;
      for (std::size_t d = 0; d < served.size(); ++d)
        r += (r.empty() ? "" : ",") + multi->devices[d] + ":" + std::to_string(served[d]);
      return Any(r);
    }
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
  if (name == "RUNTIME_COMPILES") return Any(static_cast<int64_t>(impl_->stats->compiles.load()));
  if (name == "RUNTIME_COMPILE_MS") return Any(static_cast<double>(impl_->stats->compile_us.load()) / 1000.0);
  if (name == "RUNTIME_CACHE_CAPACITY") return Any(static_cast<int64_t>(c.runtime_cache_capacity));
  std::map<std::string, std::string> by_device;
  for (const auto& row : compiled_model_property_table()) {
    auto& to = by_device[row.on];
    to += (to.empty() ? "" : ", ") + std::string(row.name);
  }
  throw Exception("the compiled model has no property '" + name + "'; its properties: " + by_device["all"] + " (and " +
                  by_device["GPU.N"] + " on a GPU, " + by_device["HETERO"] + " on HETERO, " + by_device["MULTI"] +
                  " on MULTI)");
}

void CompiledModel::export_model(std::ostream& stream) const {
  need(impl_);
  if (!impl_->exportable) {
    const bool one_device = !impl_->split && !impl_->multi;
    throw Exception("export_model: the model compiled for " + impl_->device + " cannot be exported: " +
                    (impl_->value_keyed
                         ? std::string("its shapes wait on the values of inputs (it compiles per value at run time)")
                     : one_device ? std::string("its inputs have dynamic shapes (it compiles per shape at run time); "
                                              "reshape the model to static shapes before compile_model")
                                : std::string("only a model compiled for one device can (HETERO, MULTI and AUTO "
                                              "compile each device's part; export those by device)")));
  }
  const std::string bytes = encode_blob(*impl_->exportable);
  stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!stream) throw Exception("export_model: writing the stream failed");
}

void CompiledModel::set_property(const AnyMap& properties) {
  need(impl_);
  engine::thread_release done{*impl_->eng};
  for (const auto& [name, value] : properties) {
    auto* multi = impl_->multi.get();
    if (name != "DEVICE_PRIORITIES" || !multi)
      throw Exception("property '" + name + "' of a model compiled for " + impl_->device +
                      " cannot change after compiling" +
                      (multi ? "" : " (only MULTI's DEVICE_PRIORITIES can)"));
    if (!multi->live_priorities)
      throw Exception("DEVICE_PRIORITIES of a model compiled for " + impl_->device + " with PERFORMANCE_HINT " +
                      impl_->config.hint +
                      " cannot change: AUTO serves from one device (the CPU only helps it); MULTI, or AUTO with "
                      "CUMULATIVE_THROUGHPUT, takes new priorities");
    // Every entry must name devices of the compiled list ("GPU" is every GPU of it).
    const auto listed = parse_priorities("compiled model " + impl_->device, value.as_string());
    std::vector<std::size_t> order;
    std::vector<std::string> names;
    for (const auto& l : listed) {
      if (l.requests)
        throw Exception("DEVICE_PRIORITIES of a compiled model: '" + l.name + "(" + std::to_string(l.requests) +
                        ")': request counts are fixed when compiling");
      bool found = false;
      for (std::size_t d = 0; d < multi->devices.size(); ++d) {
        const auto& n = multi->devices[d];
        if (n == canonical_device_name(l.name) || (l.name == "GPU" && n.rfind("GPU.", 0) == 0)) {
          if (std::find(order.begin(), order.end(), d) != order.end())
            throw Exception("DEVICE_PRIORITIES of a compiled model: device " + n + " is listed twice");
          order.push_back(d);
          names.push_back(n);
          found = true;
        }
      }
      if (!found) {
        std::string all;
        for (const auto& n : multi->devices) all += (all.empty() ? "" : ", ") + n;
        throw Exception("DEVICE_PRIORITIES of a compiled model: device '" + l.name + "' was not in the list it was compiled with (" +
                        all + "); a compiled model cannot add devices");
      }
    }
    {
      std::lock_guard lock(multi->mutex);
      multi->priorities = names;
    }
    multi->sched->set_priorities(std::move(order));
  }
}

} // namespace troupe
