#pragma once
/// MULTI's scheduler actor: whole requests spread over several devices, each device a model
/// compiled for it with a number of worker requests (slots). A request goes to the device the
/// dispatch_table picks (priority order, or round robin; never to a device that would finish
/// it later than waiting for a faster one) or waits in the scheduler's queue, oldest first.
/// New priorities take effect from the next dispatch. A request that fails with a device's
/// error (not the input's) is re-run on another device; a device that keeps failing leaves.
///
/// The hot path, as for one device: a request that finds nothing queued and a slot free goes
/// to its device from the caller's thread, under the state's lock; a run that ends hands its
/// slot to the oldest waiting request from the device's thread, as the device pool does. No
/// request waits for a thread to wake. The actor (a thread of its own) takes the control that
/// comes while requests run: new priorities, and a device whose model finished compiling
/// (AUTO's startup hand-over).
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/dispatch_table.hpp"
#include "actors/runner.hpp"
#include "kernels/device_presence.hpp"

namespace troupe::actors {

struct scheduled_device {
  std::string name;
  std::shared_ptr<runner> run; ///< the model compiled for this device; null: still compiling
  std::size_t slots = 1;       ///< its requests at once (DEV(n), or its optimal number)
};

/// A device's model compiled after its scheduler started: the message device_ready sends.
struct device_arrival {
  std::size_t index = 0;
  std::shared_ptr<runner> run;
  std::size_t slots = 1;
  std::vector<std::size_t> order, fallback;
};

struct scheduler_spec {
  std::vector<scheduled_device> devices; ///< the original priority order
  /// The order to start with, by index; empty: `devices` as listed. A device still compiling
  /// may be listed (requests wait for it) or left out until device_ready names it.
  std::vector<std::size_t> order;
  std::vector<std::size_t> fallback; ///< devices that take only requests another device failed
  schedule_policy policy = schedule_policy::device_priority;
  bool runtime_fallback = true; ///< re-run a request a device failed on the next device
  /// Let a request wait for a busy faster device rather than run on a free slower one
  /// (dispatch_table::pick); off only in tests of the plain order.
  bool wait_for_faster = true;
  /// Told the serving devices (current order, failed ones out) whenever they change.
  std::function<void(const std::vector<std::string>&)> on_serving;
  /// How long a request whose every remaining device is a remote one whose node is gone waits
  /// for one to come back before it fails (a worker restarting, a link that drops for a
  /// moment); a device lost while running it is tried again when it is back, once.
  std::chrono::milliseconds hold{10000};
};

class scheduler final : public runner {
public:
  scheduler(caf::actor_system& sys, scheduler_spec spec);
  ~scheduler() override;
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  void submit(inference job) override;
  /// Devices by index into the original list, highest priority first; a device left out
  /// takes no new requests (its running ones finish). `fallback`: devices that take only
  /// requests another device failed. Applied from the next dispatch on, before this returns.
  void set_priorities(std::vector<std::size_t> order, std::vector<std::size_t> fallback = {});
  /// Device `index` went away (its node dropped) or came back: it leaves the serving list at
  /// once, and rejoins with a clean record. Applied before this returns.
  void set_present(std::size_t index, bool up);
  /// What device `index`'s presence calls on each change (set_present, for as long as this
  /// scheduler lives).
  kernels::device_presence::watcher presence_watcher(std::size_t index) const;
  /// The scheduler actor, for device_ready from an actor that may outlive this object.
  const caf::actor& handle() const { return actor_; }
  /// Tells the scheduler `sched` that device `index`'s model is compiled (`slots` requests at
  /// once): it serves from the next dispatch on, under the new `order` and `fallback`. Dropped
  /// when the scheduler is gone.
  static void device_ready(const caf::actor& sched, std::size_t index, std::shared_ptr<runner> run, std::size_t slots,
                           std::vector<std::size_t> order, std::vector<std::size_t> fallback);
  /// Requests each device completed, in the original order.
  std::vector<uint64_t> served() const;
  /// Runs a device failed with its own error that went on to another device.
  uint64_t redispatched() const { return counters_->redispatched.load(std::memory_order_relaxed); }

  struct counters {
    explicit counters(std::size_t n) : served(n) {}
    std::vector<std::atomic<uint64_t>> served;
    std::atomic<uint64_t> redispatched{0}; ///< runs a device failed that went to another device
  };

private:
  std::shared_ptr<counters> counters_;
  std::shared_ptr<void> state_; ///< shared with the actor (scheduler.cpp)
  caf::actor actor_;
};

} // namespace troupe::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<troupe::actors::device_arrival>)
