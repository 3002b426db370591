#include "actors/device_pool.hpp"

#include <algorithm>

#include "actors/device_worker.hpp"

namespace troupe::actors {

device_pool::device_pool(caf::actor_system& sys, std::string device) : sys_(sys), device_(std::move(device)) {}

device_pool::~device_pool() {
  std::multimap<uint64_t, work> dropped;
  std::vector<caf::actor> workers;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    dropped.swap(waiting_);
    workers.swap(workers_);
    idle_.clear();
  }
  for (auto& [age, w] : dropped) w.job.sink->on_error(w.job.request, {failure_kind::cancelled, "the device pool of " + device_ + " was closed"});
  for (auto& a : workers) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

uint64_t device_pool::next_age() {
  static std::atomic<uint64_t> age{1};
  return age++;
}

namespace {
std::atomic<std::size_t> started_workers{0};
} // namespace

std::size_t device_pool::workers_started() { return started_workers.load(); }

void device_pool::grow(std::size_t n) {
  while (workers_.size() < n) {
    ++started_workers;
    const std::size_t index = workers_.size();
    workers_.push_back(spawn_device_worker(sys_, index, weak_from_this()));
    warm_.emplace_back();
    idle_.insert(idle_.begin(), index); // new workers are the coldest: taken last
  }
}

std::size_t device_pool::add_client(std::size_t streams, std::shared_ptr<const program> warm) {
  streams = std::max<std::size_t>(streams, 1);
  std::vector<caf::actor> to_warm;
  std::size_t id;
  {
    std::lock_guard lock(mutex_);
    grow(streams);
    id = next_client_++;
    clients_[id].cap = streams;
    if (warm) {
      // The idle workers taken first (the back of idle_) clone it ahead.
      for (std::size_t k = 0; k < idle_.size() && to_warm.size() < streams; ++k) {
        const std::size_t wk = idle_[idle_.size() - 1 - k];
        warm_[wk].insert(warm.get());
        to_warm.push_back(workers_[wk]);
      }
    }
  }
  for (auto& a : to_warm) caf::anon_send(a, warm_atom::value, warm);
  return id;
}

void device_pool::remove_client(std::size_t client, const std::vector<const program*>& programs) {
  std::vector<work> dropped;
  {
    std::lock_guard lock(mutex_);
    clients_.erase(client);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (it->second.client == client) {
        dropped.push_back(std::move(it->second));
        it = waiting_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& w : dropped) w.job.sink->on_error(w.job.request, {failure_kind::cancelled, "the compiled model was destroyed"});
  forget(programs);
}

void device_pool::forget(const std::vector<const program*>& programs) {
  std::vector<caf::actor> workers;
  {
    std::lock_guard lock(mutex_);
    for (auto* prog : programs)
      for (auto& w : warm_) w.erase(prog);
    workers = workers_;
  }
  for (auto* prog : programs)
    for (auto& a : workers) caf::anon_send(a, forget_atom::value, reinterpret_cast<uintptr_t>(prog));
}

void device_pool::submit(std::size_t client, work w) {
  w.client = client;
  caf::actor target;
  {
    std::unique_lock lock(mutex_);
    auto c = clients_.find(client);
    if (closed_ || c == clients_.end()) {
      lock.unlock(); // the sink may run a callback that submits again
      w.job.sink->on_error(w.job.request, {failure_kind::cancelled, "the compiled model was destroyed"});
      return;
    }
    if (idle_.empty() || c->second.in_flight >= c->second.cap) {
      const uint64_t age = w.job.age;
      waiting_.emplace(age, std::move(w));
      return;
    }
    // The warmest idle worker that already has this program's clone, else the warmest.
    auto pick = idle_.end() - 1;
    for (auto it = idle_.rbegin(); it != idle_.rend(); ++it)
      if (warm_[*it].count(w.prog.get())) {
        pick = std::next(it).base();
        break;
      }
    const std::size_t wk = *pick;
    idle_.erase(pick);
    warm_[wk].insert(w.prog.get());
    ++c->second.in_flight;
    target = workers_[wk];
  }
  caf::anon_send(target, run_atom::value, std::move(w));
}

std::optional<work> device_pool::take_eligible() {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    auto c = clients_.find(it->second.client);
    if (!it->second.job.sink->wanted(it->second.job.request)) {
      it = waiting_.erase(it); // cancelled: the request layer has completed it
      continue;
    }
    if (c != clients_.end() && c->second.in_flight < c->second.cap) {
      work w = std::move(it->second);
      waiting_.erase(it);
      ++c->second.in_flight;
      return w;
    }
    ++it;
  }
  return std::nullopt;
}

std::optional<work> device_pool::next_or_idle(std::size_t index, std::size_t client) {
  std::lock_guard lock(mutex_);
  if (auto c = clients_.find(client); c != clients_.end() && c->second.in_flight > 0) --c->second.in_flight;
  if (closed_) return std::nullopt;
  if (auto w = take_eligible()) {
    if (index < warm_.size()) warm_[index].insert(w->prog.get());
    return w;
  }
  idle_.push_back(index);
  return std::nullopt;
}

std::size_t device_pool::workers() const {
  std::lock_guard lock(mutex_);
  return workers_.size();
}

} // namespace troupe::actors
