#include "actors/scheduler.hpp"
#include "actors/system_tail.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>

#include "actors/device_pool.hpp"

namespace troupe::actors {

namespace {

using ready_atom = caf::atom_constant<caf::atom("ready")>;

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

using hold_atom = caf::atom_constant<caf::atom("hold")>;

/// A request in the scheduler: the inference and the devices that already failed it.
struct pending {
  inference job;
  std::vector<bool> tried;
  std::string errors; ///< "GPU.0: <message>; ..." from the devices that failed it
  std::vector<uint8_t> lost; ///< per device, how often it was lost while running this request
  double held_since_us = 0;  ///< when it began to wait for a device to come back; 0: it does not
};

/// What a decision made under the state's lock leads to, done after it is released (a device
/// that completes at once, or a sink that submits again from its callback, must find it free).
struct outbox {
  std::vector<std::pair<std::size_t, inference>> runs; ///< device, the try's inference
  std::vector<std::pair<inference, failure>> failures;
  void send(std::vector<scheduled_device>& devices) {
    for (auto& [d, job] : runs) devices[d].run->submit(std::move(job));
    for (auto& [job, f] : failures) job.sink->on_error(job.request, f);
  }
};

struct scheduler_state;

/// The scheduler whose act() runs on this thread: one variable for every instantiation of
/// act() (a static inside the template would be one per kind of decision, and a completion
/// arriving inside a submit's send would then recurse instead of leaving the round to it).
thread_local scheduler_state* settling = nullptr;

/// One try of a request on one device: hands the slot on (or re-queues the request when the
/// device failed it) before the application hears of it.
class attempt final : public completion_sink {
public:
  attempt(std::shared_ptr<scheduler_state> st, pending p, std::size_t device, double started)
      : st_(std::move(st)), p_(std::move(p)), device_(device), started_(started) {}

  void on_outputs(uint64_t, std::vector<Tensor> outputs, std::vector<kernels::op_profile> profile) noexcept override;
  void on_error(uint64_t, const failure& f) noexcept override;
  void on_started(uint64_t) noexcept override { p_.job.sink->on_started(p_.job.request); }
  bool wanted(uint64_t) const noexcept override { return p_.job.sink && p_.job.sink->wanted(p_.job.request); }

private:
  std::shared_ptr<scheduler_state> st_;
  pending p_;
  const std::size_t device_;
  const double started_;
};

/// The scheduler's state. Every thread that changes it hands queued requests on itself, under
/// `mutex`, as the device pool does: the caller of submit(), the device thread whose run ended
/// (its slot goes to the oldest waiting request without waking anyone), and the actor for new
/// priorities and devices that finished compiling. `devices` is set up before any request;
/// a device's runner is set once, under `mutex`, before the table may pick it.
struct scheduler_state : std::enable_shared_from_this<scheduler_state> {
  scheduler_state(std::vector<scheduled_device> d, dispatch_table t, bool f,
                  std::function<void(const std::vector<std::string>&)> serving_changed,
                  std::shared_ptr<scheduler::counters> c, std::chrono::milliseconds h)
      : devices(std::move(d)), table(std::move(t)), fallback(f), on_serving(std::move(serving_changed)),
        counters(std::move(c)), hold_us(std::chrono::duration<double, std::micro>(h).count()) {}

  std::vector<scheduled_device> devices;
  dispatch_table table;
  bool fallback;
  std::function<void(const std::vector<std::string>&)> on_serving;
  std::shared_ptr<scheduler::counters> counters;
  std::deque<pending> queue; ///< oldest first
  std::mutex mutex;
  std::vector<std::string> serving; ///< as last told to on_serving
  bool again = false; ///< a device completed inside one of this thread's sends: look at the queue again
  const double hold_us;
  /// Asks the scheduler actor to look at the queue again after `us` (a held request's time
  /// running out when nothing else happens); set once the actor exists.
  std::function<void(double us)> look_again_after;

  /// Applies `decide` under the lock, hands queued requests on, and sends what that decided
  /// after unlocking. A device that completes inside such a send (on this very thread) only
  /// records its end and leaves the next round to the outer call: no recursion, whatever the
  /// queue's length.
  template <class Decide>
  void act(Decide&& decide) {
    if (settling == this) {
      std::lock_guard lock(mutex);
      decide();
      again = true;
      return;
    }
    auto* outer = settling;
    settling = this;
    for (bool first = true;; first = false) {
      outbox out;
      {
        std::lock_guard lock(mutex);
        if (first) decide();
        else if (!again) break;
        again = false;
        drain(out);
      }
      out.send(devices);
    }
    settling = outer;
  }

