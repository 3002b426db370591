#include "actors/device_worker.hpp"

#include <exception>
#include <unordered_map>

namespace troupe::actors {

namespace {

struct worker_state {
  bool profiling = false;
  /// One clone per program this stream has run; the shared_ptr keeps the key alive.
  std::unordered_map<const program*, std::pair<std::shared_ptr<const program>, std::unique_ptr<kernels::executable>>>
      clones;

  kernels::executable& clone_for(const std::shared_ptr<const program>& p) {
    auto it = clones.find(p.get());
    if (it == clones.end())
      it = clones.emplace(p.get(), std::make_pair(p, p->prototype->clone())).first;
    return *it->second.second;
  }
};

caf::behavior device_worker(caf::event_based_actor* self, std::size_t index, bool profiling,
                            std::shared_ptr<const program> warm) {
  auto st = std::make_shared<worker_state>();
  st->profiling = profiling;
  if (warm) {
    try {
      st->clone_for(warm);
    } catch (...) {
      // Cloning fails again on first use and becomes that request's error.
    }
  }
  return {
      [self, st, index](run_atom, const work& w) {
        const auto& job = w.job;
        try {
          auto& exe = st->clone_for(w.prog);
          std::vector<Tensor> outputs;
          exe.run(job.inputs, outputs);
          std::vector<kernels::op_profile> prof;
          if (st->profiling) prof = exe.profile();
          job.sink->on_outputs(job.request, std::move(outputs), std::move(prof));
        } catch (const std::exception& e) {
          job.sink->on_error(job.request, e.what());
        } catch (...) {
          job.sink->on_error(job.request, "unknown error while running the model");
        }
        self->send(caf::actor_cast<caf::actor>(self->current_sender()), done_atom::value, index);
      },
  };
}

} // namespace

caf::actor spawn_device_worker(caf::local_actor* parent, std::size_t index, bool profiling,
                               std::shared_ptr<const program> warm) {
  return parent->spawn<caf::detached + caf::linked>(device_worker, index, profiling, std::move(warm));
}

} // namespace troupe::actors
