#include "actors/shape_dispatch.hpp"

#include <chrono>

#include "actors/device_pool.hpp"
#include "actors/least_recent.hpp"
#include "actors/system_tail.hpp"

namespace troupe::actors {

namespace {

std::vector<Shape> shapes_of(const inference& job) {
  std::vector<Shape> shapes;
  shapes.reserve(job.inputs.size());
  for (const auto& t : job.inputs) shapes.push_back(t.get_shape());
  return shapes;
}

/// A request on a cached runner: counts it in flight until its one completion.
class counted_sink final : public completion_sink {
public:
  counted_sink(std::shared_ptr<completion_sink> inner, std::shared_ptr<std::atomic<int>> n)
      : inner_(std::move(inner)), n_(std::move(n)) {
    n_->fetch_add(1);
  }
  void on_outputs(uint64_t request, std::vector<Tensor> outputs, std::vector<kernels::op_profile> profile) noexcept override {
    inner_->on_outputs(request, std::move(outputs), std::move(profile));
    n_->fetch_sub(1);
  }
  void on_error(uint64_t request, const failure& f) noexcept override {
    inner_->on_error(request, f);
    n_->fetch_sub(1);
  }
  void on_started(uint64_t request) noexcept override { inner_->on_started(request); }
  bool wanted(uint64_t request) const noexcept override { return inner_->wanted(request); }

private:
  std::shared_ptr<completion_sink> inner_;
  std::shared_ptr<std::atomic<int>> n_;
};

/// Submits `job` to the runner for `shapes` when there is one; false when there is none yet.
/// The lock is held while submitting so that the destructor cannot free the runner meanwhile
/// (submit only queues).
bool submit_built(shape_dispatch::built& b, const std::vector<Shape>& shapes, inference& job) {
  std::lock_guard lock(b.mutex);
  if (b.closed) {
    job.sink->on_error(job.request, {failure_kind::cancelled, "the compiled model was released"});
    return true;
  }
  auto it = b.by_shapes.find(shapes);
  if (it == b.by_shapes.end()) return false;
  it->second.last_use = ++b.clock;
  job.sink = std::make_shared<counted_sink>(std::move(job.sink), it->second.in_flight);
  it->second.run->submit(std::move(job));
  return true;
}

/// With `b`'s lock held: moves the least recently used runners past `capacity` (0: none) to
/// the retiring list, and takes out the retired ones nothing runs on any more.
std::vector<shape_dispatch::built::entry> trim(shape_dispatch::built& b, std::size_t capacity) {
  evict_least_recent(b.by_shapes, capacity,
                     [&](shape_dispatch::built::entry&& e) { b.retiring.push_back(std::move(e)); });
  std::vector<shape_dispatch::built::entry> done;
  for (auto it = b.retiring.begin(); it != b.retiring.end();) {
    if (it->in_flight->load() == 0) {
      done.push_back(std::move(*it));
      it = b.retiring.erase(it);
    } else {
      ++it;
    }
  }
  return done;
}

/// `(infer_atom, inference)` -> the runner for its shapes (built once) -> submit.
caf::behavior builder_actor(caf::event_based_actor*, runner_builder build, std::shared_ptr<shape_dispatch::built> b,
                            std::size_t capacity, std::shared_ptr<compile_stats> stats) {
  return {
      [=](infer_atom, inference& message) {
        system_tail busy; // builds a device program; the job's sink goes inside the tail
        auto job = std::move(message);
        if (!job.sink->wanted(job.request)) return;
        const auto shapes = shapes_of(job);
        if (submit_built(*b, shapes, job)) return; // built for an earlier request in the queue
        std::unique_ptr<runner> r;
        try {
          const auto t0 = std::chrono::steady_clock::now();
          r = build(shapes);
          if (stats)
            stats->count(static_cast<uint64_t>(
                std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count()));
        } catch (...) {
          job.sink->on_error(job.request, current_failure());
          return;
        }
        std::vector<shape_dispatch::built::entry> gone;
        {
          std::lock_guard lock(b->mutex);
          if (!b->closed) {
            shape_dispatch::built::entry e;
            e.run = std::move(r);
            e.last_use = ++b->clock;
            b->by_shapes.emplace(shapes, std::move(e));
            gone = trim(*b, capacity);
          }
        }
        // Released meanwhile: `r` still holds the runner, dropped here, off the lock; so are
        // the retired runners in `gone`.
        submit_built(*b, shapes, job);
      },
  };
}

} // namespace

shape_dispatch::shape_dispatch(caf::actor_system& sys, runner_builder build, std::size_t capacity,
                               std::shared_ptr<compile_stats> stats)
    : builder_(sys.spawn<caf::detached>(builder_actor, std::move(build), built_, capacity, std::move(stats))) {}

shape_dispatch::~shape_dispatch() {
  std::map<std::vector<Shape>, built::entry> runners;
  std::vector<built::entry> retiring;
  {
    std::lock_guard lock(built_->mutex);
    built_->closed = true;
    runners.swap(built_->by_shapes);
    retiring.swap(built_->retiring);
  }
  caf::anon_send_exit(builder_, caf::exit_reason::user_shutdown);
  // `runners` goes here: each fails what it still holds, as the runner of a static model does.
}

void shape_dispatch::submit(inference job) {
  if (job.age == 0) job.age = device_pool::next_age();
  const auto shapes = shapes_of(job);
  if (submit_built(*built_, shapes, job)) return;
  caf::anon_send(builder_, infer_atom::value, std::move(job));
}

} // namespace troupe::actors
