#include "actors/scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>

#include "actors/device_pool.hpp"

namespace troupe::actors {

namespace {

using wake_atom = caf::atom_constant<caf::atom("wake")>;
using order_atom = caf::atom_constant<caf::atom("order")>;

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// A request in the scheduler: the inference and the devices that already failed it.
struct pending {
  inference job;
  std::vector<bool> tried;
  std::string errors; ///< "GPU.0: <message>; ..." from the devices that failed it
};

/// Runs that ended, handed from the device threads to the scheduler without a message: the
/// scheduler reads them at its next message. Only when a request waits in its queue for a
/// slot does an ended run wake it (a message), so an uncontended request costs one hop.
struct ended_runs {
  struct run {
    std::size_t device;
    double started, ended;
    bool device_fault;
    std::optional<pending> retry; ///< failed by the device: run it on another one
    std::string message;          ///< the device's error, for `retry`
  };
  std::mutex mutex;
  std::vector<run> runs; ///< in the order they ended: failures in a row are counted in it
  bool waiting = false;  ///< the scheduler has requests queued: wake it

  /// Records a run; true when the scheduler must be woken (a retry always must).
  bool add(run r) {
    std::lock_guard lock(mutex);
    const bool wake = waiting || r.retry.has_value();
    runs.push_back(std::move(r));
    return wake;
  }
};

/// One try of a request on one device: records the slot free (or tells the scheduler that the
/// device failed the request, to re-run it elsewhere) before the application hears of it.
class attempt final : public completion_sink {
public:
  attempt(caf::actor sched, std::shared_ptr<scheduler::counters> counters, std::shared_ptr<ended_runs> ended,
          pending p, std::size_t device, double started, bool fallback)
      : sched_(std::move(sched)), counters_(std::move(counters)), ended_(std::move(ended)), p_(std::move(p)),
        device_(device), started_(started), fallback_(fallback) {}

  void on_outputs(uint64_t, std::vector<Tensor> outputs, std::vector<kernels::op_profile> profile) noexcept override {
    counters_->served[device_].fetch_add(1, std::memory_order_relaxed); // before the application hears
    end(false);
    p_.job.sink->on_outputs(p_.job.request, std::move(outputs), std::move(profile));
  }
  void on_error(uint64_t, const failure& f) noexcept override {
    const bool device_fault = f.kind == failure_kind::device_failure || f.kind == failure_kind::device_lost;
    if (device_fault && fallback_) {
      if (ended_->add({device_, started_, now_us(), true, std::move(p_), f.message}))
        caf::anon_send(sched_, wake_atom::value);
      return;
    }
    if (!device_fault) counters_->served[device_].fetch_add(1, std::memory_order_relaxed);
    end(device_fault);
    p_.job.sink->on_error(p_.job.request, f);
  }
  void on_started(uint64_t) noexcept override { p_.job.sink->on_started(p_.job.request); }
  bool wanted(uint64_t) const noexcept override { return p_.job.sink && p_.job.sink->wanted(p_.job.request); }

private:
  void end(bool device_fault) {
    if (ended_->add({device_, started_, now_us(), device_fault, std::nullopt, {}})) caf::anon_send(sched_, wake_atom::value);
  }

  caf::actor sched_;
  std::shared_ptr<scheduler::counters> counters_;
  std::shared_ptr<ended_runs> ended_;
  pending p_;
  const std::size_t device_;
  const double started_;
  const bool fallback_;
};

/// What a decision made under the state's lock leads to, done after it is released (a device
/// that fails at once, or a sink that submits again from its callback, must find it free).
struct outbox {
  std::vector<std::pair<std::size_t, inference>> runs; ///< device, the try's inference
  std::vector<std::pair<inference, failure>> failures;
  void send(std::vector<scheduled_device>& devices) {
    for (auto& [d, job] : runs) devices[d].run->submit(std::move(job));
    for (auto& [job, f] : failures) job.sink->on_error(job.request, f);
  }
};

/// The scheduler's state, shared by its actor and by submit()'s fast path: a request that
/// finds nothing queued and a free slot goes to its device from the caller's thread (no hop);
/// everything else (queueing, waking on ended runs, new priorities) is the actor's. `mutex`
/// guards all but `devices`, which never changes.
struct scheduler_state {
  scheduler_state(std::vector<scheduled_device> d, dispatch_table t, bool f,
                  std::function<void(const std::vector<std::string>&)> serving_changed,
                  std::shared_ptr<scheduler::counters> c)
      : devices(std::move(d)), table(std::move(t)), fallback(f), on_serving(std::move(serving_changed)),
        counters(std::move(c)) {}