  /// A run of `d` ended; `retry`: the device failed the request, run it elsewhere.
  /// `lost`: the device is gone (device_lost), not just failing.
  void ended(std::size_t d, double started, bool device_fault, std::optional<pending> retry, const std::string& why,
             bool lost = false) {
    const double now = now_us();
    act([&] {
      table.finished(d, started, now, device_fault, lost);
      if (retry) {
        // A device lost while running it (its node went) may take it again once it is back,
        // once: a request that takes its worker down twice does not go there a third time.
        if (retry->lost.size() < devices.size()) retry->lost.resize(devices.size(), 0);
        if (!lost || ++retry->lost[d] >= 2) retry->tried[d] = true;
        retry->errors += (retry->errors.empty() ? "" : "; ") + devices[d].name + ": " + why;
        queue.push_front(std::move(*retry)); // older than anything queued
      }
      if (device_fault) tell_serving();
    });
  }

  /// Hands queued requests to devices while the table finds one for the oldest. Called with
  /// `mutex` held; what it decides goes into `out`.
  void drain(outbox& out) {
    for (std::size_t i = 0; i < queue.size();) {
      auto& head = queue[i];
      if (!head.job.sink->wanted(head.job.request)) { // cancelled while queued: already completed
        queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      const double now = now_us();
      if (!table.usable(head.tried)) { // priorities left out, or failed out, every device it may use
        // Every device it may still use is away (a node gone): it waits for one to come back
        // (set_present looks again), up to hold_us, while the requests behind it go on.
        if (fallback && table.may_return(head.tried)) {
          if (head.held_since_us == 0) {
            head.held_since_us = now;
            if (look_again_after) look_again_after(hold_us);
          }
          if (now - head.held_since_us < hold_us) {
            ++i;
            continue;
          }
        }
        out.failures.emplace_back(std::move(head.job), failure{failure_kind::device_failure, no_device(head)});
        queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      // None free: every wait ends with a run ending (or a device arriving), which looks again.
      auto d = table.pick(head.tried, now);
      if (!d) return;
      pending p = std::move(head);
      queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(i));
      p.held_since_us = 0;
      start(std::move(p), *d, now, out);
    }
  }

  /// A try of `p` on device `d`, started now.
  void start(pending p, std::size_t d, double now, outbox& out) {
    table.started(d, now);
    // A request some device failed (its errors say which) now runs elsewhere.
    if (!p.errors.empty()) counters->redispatched.fetch_add(1, std::memory_order_relaxed);
    inference job{p.job.request, p.job.inputs, nullptr, p.job.age};
    job.sink = std::make_shared<attempt>(shared_from_this(), std::move(p), d, now);
    out.runs.emplace_back(d, std::move(job));
  }

  /// Why `p` cannot run anywhere: the devices that failed it, and the ones out of reach.
  std::string no_device(const pending& p) const {
    std::string why = p.errors.empty() ? "no device left to run the request"
                                       : "the request failed on every device it may run on (" + p.errors + ")";
    if (p.held_since_us > 0)
      why += " (it waited " + std::to_string(static_cast<int64_t>(hold_us / 1000)) + " ms for a node to come back)";
    std::string out;
    const auto& pr = table.priorities();
    const auto& fb = table.fallbacks();
    for (std::size_t d = 0; d < devices.size(); ++d) {
      const bool listed = std::find(pr.begin(), pr.end(), d) != pr.end() || std::find(fb.begin(), fb.end(), d) != fb.end();
      if (!table.devices()[d].present) out += (out.empty() ? "" : ", ") + devices[d].name + " (its node is gone)";
      else if (table.devices()[d].failed_out) out += (out.empty() ? "" : ", ") + devices[d].name + " (failed too often)";
      else if (!listed) out += (out.empty() ? "" : ", ") + devices[d].name + " (not in the priorities)";
    }
    return out.empty() ? why : why + "; out of use: " + out;
  }

  /// Device `d` went away or came back (its node's link).
  void set_present(std::size_t d, bool up) {
    act([&] {
      table.set_present(d, up);
      tell_serving();
    });
  }

  void tell_serving() {
    auto now = table.serving();
    if (now == serving) return;
    serving = now;
    if (on_serving) on_serving(serving);
  }
};

void attempt::on_outputs(uint64_t, std::vector<Tensor> outputs, std::vector<kernels::op_profile> profile) noexcept {
  st_->counters->served[device_].fetch_add(1, std::memory_order_relaxed); // before the application hears
  st_->ended(device_, started_, false, std::nullopt, {});
  p_.job.sink->on_outputs(p_.job.request, std::move(outputs), std::move(profile));
}

void attempt::on_error(uint64_t, const failure& f) noexcept {
  const bool lost = f.kind == failure_kind::device_lost;
  const bool device_fault = f.kind == failure_kind::device_failure || lost;
  if (device_fault && st_->fallback) {
    st_->ended(device_, started_, true, std::move(p_), f.message, lost);
    return;
  }
  if (!device_fault) st_->counters->served[device_].fetch_add(1, std::memory_order_relaxed);
  st_->ended(device_, started_, device_fault, std::nullopt, {}, lost);
  p_.job.sink->on_error(p_.job.request, f);
}

/// The actor: what arrives from other actors while requests run: a device whose model
/// finished compiling (AUTO's startup hand-over).
caf::behavior scheduler_actor(caf::event_based_actor*, std::shared_ptr<scheduler_state> st) {
  return {
      [=](hold_atom) { st->act([] {}); }, // a held request's time ran out: look again
      [=](ready_atom, std::shared_ptr<device_arrival>& a) {
        system_tail busy;
        st->act([&] {
          st->devices[a->index].run = std::move(a->run);
          st->table.arrived(a->index, a->slots);
          st->table.set_priorities(std::move(a->order), std::move(a->fallback));
          st->tell_serving();
        });
      },
  };
}

} // namespace

scheduler::scheduler(caf::actor_system& sys, scheduler_spec spec)
    : counters_(std::make_shared<counters>(spec.devices.size())) {
  std::vector<std::string> names;
  std::vector<std::size_t> slots;
  for (const auto& d : spec.devices) {
    names.push_back(d.name);
    slots.push_back(d.slots);
  }
  dispatch_table table(names, slots, spec.policy, spec.wait_for_faster);
  for (std::size_t d = 0; d < spec.devices.size(); ++d)
    if (!spec.devices[d].run) table.set_compiling(d);
  if (!spec.order.empty() || !spec.fallback.empty())
    table.set_priorities(spec.order.empty() ? table.priorities() : spec.order, spec.fallback);
  auto st = std::make_shared<scheduler_state>(std::move(spec.devices), std::move(table), spec.runtime_fallback,
                                              std::move(spec.on_serving), counters_, spec.hold);
  st->serving = st->table.serving();
  state_ = st;
  // Detached: CAF's pooled threads back off into sleeps of tens of microseconds when idle; a
  // priority change should apply as soon as it is asked for.
  actor_ = sys.spawn<caf::detached>(scheduler_actor, st);
  // Weak: the state must not keep its own actor alive.
  st->look_again_after = [weak = caf::actor_cast<caf::weak_actor_ptr>(actor_)](double us) {
    if (auto a = caf::actor_cast<caf::actor>(weak.lock()))
      caf::delayed_anon_send(a, std::chrono::microseconds(static_cast<int64_t>(us) + 1000), hold_atom::value);
  };
}

scheduler::~scheduler() { caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown); }

void scheduler::submit(inference job) {
  if (job.age == 0) job.age = device_pool::next_age();
  auto& st = *std::static_pointer_cast<scheduler_state>(state_);
  // Queued behind what waits already; drain() then hands on what can go now, from this thread.
  st.act([&] { st.queue.push_back(pending{std::move(job), std::vector<bool>(st.devices.size(), false), {}, {}, 0}); });
}

void scheduler::set_present(std::size_t d, bool up) {
  std::static_pointer_cast<scheduler_state>(state_)->set_present(d, up);
}

kernels::device_presence::watcher scheduler::presence_watcher(std::size_t d) const {
  std::weak_ptr<scheduler_state> weak = std::static_pointer_cast<scheduler_state>(state_);
  return [weak, d](bool up) {
    auto st = weak.lock();
    if (!st) return false; // the scheduler is gone: forget this watcher
    st->set_present(d, up);
    return true;
  };
}

void scheduler::set_priorities(std::vector<std::size_t> order, std::vector<std::size_t> fallback) {
  // Applied here, under the state's lock, before this returns (EXECUTION_DEVICES reads the new
  // list at once); what it frees goes out from this thread.
  auto& st = *std::static_pointer_cast<scheduler_state>(state_);
  st.act([&] {
    st.table.set_priorities(std::move(order), std::move(fallback));
    st.tell_serving();
  });
}

void scheduler::device_ready(const caf::actor& sched, std::size_t index, std::shared_ptr<runner> run,
                             std::size_t slots, std::vector<std::size_t> order, std::vector<std::size_t> fallback) {
  auto a = std::make_shared<device_arrival>(
      device_arrival{index, std::move(run), slots, std::move(order), std::move(fallback)});
  caf::anon_send(sched, ready_atom::value, std::move(a));
}

std::vector<uint64_t> scheduler::served() const {
  std::vector<uint64_t> r;
  for (const auto& c : counters_->served) r.push_back(c.load(std::memory_order_relaxed));
  return r;
}

} // namespace troupe::actors
