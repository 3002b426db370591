#include "actors/stream_dispatcher.hpp"

namespace troupe::actors {

void stream_dispatcher::set_workers(std::vector<caf::actor> workers) {
  std::lock_guard lock(mutex_);
  workers_ = std::move(workers);
  idle_.clear();
  for (std::size_t i = workers_.size(); i-- > 0;) idle_.push_back(i);
}

void stream_dispatcher::submit(work w) {
  caf::actor target;
  {
    std::unique_lock lock(mutex_);
    if (closed_) {
      lock.unlock(); // the sink may run a callback that submits again
      w.job.sink->on_error(w.job.request, {failure_kind::cancelled, "the compiled model was destroyed"});
      return;
    }
    if (idle_.empty()) {
      waiting_.push_back(std::move(w));
      return;
    }
    target = workers_[idle_.back()];
    idle_.pop_back();
  }
  caf::anon_send(target, run_atom::value, std::move(w));
}

std::optional<work> stream_dispatcher::next_or_idle(std::size_t index) {
  std::lock_guard lock(mutex_);
  while (!waiting_.empty()) {
    work w = std::move(waiting_.front());
    waiting_.pop_front();
    if (w.job.sink->wanted(w.job.request)) return w;
  }
  idle_.push_back(index);
  return std::nullopt;
}

void stream_dispatcher::shutdown(const std::string& reason) {
  std::deque<work> dropped;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    dropped.swap(waiting_);
    workers_.clear();
    idle_.clear();
  }
  for (auto& w : dropped) w.job.sink->on_error(w.job.request, {failure_kind::cancelled, reason});
}

} // namespace troupe::actors