  std::vector<scheduled_device> devices;
  dispatch_table table;
  bool fallback;
  std::function<void(const std::vector<std::string>&)> on_serving;
  std::shared_ptr<scheduler::counters> counters;
  std::shared_ptr<ended_runs> ended = std::make_shared<ended_runs>();
  std::deque<pending> queue; ///< oldest first
  std::mutex mutex;
  int in_mailbox = 0; ///< requests sent to the actor, not yet queued: the fast path waits its turn
  std::vector<std::string> serving; ///< as last told to on_serving

  /// Takes in the runs that ended since the last message: their slots are free.
  void absorb() {
    std::vector<ended_runs::run> runs;
    {
      std::lock_guard lock(ended->mutex);
      runs.swap(ended->runs);
    }
    std::vector<pending> retries;
    for (auto& r : runs) {
      table.finished(r.device, r.started, r.ended, r.device_fault);
      if (!r.retry) continue;
      r.retry->tried[r.device] = true;
      r.retry->errors += (r.retry->errors.empty() ? "" : "; ") + devices[r.device].name + ": " + r.message;
      retries.push_back(std::move(*r.retry));
    }
    // Older than anything queued; each fails at the head when no device is left for it.
    queue.insert(queue.begin(), std::make_move_iterator(retries.begin()), std::make_move_iterator(retries.end()));
    if (!runs.empty()) tell_serving();
  }

  /// Hands queued requests to devices while the table finds one for the oldest. Called with
  /// `mutex` held; what it decides goes into `out`.
  void drain(const caf::actor& self, outbox& out) {
    drain_queue(self, out);
    if (queue.empty()) {
      std::lock_guard lock(ended->mutex);
      ended->waiting = false;
    }
  }
  /// A try of `p` on device `d`, started now.
  void start(const caf::actor& self, pending p, std::size_t d, double now, outbox& out) {
    table.started(d, now);
    inference job{p.job.request, p.job.inputs, nullptr, p.job.age};
    job.sink = std::make_shared<attempt>(self, counters, ended, std::move(p), d, now, fallback);
    out.runs.emplace_back(d, std::move(job));
  }
  void drain_queue(const caf::actor& self, outbox& out) {
    while (!queue.empty()) {
      auto& head = queue.front();
      if (!head.job.sink->wanted(head.job.request)) { // cancelled while queued: already completed
        queue.pop_front();
        continue;
      }
      if (!table.usable(head.tried)) { // priorities left out, or failed out, every device it may use
        out.failures.emplace_back(std::move(head.job), failure{failure_kind::device_failure, no_device(head)});
        queue.pop_front();
        continue;
      }
      const double now = now_us();
      auto d = table.pick(head.tried, now);
      if (!d) {
        // Wait for a slot: from now on every ended run wakes this actor. A run that ended
        // before the flag was up is already recorded: look again.
        bool more;
        {
          std::lock_guard lock(ended->mutex);
          ended->waiting = true;
          more = !ended->runs.empty();
        }
        if (!more) return;
        absorb();
        continue;
      }
      pending p = std::move(head);
      queue.pop_front();
      start(self, std::move(p), *d, now, out);
    }
  }

