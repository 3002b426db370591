/// InferRequest: inputs from Python values, infer/start_async/wait with the GIL released, a
/// Python callback run on troupe's callback thread with the GIL taken, its exception kept and
/// raised again by wait().
#include "common.hpp"

namespace troupe::python {

namespace {

using clock_type = std::chrono::steady_clock;

std::string type_name_of(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>(); }

std::string names_of(const std::vector<Port>& ports) {
  std::string s;
  for (const auto& p : ports) s += (s.empty() ? "'" : ", '") + p.get_any_name() + "'";
  return s;
}

/// The input a key means: an int index, a str name or a port.
std::size_t input_index(const RequestState& s, py::handle key) {
  if (py::isinstance<py::int_>(key)) {
    const auto i = key.cast<long long>();
    if (i < 0 || static_cast<std::size_t>(i) >= s.inputs.size())
      throw py::value_error("input index " + std::to_string(i) + " is out of range: the model has " +
                            std::to_string(s.inputs.size()) + " input(s): " + names_of(s.inputs));
    return static_cast<std::size_t>(i);
  }
  std::string name;
  if (py::isinstance<py::str>(key)) name = key.cast<std::string>();
  else if (py::isinstance<Port>(key)) name = key.cast<const Port&>().get_any_name();
  else throw py::type_error("an input is keyed by an int index, a str name or a port, not " + type_name_of(key));
  for (std::size_t i = 0; i < s.inputs.size(); ++i)
    if (s.inputs[i].get_any_name() == name) return i;
  throw py::value_error("the model has no input named '" + name + "'; its inputs: " + names_of(s.inputs));
}

Tensor input_tensor(const RequestState& s, std::size_t i, py::handle value, bool share) {
  const Port& port = s.inputs[i];
  return py::isinstance<PyTensor>(value) ? value.cast<const PyTensor&>().tensor
                                         : tensor_for_port(value, port, share, "input '" + port.get_any_name() + "'");
}

/// The tensor a get_tensor/set_tensor key names (a str name or a port, input or output).
std::string tensor_name(py::handle key) {
  if (py::isinstance<py::str>(key)) return key.cast<std::string>();
  if (py::isinstance<Port>(key)) return key.cast<const Port&>().get_any_name();
  throw py::type_error("a tensor is named by a str or a port, not " + type_name_of(key));
}

void run_python_callback(const std::shared_ptr<RequestState>& s) {
  python_call call;
  if (!call || !s->callback) return;
  try {
    py::object callback = s->callback, userdata = s->userdata; // the callback may replace them
    callback(userdata);
  } catch (py::error_already_set&) {
    std::lock_guard lock(s->mutex);
    if (!s->callback_error) s->callback_error = std::current_exception();
  }
}

/// Raises the kept exception of a callback, once.
void raise_callback_error(RequestState& s) {
  std::exception_ptr e;
  {
    std::lock_guard lock(s.mutex);
    std::swap(e, s.callback_error);
  }
  if (e) std::rethrow_exception(e);
}

} // namespace

RequestState::~RequestState() {
  {
    python_call call;
    if (call) {
      callback = py::object();
      userdata = py::object();
      callback_error = nullptr; // may hold a Python exception
    } else {
      callback.release();
      userdata.release();
      (void)new std::exception_ptr(std::move(callback_error)); // leaked: Python is exiting
    }
  }
  drop_without_gil(request);
}

void RequestState::mark_started() {
  std::lock_guard lock(mutex);
  started = clock_type::now();
  timing = true;
}

void RequestState::mark_finished() {
  std::lock_guard lock(mutex);
  if (!timing) return;
  timing = false;
  latency_ms = std::chrono::duration<double, std::milli>(clock_type::now() - started).count();
}

input_tensors prepare_inputs(const RequestState& s, py::handle inputs, bool share) {
  release_arrays();
  input_tensors out;
  if (inputs.is_none()) return out;
  if (py::isinstance<py::dict>(inputs)) {
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(inputs)) {
      const std::size_t i = input_index(s, k);
      out.emplace_back(i, input_tensor(s, i, v, share));
    }
    return out;
  }
  if (py::isinstance<py::list>(inputs) || py::isinstance<py::tuple>(inputs)) {
    auto seq = py::reinterpret_borrow<py::sequence>(inputs);
    if (seq.size() > s.inputs.size())
      throw py::value_error("got " + std::to_string(seq.size()) + " inputs; the model has " + std::to_string(s.inputs.size()) +
                            ": " + names_of(s.inputs));
    for (std::size_t i = 0; i < seq.size(); ++i) out.emplace_back(i, input_tensor(s, i, seq[i], share));
    return out;
  }
  if (s.inputs.size() != 1)
    throw py::value_error("one value for a model with " + std::to_string(s.inputs.size()) + " inputs (" + names_of(s.inputs) +
                          "): pass a dict or a list");
  out.emplace_back(0, input_tensor(s, 0, inputs, share));
  return out;
}

void apply_inputs(RequestState& s, const input_tensors& inputs) {
  for (const auto& [i, t] : inputs) s.request.set_input_tensor(i, t);
}

void set_inputs(RequestState& s, py::handle inputs, bool share) { apply_inputs(s, prepare_inputs(s, inputs, share)); }

py::list outputs_of(RequestState& s, bool share) {
  py::list out;
  for (std::size_t i = 0; i < s.outputs.size(); ++i) out.append(output_array(s.request.get_output_tensor(i), share));
  return out;
}

