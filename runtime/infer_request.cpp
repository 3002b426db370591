#include "runtime/infer_request_impl.hpp"

#include <cstring>

#include <troupe/exception.hpp>

#include "actors/subgraph_actor.hpp"
#include "runtime/callback_runner.hpp"
#include "runtime/model_impl.hpp"
#include "runtime/port_check.hpp"

namespace troupe {

namespace {
/// The request whose completion callback this thread is running: its wait() must not wait
/// for that callback to return.
thread_local const InferRequest::Impl* in_callback_of = nullptr;
} // namespace

bool InferRequest::Impl::settled() const {
  // On the callback thread, callbacks run one after another: waiting there for one to return
  // would wait for a job queued behind the one running.
  return !running && (callbacks_running == 0 || in_callback_of == this || callback_runner::on_callback_thread());
}

InferRequest::Impl::Impl(std::shared_ptr<CompiledModel::Impl> m) : model(std::move(m)) {
  inputs.resize(model->inputs.size());
  user_outputs.resize(model->outputs.size());
}

bool InferRequest::Impl::wanted(uint64_t request) const noexcept {
  std::lock_guard lock(mutex);
  return running && request == current;
}

bool InferRequest::Impl::complete(uint64_t request, std::exception_ptr err, std::vector<Tensor>* outs,
                                  std::vector<kernels::op_profile>* prof) {
  std::function<void(std::exception_ptr)> cb;
  {
    std::lock_guard lock(mutex);
    if (!running || request != current) return false;
    if (outs && !err) {
      // Results go into the tensors the user set for outputs, when their shapes agree.
      for (std::size_t i = 0; i < outs->size() && i < user_outputs.size(); ++i) {
        auto& u = user_outputs[i];
        auto& o = (*outs)[i];
        if (!u.empty() && u.get_element_type() == o.get_element_type() && u.get_shape() == o.get_shape() &&
            !u.shares_buffer(o)) {
          o.copy_to(u);
          o = u;
        }
      }
      outputs = std::move(*outs);
    }
    if (prof) profile = std::move(*prof);
    error = err;
    running = false;
    cb = callback;
    if (cb) ++callbacks_running;
  }
  if (cb) {
    // Off the device worker's thread (this one may be it): a slow callback must not stall a
    // device. wait() returns once the callback has.
    model->callbacks().post([self = shared_from_this(), cb = std::move(cb), err] {
      auto* outer = in_callback_of;
      in_callback_of = self.get();
      try {
        cb(err);
      } catch (...) {
        // A throwing callback must not take the callback thread down.
      }
      in_callback_of = outer;
      {
        std::lock_guard lock(self->mutex);
        --self->callbacks_running;
      }
      self->done_cv.notify_all();
    });
  }
  done_cv.notify_all();
  return true;
}

void InferRequest::Impl::on_outputs(uint64_t request, std::vector<Tensor> outs,
                                    std::vector<kernels::op_profile> prof) noexcept {
  try {
    if (outs.size() != model->outputs.size()) {
      complete(request,
               std::make_exception_ptr(Exception("the device returned " + std::to_string(outs.size()) +
                                                 " outputs, the model has " + std::to_string(model->outputs.size()))),
               nullptr, nullptr);
      return;
    }
    complete(request, nullptr, &outs, &prof);
  } catch (...) {
  }
}

void InferRequest::Impl::on_error(uint64_t request, const actors::failure& f) noexcept {
  try {
    complete(request, std::make_exception_ptr(Exception(f.message)), nullptr, nullptr);
  } catch (...) {
  }
}

namespace {

std::size_t find_port(const std::vector<Port>& ports, const std::string& name) {
  for (std::size_t i = 0; i < ports.size(); ++i)
    if (ports[i].get_any_name() == name) return i;
  return ports.size();
}

} // namespace

void InferRequest::set_tensor(const std::string& name, const Tensor& t) {
  if (!impl_) throw Exception("InferRequest: empty request");
  const auto& m = *impl_->model;
  auto i = find_port(m.inputs, name);
  std::lock_guard lock(impl_->mutex);
  if (impl_->running) throw Exception("set_tensor('" + name + "'): the request is busy running an inference");
  if (i < m.inputs.size()) {
    check_tensor("input", m.inputs[i], t);
    impl_->inputs[i] = t;
    return;
  }
  auto o = find_port(m.outputs, name);
  if (o < m.outputs.size()) {
    check_tensor("output", m.outputs[o], t);
    impl_->user_outputs[o] = t;
    return;
  }
  throw Exception("no input or output named '" + name + "'; inputs: " + port_list(m.inputs) +
                  "; outputs: " + port_list(m.outputs));
}

Tensor InferRequest::get_tensor(const std::string& name) {
  if (!impl_) throw Exception("InferRequest: empty request");
  const auto& m = *impl_->model;
  auto i = find_port(m.inputs, name);
  if (i < m.inputs.size()) return get_input_tensor(i);
  auto o = find_port(m.outputs, name);
  if (o < m.outputs.size()) return get_output_tensor(o);
  throw Exception("no input or output named '" + name + "'; inputs: " + port_list(m.inputs) +
                  "; outputs: " + port_list(m.outputs));
}

void InferRequest::set_input_tensor(std::size_t index, const Tensor& t) {
  if (!impl_) throw Exception("InferRequest: empty request");
  const auto& ins = impl_->model->inputs;
  if (index >= ins.size())
    throw Exception("no input #" + std::to_string(index) + "; the model has " + std::to_string(ins.size()) +
                    " inputs: " + port_list(ins));
  set_tensor(ins[index].get_any_name(), t);
}

void InferRequest::set_input_tensor(const Tensor& t) {
  if (!impl_) throw Exception("InferRequest: empty request");
  const auto& ins = impl_->model->inputs;
  if (ins.size() != 1)
    throw Exception("set_input_tensor without an index needs a model with one input; this one has " +
                    std::to_string(ins.size()) + ": " + port_list(ins));
  set_input_tensor(0, t);
}

Tensor InferRequest::get_input_tensor(std::size_t index) {
  if (!impl_) throw Exception("InferRequest: empty request");
  const auto& ins = impl_->model->inputs;
  if (index >= ins.size())
    throw Exception("no input #" + std::to_string(index) + "; the model has " + std::to_string(ins.size()) +
                    " inputs: " + port_list(ins));
  std::lock_guard lock(impl_->mutex);
  auto& t = impl_->inputs[index];
  if (t.empty()) {
    // As OpenVINO: an allocated tensor of the port's shape that the user fills in place.
    const auto& p = ins[index];
    if (!p.get_partial_shape().is_static())
      throw Exception("input '" + p.get_any_name() + "' has dynamic shape " + p.get_partial_shape().to_string() +
                      "; set_tensor it with a concrete shape first");
    t = Tensor(p.get_element_type(), p.get_shape());
  }
  return t;
}

Tensor InferRequest::get_output_tensor(std::size_t index) {
  if (!impl_) throw Exception("InferRequest: empty request");
  const auto& outs = impl_->model->outputs;
  if (index >= outs.size())
    throw Exception("no output #" + std::to_string(index) + "; the model has " + std::to_string(outs.size()) +
                    " outputs: " + port_list(outs));
  std::lock_guard lock(impl_->mutex);
  if (index < impl_->outputs.size() && !impl_->outputs[index].empty()) return impl_->outputs[index];
  if (!impl_->user_outputs[index].empty()) return impl_->user_outputs[index];
  const auto& p = outs[index];
  if (!p.get_partial_shape().is_static())
    throw Exception("output '" + p.get_any_name() + "' has dynamic shape " + p.get_partial_shape().to_string() +
                    " and no inference has produced it yet");
  impl_->user_outputs[index] = Tensor(p.get_element_type(), p.get_shape());
  return impl_->user_outputs[index];
}

void InferRequest::start_async() {
  if (!impl_) throw Exception("InferRequest: empty request");
  auto& s = *impl_;
  actors::inference job;
  {
    std::lock_guard lock(s.mutex);
    if (s.running) throw Exception("start_async: the request is busy running an inference");
    for (std::size_t i = 0; i < s.inputs.size(); ++i) {
      if (!s.inputs[i].empty()) continue;
      const auto& p = s.model->inputs[i];
      // As OpenVINO: a request of a static-shaped input owns a zero-filled tensor of it (the one
      // get_tensor hands out), so create_infer_request(); infer(); runs. Allocated here, at first
      // need, so an application that sets its own tensors never pays for it.
      if (p.get_partial_shape().is_static()) {
        s.inputs[i] = Tensor(p.get_element_type(), p.get_shape());
        continue;
      }
      throw Exception("input '" + p.get_any_name() + "' is not set (shape " + p.get_partial_shape().to_string() +
                      ", type " + to_string(p.get_element_type()) + "): a dynamic input needs set_tensor");
    }
    // Again here: a tensor the request handed out may have been reshaped in place since.
    for (std::size_t i = 0; i < s.inputs.size(); ++i) check_tensor("input", s.model->inputs[i], s.inputs[i]);
    check_named_dims(s.model->inputs, s.inputs);
    job.request = ++s.current;
    job.inputs = s.inputs;
    s.running = true;
    s.error = nullptr;
    s.outputs.clear();
  }
  job.sink = impl_;
  s.model->runner->submit(std::move(job));
}

void InferRequest::wait() {
  if (!impl_) throw Exception("InferRequest: empty request");
  std::unique_lock lock(impl_->mutex);
  impl_->done_cv.wait(lock, [&] { return impl_->settled(); });
  if (impl_->error) std::rethrow_exception(impl_->error);
}

bool InferRequest::wait_for(std::chrono::milliseconds timeout) {
  if (!impl_) throw Exception("InferRequest: empty request");
  std::unique_lock lock(impl_->mutex);
  if (!impl_->done_cv.wait_for(lock, timeout, [&] { return impl_->settled(); })) return false;
  if (impl_->error) std::rethrow_exception(impl_->error);
  return true;
}

void InferRequest::infer() {
  start_async();
  wait();
}

void InferRequest::set_callback(std::function<void(std::exception_ptr)> callback) {
  if (!impl_) throw Exception("InferRequest: empty request");
  std::lock_guard lock(impl_->mutex);
  impl_->callback = std::move(callback);
}

void InferRequest::cancel() {
  if (!impl_) throw Exception("InferRequest: empty request");
  uint64_t id;
  {
    std::lock_guard lock(impl_->mutex);
    if (!impl_->running) return;
    id = impl_->current;
  }
  impl_->complete(id, std::make_exception_ptr(Exception("the inference was cancelled")), nullptr, nullptr);
}

std::vector<ProfilingInfo> InferRequest::get_profiling_info() const {
  if (!impl_) throw Exception("InferRequest: empty request");
  if (!impl_->model->config.profiling)
    throw Exception("get_profiling_info: profiling is off; compile the model with PERF_COUNT=YES");
  std::lock_guard lock(impl_->mutex);
  std::vector<ProfilingInfo> r;
  for (const auto& p : impl_->profile) {
    ProfilingInfo i;
    i.status = p.state == kernels::op_profile::status::executed ? ProfilingInfo::Status::EXECUTED
                                                                 : ProfilingInfo::Status::OPTIMIZED_OUT;
    i.real_time = std::chrono::microseconds(static_cast<int64_t>(p.real_time_us));
    i.cpu_time = i.real_time;
    i.node_name = p.node_name;
    i.exec_type = p.exec_type;
    i.node_type = p.node_type;
    r.push_back(std::move(i));
  }
  return r;
}

} // namespace troupe
