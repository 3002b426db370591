#include "actors/dispatch_table.hpp"

#include <algorithm>
#include <limits>

namespace troupe::actors {

namespace {

/// Another device must beat the chosen one by this much before the estimate overrides the
/// priority order: measured times are noisy.
constexpr double margin = 0.9;

} // namespace

dispatch_table::dispatch_table(const std::vector<std::string>& names, const std::vector<std::size_t>& slots,
                               schedule_policy policy, bool wait_for_faster)
    : policy_(policy), wait_for_faster_(wait_for_faster) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    device d;
    d.name = names[i];
    d.slots = std::max<std::size_t>(1, i < slots.size() ? slots[i] : 1);
    devices_.push_back(std::move(d));
    order_.push_back(i);
  }
}

void dispatch_table::set_priorities(std::vector<std::size_t> order, std::vector<std::size_t> fallback) {
  order_ = std::move(order);
  std::erase_if(fallback, [&](std::size_t d) { return std::find(order_.begin(), order_.end(), d) != order_.end(); });
  fallback_ = std::move(fallback);
  next_turn_ = 0;
}

bool dispatch_table::may_take(std::size_t d, const std::vector<bool>& tried) const {
  return devices_[d].alive() && !(d < tried.size() && tried[d]);
}

bool dispatch_table::order_alive() const {
  return std::any_of(order_.begin(), order_.end(), [&](std::size_t d) { return devices_[d].alive(); });
}

std::vector<std::size_t> dispatch_table::candidates(const std::vector<bool>& tried) const {
  std::vector<std::size_t> r = order_;
  // The fallbacks take retries, and everything once every device of the order failed out.
  if (!order_alive() || std::find(tried.begin(), tried.end(), true) != tried.end())
    r.insert(r.end(), fallback_.begin(), fallback_.end());
  return r;
}

bool dispatch_table::open(std::size_t d, const std::vector<bool>& tried) const {
  const auto& dev = devices_[d];
  // Until a device is measured it runs one request at a time: a slow one (lavapipe beside the
  // CPU) then costs one request's time, not a full set of slots.
  const std::size_t cap = wait_for_faster_ && dev.service_us <= 0 ? 1 : dev.slots;
  return dev.ready && may_take(d, tried) && dev.busy < cap;
}

bool dispatch_table::usable(const std::vector<bool>& tried) const {
  // A device still compiling counts: the request waits for it.
  for (auto d : candidates(tried))
    if (may_take(d, tried)) return true;
  return false;
}

bool dispatch_table::may_return(const std::vector<bool>& tried) const {
  for (auto d : candidates(tried))
    if (!devices_[d].present && !(d < tried.size() && tried[d])) return true;
  return false;
}

double dispatch_table::free_in(const device& d, double now_us) const {
  if (d.started.empty()) return 0;
  const double oldest = *std::min_element(d.started.begin(), d.started.end());
  return std::max(0.0, d.service_us - (now_us - oldest));
}

std::optional<std::size_t> dispatch_table::pick(const std::vector<bool>& tried, double now_us) {
  // Stale estimates are forgotten: the device is measured again by the next request it can
  // take (one at a time, as a device never measured), and that run replaces the estimate.
  if (wait_for_faster_)
    for (auto& dev : devices_)
      if (dev.service_us > 0 && dev.busy == 0 &&
          now_us - dev.measured_at > (dev.served == 1 ? std::max(first_run_stale_after_us, 2 * dev.service_us)
                                                      : std::max(stale_after_us, 10 * dev.service_us)))
        dev.service_us = 0;
  const auto cand = candidates(tried);
  const std::size_t n = order_.size();
  std::optional<std::size_t> chosen;
  std::size_t chosen_at = 0;
  for (std::size_t k = 0; k < n && !chosen; ++k) {
    const std::size_t at = policy_ == schedule_policy::round_robin ? (next_turn_ + k) % n : k;
    if (open(order_[at], tried)) {
      chosen = order_[at];
      chosen_at = at;
    }
  }
  // A retry that no device of the order can take now goes to a fallback device.
  for (std::size_t at = n; at < cand.size() && !chosen; ++at)
    if (open(cand[at], tried)) {
      chosen = cand[at];
      chosen_at = at;
    }
  if (!chosen) return std::nullopt;
  // Never slower than waiting: a device that would finish the request clearly sooner (free
  // now, or once its oldest run ends) wins over the chosen one. Unmeasured devices are tried
  // as the order says, so that every device gets measured.
  double mine = devices_[*chosen].service_us;
  // Measure every device early: an open device not measured yet goes before a measured one
  // (one request at a time, see open()), so that the rule below soon knows them all.
  if (wait_for_faster_ && mine > 0)
    for (auto d : cand)
      if (devices_[d].service_us <= 0 && open(d, tried)) {
        chosen = d;
        chosen_at = static_cast<std::size_t>(std::find(cand.begin(), cand.end(), d) - cand.begin());
        mine = 0;
        break;
      }
  if (wait_for_faster_ && mine > 0) {
    double best_open = mine, best_wait = std::numeric_limits<double>::infinity();
    std::optional<std::size_t> faster_open;
    for (auto d : cand) {
      const auto& dev = devices_[d];
      if (d == *chosen || !may_take(d, tried) || !dev.ready) continue;
      if (dev.service_us <= 0) {
        // Being measured: while its first request has run for less than the chosen device
        // takes, it may yet prove faster; wait for it (its end wakes the scheduler).
        if (!dev.started.empty() && now_us - *std::min_element(dev.started.begin(), dev.started.end()) < mine)
          best_wait = 0;
        continue;
      }
      if (open(d, tried)) {
        if (dev.service_us < margin * best_open) {
          best_open = dev.service_us;
          faster_open = d;
        }
      } else {
        best_wait = std::min(best_wait, free_in(dev, now_us) + dev.service_us);
      }
    }
    if (best_wait < margin * best_open) return std::nullopt;
    if (faster_open) return faster_open;
  }
  if (policy_ == schedule_policy::round_robin && chosen_at < n) next_turn_ = (chosen_at + 1) % n;
  return chosen;
}

void dispatch_table::started(std::size_t d, double now_us) {
  ++devices_[d].busy;
  devices_[d].started.push_back(now_us);
}

void dispatch_table::finished(std::size_t d, double started_us, double now_us, bool device_fault, bool lost) {
  auto& dev = devices_[d];
  if (dev.busy) --dev.busy;
  if (auto it = std::find(dev.started.begin(), dev.started.end(), started_us); it != dev.started.end())
    dev.started.erase(it);
  if (device_fault) {
    if (++dev.failures_in_a_row >= max_failures_in_a_row || lost) dev.failed_out = true;
    return;
  }
  dev.failures_in_a_row = 0;
  ++dev.served;
  const double took = std::max(0.0, now_us - started_us);
  dev.service_us = dev.service_us == 0 ? took : 0.8 * dev.service_us + 0.2 * took;
  dev.measured_at = now_us;
}

std::vector<std::string> dispatch_table::serving() const {
  std::vector<std::string> r;
  for (auto d : order_alive() ? order_ : fallback_)
    if (devices_[d].alive()) r.push_back(devices_[d].name);
  return r;
}

void dispatch_table::set_present(std::size_t d, bool up) {
  auto& dev = devices_[d];
  dev.present = up;
  if (!up) return;
  dev.failed_out = false;
  dev.failures_in_a_row = 0;
}

} // namespace troupe::actors
