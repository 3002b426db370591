#include "actors/shape_dispatch.hpp"

#include "actors/device_pool.hpp"
#include "actors/system_tail.hpp"

namespace troupe::actors {

namespace {

std::vector<Shape> shapes_of(const inference& job) {
  std::vector<Shape> shapes;
  shapes.reserve(job.inputs.size());
  for (const auto& t : job.inputs) shapes.push_back(t.get_shape());
  return shapes;
}

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
  it->second->submit(std::move(job));
  return true;
}

/// `(infer_atom, inference)` -> the runner for its shapes (built once) -> submit.
caf::behavior builder_actor(caf::event_based_actor*, runner_builder build, std::shared_ptr<shape_dispatch::built> b) {
  return {
      [=](infer_atom, inference& message) {
        system_tail busy; // builds a device program; the job's sink goes inside the tail
        auto job = std::move(message);
        if (!job.sink->wanted(job.request)) return;
        const auto shapes = shapes_of(job);
        if (submit_built(*b, shapes, job)) return; // built for an earlier request in the queue
        std::unique_ptr<runner> r;
        try {
          r = build(shapes);
        } catch (...) {
          job.sink->on_error(job.request, current_failure());
          return;
        }
        {
          std::lock_guard lock(b->mutex);
          if (!b->closed) {
            b->by_shapes.emplace(shapes, std::move(r));
          }
        }
        // Released meanwhile: `r` still holds the runner, dropped here, off the lock.
        submit_built(*b, shapes, job);
      },
  };
}

} // namespace

shape_dispatch::shape_dispatch(caf::actor_system& sys, runner_builder build)
    : builder_(sys.spawn<caf::detached>(builder_actor, std::move(build), built_)) {}

shape_dispatch::~shape_dispatch() {
  std::map<std::vector<Shape>, std::unique_ptr<runner>> runners;
  {
    std::lock_guard lock(built_->mutex);
    built_->closed = true;
    runners.swap(built_->by_shapes);
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
