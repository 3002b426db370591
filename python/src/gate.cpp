/// The gate troupe's threads pass to enter Python (common.hpp: python_call).
#include "common.hpp"

namespace troupe::python {

namespace {

std::mutex gate_mutex;
std::condition_variable gate_empty;
int gate_inside = 0;
bool gate_shut = false;

bool enter_gate() {
  std::lock_guard lock(gate_mutex);
  if (gate_shut || !Py_IsInitialized() || _Py_IsFinalizing()) return false;
  ++gate_inside;
  return true;
}

void leave_gate() {
  std::lock_guard lock(gate_mutex);
  if (--gate_inside == 0) gate_empty.notify_all();
}

/// A thread of troupe's that enters Python keeps the thread state Python made for it: else
/// Python makes and frees one per entry (with a 16 KiB frame stack, mapped and unmapped, whose
/// unmapping interrupts every core), which on a callback per inference costs more than the
/// callback. The state goes when the thread ends, unless Python is exiting by then.
struct kept_thread_state {
  bool kept = false;
  ~kept_thread_state() {
    if (!kept || !enter_gate()) return; // not kept, or Python is exiting: leave it be
    {
      py::gil_scoped_acquire gil;
      gil.dec_ref(); // with the acquire's own count gone too, Python frees the state
    }
    leave_gate();
  }
};
thread_local kept_thread_state kept_state;

std::mutex tracked_mutex;
std::vector<std::weak_ptr<RequestState>> tracked; ///< guarded by tracked_mutex

} // namespace

std::shared_ptr<RequestState> track(std::shared_ptr<RequestState> state) {
  std::lock_guard lock(tracked_mutex);
  if (tracked.size() >= 64) // forget the requests that are gone, now and then
    std::erase_if(tracked, [](const std::weak_ptr<RequestState>& w) { return w.expired(); });
  tracked.push_back(state);
  return state;
}

python_call::python_call() : inside_(enter_gate()) {
  if (!inside_) return;
  // Only a thread that had no state: Python's own threads free theirs when they end.
  const bool fresh = !kept_state.kept && PyGILState_GetThisThreadState() == nullptr;
  gil_.emplace();
  if (fresh) {
    gil_->inc_ref();
    kept_state.kept = true;
  }
}

python_call::~python_call() {
  gil_.reset();
  if (inside_) leave_gate();
}

void close_python_gate() {
  {
    std::lock_guard lock(gate_mutex);
    gate_shut = true;
  }
  std::vector<std::shared_ptr<RequestState>> requests;
  {
    std::lock_guard lock(tracked_mutex);
    for (const auto& w : tracked)
      if (auto s = w.lock()) requests.push_back(std::move(s));
    tracked.clear();
  }
  py::gil_scoped_release released; // those inside may be waiting for the GIL
  {
    std::unique_lock lock(gate_mutex);
    gate_empty.wait_for(lock, std::chrono::seconds(10), [] { return gate_inside == 0; });
  }
  for (auto& s : requests) {
    try {
      s->request.wait_for(std::chrono::seconds(10));
    } catch (...) { // NOLINT: the inference's own error is nobody's business at exit
    }
    s.reset(); // the GIL released: its callbacks, if any, no longer enter Python
  }
}

} // namespace troupe::python
