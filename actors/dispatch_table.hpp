#pragma once
/// MULTI's dispatch decisions, without threads or clocks (the scheduler actor owns one and
/// passes the time in), so that every rule is tested step by step: which device takes the
/// next request, under the priority order of the moment; when waiting for a faster device
/// beats a free slot on a slower one; when a device that keeps failing leaves.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace troupe::actors {

enum class schedule_policy {
  device_priority, ///< the first device in priority order with a free slot (OpenVINO's default)
  round_robin,     ///< the devices in turn, skipping full ones
};

class dispatch_table {
public:
  struct device {
    std::string name;
    std::size_t slots = 1;         ///< requests it runs at once (MULTI's DEV(n), or its optimal count)
    std::size_t busy = 0;
    uint64_t served = 0;           ///< requests it completed (with outputs or the input's error)
    double service_us = 0;         ///< moving average of its service time; 0: not measured yet
    double measured_at = 0;        ///< when it last served a request
    std::vector<double> started;   ///< when each of its running requests started
    int failures_in_a_row = 0;
    bool failed_out = false;       ///< left the list after failing too often
    bool present = true;           ///< false while its node is gone (remote devices)
    /// Takes requests: neither failed out nor gone.
    bool alive() const { return present && !failed_out; }
    bool ready = true;             ///< false while its model still compiles (AUTO's startup)
  };

  /// `names` and `slots` in the original priority order; every device starts enabled.
  /// `wait_for_faster` false: the policy's order alone decides (tests of the order).
  dispatch_table(const std::vector<std::string>& names, const std::vector<std::size_t>& slots,
                 schedule_policy policy, bool wait_for_faster = true);

  /// The new order, by device index (the original list's). A device left out gets no new
  /// requests; its running ones finish. `fallback`: devices that take only requests another
  /// device failed (AUTO keeps the CPU so once the accelerator it chose serves).
  void set_priorities(std::vector<std::size_t> order, std::vector<std::size_t> fallback = {});
  const std::vector<std::size_t>& priorities() const { return order_; }
  const std::vector<std::size_t>& fallbacks() const { return fallback_; }
  /// Device `d`'s model is not compiled yet: it takes nothing until it arrives.
  void set_compiling(std::size_t d) { devices_[d].ready = false; }
  /// Device `d`'s model is compiled and runs `slots` requests at once.
  void arrived(std::size_t d, std::size_t slots) {
    devices_[d].ready = true;
    devices_[d].slots = std::max<std::size_t>(1, slots);
  }

  /// The device for the request at the head of the queue, or none (every usable device is
  /// full, or a busy faster device would finish it sooner than a free slower one). `tried`:
  /// per device, true when it already failed this request. With `wait_for_faster`, a device
  /// not measured yet takes one request at a time.
  std::optional<std::size_t> pick(const std::vector<bool>& tried, double now_us);
  /// True while some device could still take a request not failed on `tried`.
  bool usable(const std::vector<bool>& tried) const;
  /// True when a device the request may still go to is away only: its node is gone and may
  /// come back (remote devices). `tried` as usable's.
  bool may_return(const std::vector<bool>& tried) const;

  void started(std::size_t d, double now_us);
  /// A run on `d` ended. `device_fault`: it failed with the device's error (not the input's);
  /// `lost`: the device is gone (its node dropped): it leaves at once, not after a few.
  void finished(std::size_t d, double started_us, double now_us, bool device_fault, bool lost = false);
  /// Device `d` went away (false) or came back (true): a device that comes back starts again
  /// with a clean record.
  void set_present(std::size_t d, bool up);

  const std::vector<device>& devices() const { return devices_; }
  /// Devices in the current order that have not failed out (the fallbacks once all have):
  /// EXECUTION_DEVICES.
  std::vector<std::string> serving() const;
  /// After this many device errors in a row, a device leaves the list.
  static constexpr int max_failures_in_a_row = 3;
  /// An idle device whose estimate is this old (or 10 of its service times, whichever is
  /// longer: a slow device's probe then costs at most a tenth of one slot) is measured again: an estimate judged slower gets no request that would correct
  /// it (a worker stopped for 3 s once kept an estimate of seconds, and served 547 requests
  /// where its twin served 12 335).
  static constexpr double stale_after_us = 2e6;
  /// A device measured by one run only is measured again sooner: after this long idle, or two
  /// of that run's times. A first run is a warm-up (oneDNN creates its primitives, a GPU its
  /// pipelines) and can take ten times a steady one: judged by it, a CPU of MULTI got 1
  /// request of 600 until its 2-s probe (multi_tests' FAIL_EVERY case, 2026-11-29).
  static constexpr double first_run_stale_after_us = 2e5;

private:
  bool open(std::size_t d, const std::vector<bool>& tried) const;
  /// Not failed out, compiled, and not failed by this request already.
  bool may_take(std::size_t d, const std::vector<bool>& tried) const;
  /// Some device of the order has not failed out.
  bool order_alive() const;
  /// The devices a request may go to: the order, then for a retry the fallbacks (for every
  /// request once the order's devices all failed out).
  std::vector<std::size_t> candidates(const std::vector<bool>& tried) const;
  /// When `d`, now full, could start one more request, estimated: its oldest run's remaining time.
  double free_in(const device& d, double now_us) const;

  std::vector<device> devices_;
  std::vector<std::size_t> order_;
  std::vector<std::size_t> fallback_;
  schedule_policy policy_;
  bool wait_for_faster_;
  std::size_t next_turn_ = 0; ///< round robin: position in order_ to try first
};

} // namespace troupe::actors
