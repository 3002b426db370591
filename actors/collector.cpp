#include "actors/collector.hpp"

#include "actors/device_pool.hpp"

namespace troupe::actors {

collector::collector(uint64_t request, std::shared_ptr<completion_sink> sink, std::size_t outputs, std::size_t stages)
    : request_(request), age_(device_pool::next_age()), sink_(std::move(sink)), outputs_(outputs), profiles_(stages), missing_(outputs) {}

void collector::set_output(std::size_t index, Tensor t) {
  std::vector<kernels::op_profile> rows;
  {
    std::lock_guard lock(mutex_);
    if (done_ || index >= outputs_.size() || !outputs_[index].empty()) return;
    outputs_[index] = std::move(t);
    if (--missing_ > 0) return;
    done_ = true;
    for (auto& p : profiles_) rows.insert(rows.end(), std::make_move_iterator(p.begin()), std::make_move_iterator(p.end()));
  }
  // Outside the lock: the sink may run the user's callback, which may start the next inference.
  sink_->on_outputs(request_, std::move(outputs_), std::move(rows));
}

void collector::add_profile(std::size_t stage, std::vector<kernels::op_profile> rows) {
  std::lock_guard lock(mutex_);
  if (stage < profiles_.size()) profiles_[stage] = std::move(rows);
}

void collector::fail(const failure& f) {
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
    done_ = true;
  }
  sink_->on_error(request_, f);
}

bool collector::wanted() const {
  {
    std::lock_guard lock(mutex_);
    if (done_) return false;
  }
  return sink_->wanted(request_);
}

} // namespace troupe::actors