void bind_request(py::module_& m) {
  py::class_<PyInferRequest>(m, "InferRequest", "One inference request (as ov.InferRequest)")
      .def(py::init([](const PyInferRequest& other) { return PyInferRequest{other.state}; }), py::arg("other"))
      .def(
          "infer",
          [](PyInferRequest& r, py::handle inputs, bool share_inputs, bool share_outputs) {
            auto& s = *r.state;
            set_inputs(s, inputs, share_inputs);
            {
              py::gil_scoped_release released;
              const auto t0 = clock_type::now();
              s.request.infer();
              const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
              std::lock_guard lock(s.mutex);
              s.latency_ms = ms;
              s.timing = false;
            }
            raise_callback_error(s);
            return outputs_of(s, share_outputs);
          },
          py::arg("inputs") = py::none(), py::arg("share_inputs") = false, py::arg("share_outputs") = false)
      .def(
          "start_async",
          [](PyInferRequest& r, py::handle inputs, py::object userdata, bool share_inputs) {
            auto& s = *r.state;
            set_inputs(s, inputs, share_inputs);
            if (!userdata.is_none()) s.userdata = std::move(userdata);
            s.mark_started();
            py::gil_scoped_release released;
            s.request.start_async();
          },
          py::arg("inputs") = py::none(), py::arg("userdata") = py::none(), py::arg("share_inputs") = false)
      .def("wait",
           [](PyInferRequest& r) {
             {
               py::gil_scoped_release released;
               r.state->request.wait();
             }
             r.state->mark_finished();
             raise_callback_error(*r.state);
           })
      .def(
          "wait_for",
          [](PyInferRequest& r, int64_t timeout_ms) {
            bool done;
            {
              py::gil_scoped_release released;
              done = r.state->request.wait_for(std::chrono::milliseconds(timeout_ms));
            }
            if (done) {
              r.state->mark_finished();
              raise_callback_error(*r.state);
            }
            return done;
          },
          py::arg("timeout"), "Waits up to `timeout` milliseconds; True when the inference is done")
      .def(
          "set_callback",
          [](PyInferRequest& r, py::object callback, py::object userdata) {
            if (!PyCallable_Check(callback.ptr()))
              throw py::type_error("the callback must be callable, got " + type_name_of(callback));
            auto& s = *r.state;
            s.callback = std::move(callback);
            s.userdata = std::move(userdata);
            std::weak_ptr<RequestState> weak = r.state;
            s.request.set_callback([weak](std::exception_ptr) {
              auto state = weak.lock();
              if (!state) return;
              state->mark_finished();
              run_python_callback(state);
            });
          },
          py::arg("callback"), py::arg("userdata") = py::none(),
          "callback(userdata), on troupe's callback thread with the GIL taken; what it raises, wait() raises")
      .def("cancel", [](PyInferRequest& r) { r.state->request.cancel(); })
      .def("get_tensor", [](PyInferRequest& r, py::handle key) { return PyTensor{r.state->request.get_tensor(tensor_name(key))}; },
           py::arg("key"))
      .def("set_tensor",
           [](PyInferRequest& r, py::handle key, const PyTensor& t) { r.state->request.set_tensor(tensor_name(key), t.tensor); },
           py::arg("key"), py::arg("tensor"))
      .def("get_input_tensor", [](PyInferRequest& r, std::size_t i) { return PyTensor{r.state->request.get_input_tensor(i)}; },
           py::arg("index") = 0)
      .def("get_output_tensor", [](PyInferRequest& r, std::size_t i) { return PyTensor{r.state->request.get_output_tensor(i)}; },
           py::arg("index") = 0)
      .def("set_input_tensor",
           [](PyInferRequest& r, std::size_t i, const PyTensor& t) { r.state->request.set_input_tensor(i, t.tensor); },
           py::arg("index"), py::arg("tensor"))
      .def("set_input_tensor", [](PyInferRequest& r, const PyTensor& t) { r.state->request.set_input_tensor(t.tensor); },
           py::arg("tensor"))
      .def("set_output_tensor",
           [](PyInferRequest& r, std::size_t i, const PyTensor& t) {
             if (i >= r.state->outputs.size())
               throw py::value_error("output index " + std::to_string(i) + " is out of range: the model has " +
                                     std::to_string(r.state->outputs.size()) + " output(s)");
             r.state->request.set_tensor(r.state->outputs[i].get_any_name(), t.tensor);
           },
           py::arg("index"), py::arg("tensor"))
      .def("_set_inputs", [](PyInferRequest& r, py::handle inputs, bool share) { set_inputs(*r.state, inputs, share); },
           py::arg("inputs"), py::arg("share_inputs") = false)
      .def("_outputs", [](PyInferRequest& r, bool share) { return outputs_of(*r.state, share); }, py::arg("share_outputs") = false)
      .def_property_readonly("inputs", [](const PyInferRequest& r) { return r.state->inputs; })
      .def_property_readonly("outputs", [](const PyInferRequest& r) { return r.state->outputs; })
      .def_property_readonly("model_inputs", [](const PyInferRequest& r) { return r.state->inputs; })
      .def_property_readonly("model_outputs", [](const PyInferRequest& r) { return r.state->outputs; })
      .def_property_readonly("latency", [](const PyInferRequest& r) {
        std::lock_guard lock(r.state->mutex);
        return r.state->latency_ms;
      }, "Milliseconds of the last inference")
      .def_property_readonly("userdata", [](const PyInferRequest& r) { return r.state->userdata; })
      .def("get_profiling_info", [](const PyInferRequest& r) { return r.state->request.get_profiling_info(); })
      .def_property_readonly("profiling_info", [](const PyInferRequest& r) { return r.state->request.get_profiling_info(); });
}

} // namespace troupe::python
