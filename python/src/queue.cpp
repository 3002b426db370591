/// AsyncInferQueue (as ov.AsyncInferQueue): a pool of requests of one compiled model. Its
/// idle slots and waiting jobs are guarded by its own mutex, not the GIL; every wait releases
/// the GIL; each request's callback(request, userdata) runs with the GIL taken, and the slot
/// is handed back whatever the callback does. The first exception a callback raises (or an
/// inference's error) is raised again by wait_all().
///
/// Unlike OpenVINO's, start_async does not wait for an idle request while fewer jobs than
/// requests are waiting: it converts the inputs, queues the job and returns, and the callback
/// thread starts it the moment a request's callback has returned. The Python thread is then
/// off the path from one inference to the next, which on a busy machine costs a thread wake-up
/// and a GIL hand-over per inference.
#include "common.hpp"

namespace troupe::python {

namespace {

/// A job start_async queued while every request was busy: its inputs already converted.
struct waiting_job {
  input_tensors inputs;
  py::object userdata; ///< moved, never copied, off the GIL
};

struct QueueState {
  std::vector<std::shared_ptr<RequestState>> requests;
  std::vector<py::object> request_objects; ///< the InferRequest each callback gets; GIL
  std::vector<py::object> userdata;        ///< per slot; GIL
  py::object callback;                     ///< GIL
  std::mutex mutex;
  std::condition_variable idle_changed;
  std::deque<std::size_t> idle;
  std::deque<waiting_job> waiting; ///< at most requests.size(); only while no slot is idle
  std::vector<bool> busy; ///< started by the queue: only those completions hand a slot back
  std::exception_ptr error;

  ~QueueState() {
    python_call call;
    if (call) {
      request_objects.clear();
      userdata.clear();
      waiting.clear();
      callback = py::object();
      error = nullptr;
    } else {
      for (auto& o : request_objects) o.release();
      for (auto& o : userdata) o.release();
      for (auto& j : waiting) j.userdata.release();
      callback.release();
      (void)new std::exception_ptr(std::move(error)); // leaked: Python is exiting
    }
  }

  void keep_error(std::exception_ptr e) {
    std::lock_guard lock(mutex);
    if (!error) error = std::move(e);
  }

  /// Hands `slot` back: to the next waiting job (returned, to be started) or to the idle list.
  std::optional<waiting_job> next_for(std::size_t slot) {
    std::optional<waiting_job> next;
    {
      std::lock_guard lock(mutex);
      if (!waiting.empty()) {
        next.emplace(std::move(waiting.front()));
        waiting.pop_front();
      } else {
        busy[slot] = false;
        idle.push_back(slot);
      }
    }
    idle_changed.notify_all();
    return next;
  }

  /// Starts a job on a taken slot whose userdata is set (no GIL needed).
  void start(std::size_t slot, const input_tensors& inputs) {
    auto& rs = *requests[slot];
    apply_inputs(rs, inputs);
    rs.mark_started();
    rs.request.start_async();
  }

  void completed(std::size_t slot, std::exception_ptr inference_error) {
    {
      // A request of the queue used on its own (queue[i].infer()) is no job of the queue's.
      std::lock_guard lock(mutex);
      if (!busy[slot]) return;
    }
    requests[slot]->mark_finished();
    if (inference_error) keep_error(inference_error);
    std::optional<waiting_job> next;
    {
      python_call call;
      if (call && callback) {
        try {
          py::object cb = callback, request = request_objects[slot], data = userdata[slot]; // it may replace them
          cb(request, data);
        } catch (py::error_already_set&) {
          keep_error(std::current_exception());
        }
      }
      next = next_for(slot);
      if (next) {
        if (call) userdata[slot] = std::move(next->userdata);
        else next->userdata.release(); // Python is exiting
      }
    }
    while (next) {
      try {
        start(slot, next->inputs);
        return;
      } catch (...) {
        keep_error(std::current_exception());
      }
      next = next_for(slot);
      if (next) {
        python_call call;
        if (call) userdata[slot] = std::move(next->userdata);
        else next->userdata.release();
      }
    }
  }

  /// Blocks (the GIL released) until a slot is idle; returns it, taken from the idle ones
  /// with `take`.
  std::size_t wait_idle(bool take) {
    py::gil_scoped_release released;
    std::unique_lock lock(mutex);
    idle_changed.wait(lock, [&] { return !idle.empty(); });
    const std::size_t slot = idle.front();
    if (take) {
      idle.pop_front();
      busy[slot] = true;
    }
    return slot;
  }