  /// Why `p` cannot run anywhere: the devices that failed it, and the ones out of reach.
  std::string no_device(const pending& p) const {
    std::string why = p.errors.empty() ? "no device left to run the request"
                                       : "the request failed on every device it may run on (" + p.errors + ")";
    std::string out;
    for (std::size_t d = 0; d < devices.size(); ++d) {
      const auto& pr = table.priorities();
      const bool listed = std::find(pr.begin(), pr.end(), d) != pr.end();
      if (table.devices()[d].failed_out) out += (out.empty() ? "" : ", ") + devices[d].name + " (failed too often)";
      else if (!listed) out += (out.empty() ? "" : ", ") + devices[d].name + " (not in the priorities)";
    }
    return out.empty() ? why : why + "; out of use: " + out;
  }

  void tell_serving() {
    auto now = table.serving();
    if (now == serving) return;
    serving = now;
    if (on_serving) on_serving(serving);
  }
};

caf::behavior scheduler_actor(caf::event_based_actor* self, std::shared_ptr<scheduler_state> st) {
  // Each handler decides under the lock and acts after it.
  auto handle = [self, st](auto&& decide) {
    outbox out;
    {
      std::lock_guard lock(st->mutex);
      st->absorb();
      decide();
      st->drain(caf::actor_cast<caf::actor>(self), out);
    }
    out.send(st->devices);
  };
  return {
      [=](infer_atom, inference& job) {
        handle([&] {
          --st->in_mailbox;
          st->queue.push_back(pending{std::move(job), std::vector<bool>(st->devices.size(), false), {}});
        });
      },
      [=](wake_atom) { handle([] {}); },
      [=](order_atom, std::vector<std::size_t>& order) {
        handle([&] {
          st->table.set_priorities(std::move(order));
          st->tell_serving();
        });
        return true; // applied: set_priorities returns
      },
  };
}

} // namespace

scheduler::scheduler(caf::actor_system& sys, scheduler_spec spec)
    : sys_(sys), counters_(std::make_shared<counters>(spec.devices.size())) {
  std::vector<std::string> names;
  std::vector<std::size_t> slots;
  for (const auto& d : spec.devices) {
    names.push_back(d.name);
    slots.push_back(d.slots);
  }
  auto st = std::make_shared<scheduler_state>(std::move(spec.devices),
                                              dispatch_table(names, slots, spec.policy, spec.wait_for_faster),
                                              spec.runtime_fallback, std::move(spec.on_serving), counters_);
  st->serving = st->table.serving();
  state_ = st;
  // Detached: CAF's pooled threads back off into sleeps of tens of microseconds when idle, a
  // cost every request would pay; a thread of its own wakes as soon as a message comes.
  actor_ = sys.spawn<caf::detached>(scheduler_actor, std::move(st));
}

scheduler::~scheduler() { caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown); }

void scheduler::submit(inference job) {
  if (job.age == 0) job.age = device_pool::next_age();
  auto& st = *std::static_pointer_cast<scheduler_state>(state_);
  {
    // The fast path: nothing queued or on its way to the queue, and the table picks a device
    // now. The request goes to it from this thread; the actor is not woken.
    std::unique_lock lock(st.mutex);
    if (st.in_mailbox == 0) {
      st.absorb();
      pending p{std::move(job), std::vector<bool>(st.devices.size(), false), {}};
      const double now = now_us();
      std::optional<std::size_t> d;
      if (st.queue.empty() && st.table.usable(p.tried)) d = st.table.pick(p.tried, now);
      if (d) {
        outbox out;
        st.start(actor_, std::move(p), *d, now, out);
        lock.unlock();
        out.send(st.devices);
        return;
      }
      job = std::move(p.job);
    }
    ++st.in_mailbox;
  }
  caf::anon_send(actor_, infer_atom::value, std::move(job));
}

void scheduler::set_priorities(std::vector<std::size_t> order) {
  // A round trip, so that EXECUTION_DEVICES reads the new list as soon as this returns.
  caf::scoped_actor self{sys_};
  self->request(actor_, caf::infinite, order_atom::value, std::move(order))
      .receive([](bool) {}, [](caf::error&) {}); // the actor is gone only while the model is destroyed
}

std::vector<uint64_t> scheduler::served() const {
  std::vector<uint64_t> r;
  for (const auto& c : counters_->served) r.push_back(c.load(std::memory_order_relaxed));
  return r;
}

} // namespace troupe::actors