  /// start_async: runs the job on an idle slot, or queues it while fewer jobs than requests
  /// wait; else blocks (the GIL released) until one of those is so.
  void submit(input_tensors inputs, py::object data) {
    std::optional<std::size_t> slot;
    {
      py::gil_scoped_release released;
      std::unique_lock lock(mutex);
      idle_changed.wait(lock, [&] { return !idle.empty() || waiting.size() < requests.size(); });
      if (!idle.empty()) {
        slot = idle.front();
        idle.pop_front();
        busy[*slot] = true;
      } else {
        waiting.push_back({std::move(inputs), std::move(data)}); // moves: no reference counts touched
      }
    }
    if (!slot) return;
    try {
      userdata[*slot] = std::move(data);
      py::gil_scoped_release released;
      start(*slot, inputs);
    } catch (...) {
      {
        std::lock_guard lock(mutex);
        busy[*slot] = false;
        idle.push_front(*slot); // a failed start must not lose the slot
      }
      idle_changed.notify_all();
      throw;
    }
  }

  void wait_all() {
    {
      py::gil_scoped_release released;
      std::unique_lock lock(mutex);
      idle_changed.wait(lock, [&] { return idle.size() == requests.size(); });
    }
    std::exception_ptr e;
    {
      std::lock_guard lock(mutex);
      std::swap(e, error);
    }
    if (e) std::rethrow_exception(e);
  }
};

struct PyAsyncInferQueue {
  std::shared_ptr<QueueState> state;
};

std::string type_name_of(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>(); }

} // namespace

void bind_queue(py::module_& m) {
  py::class_<PyAsyncInferQueue>(m, "AsyncInferQueue", "A pool of infer requests run asynchronously (as ov.AsyncInferQueue)")
      .def(py::init([](PyCompiledModel& compiled, int jobs, py::object wrap) {
             if (jobs < 0) throw py::value_error("jobs must be >= 0, got " + std::to_string(jobs));
             if (jobs == 0)
               jobs = std::stoi(compiled.model.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS").as_string());
             auto q = std::make_shared<QueueState>();
             for (int i = 0; i < jobs; ++i) {
               InferRequest r;
               {
                 py::gil_scoped_release released;
                 r = compiled.model.create_infer_request();
               }
               auto rs = track(std::make_shared<RequestState>(std::move(r), compiled.model.inputs(), compiled.model.outputs()));
               std::weak_ptr<QueueState> weak = q;
               const auto slot = static_cast<std::size_t>(i);
               rs->request.set_callback([weak, slot](std::exception_ptr err) {
                 if (auto queue = weak.lock()) queue->completed(slot, err);
               });
               py::object request = py::cast(PyInferRequest{rs});
               q->request_objects.push_back(wrap.is_none() ? request : wrap(request));
               q->requests.push_back(std::move(rs));
               q->userdata.push_back(py::none());
               q->idle.push_back(slot);
               q->busy.push_back(false);
             }
             return PyAsyncInferQueue{q};
           }),
           py::arg("model"), py::arg("jobs") = 0, py::arg("wrap") = py::none(),
           "`wrap(request)` makes the object each callback gets and indexing returns (the package's InferRequest)")
      .def(
          "start_async",
          [](PyAsyncInferQueue& self, py::handle inputs, py::object userdata, bool share_inputs) {
            auto& q = *self.state;
            if (q.requests.empty()) throw py::value_error("the queue has no requests");
            q.submit(prepare_inputs(*q.requests.front(), inputs, share_inputs), std::move(userdata));
          },
          py::arg("inputs") = py::none(), py::arg("userdata") = py::none(), py::arg("share_inputs") = false)
      .def("wait_all", [](PyAsyncInferQueue& self) { self.state->wait_all(); })
      .def("is_ready", [](PyAsyncInferQueue& self) {
        std::lock_guard lock(self.state->mutex);
        return !self.state->idle.empty();
      })
      .def("get_idle_request_id", [](PyAsyncInferQueue& self) { return self.state->wait_idle(false); })
      .def(
          "set_callback",
          [](PyAsyncInferQueue& self, py::object callback) {
            if (!PyCallable_Check(callback.ptr()))
              throw py::type_error("the callback must be callable, got " + type_name_of(callback));
            self.state->callback = std::move(callback);
          },
          py::arg("callback"), "callback(request, userdata) after each inference, with the GIL taken")
      .def("__len__", [](const PyAsyncInferQueue& self) { return self.state->requests.size(); })
      .def("__getitem__",
           [](const PyAsyncInferQueue& self, py::ssize_t i) {
             const auto n = static_cast<py::ssize_t>(self.state->requests.size());
             if (i < 0) i += n;
             if (i < 0 || i >= n) throw py::index_error("AsyncInferQueue index out of range");
             return self.state->request_objects[static_cast<std::size_t>(i)];
           })
      .def_property_readonly("userdata", [](const PyAsyncInferQueue& self) {
        py::list out;
        for (const auto& u : self.state->userdata) out.append(u);
        return out;
      });
}

} // namespace troupe::python
