#include "actors/subgraph_actor.hpp"

#include <deque>
#include <map>

#include "actors/device_worker.hpp"

namespace troupe::actors {

namespace {

struct subgraph_state {
  subgraph_spec spec;
  std::vector<caf::actor> workers;
  std::vector<std::size_t> idle;  ///< LIFO: the most recently used stream is the warmest
  std::deque<inference> waiting;
  std::map<std::vector<Shape>, std::shared_ptr<const program>> programs;

  /// The program for this inference's input shapes; null after reporting a compile error.
  std::shared_ptr<const program> program_for(const inference& job) {
    if (spec.fixed) return spec.fixed;
    std::vector<Shape> shapes;
    shapes.reserve(job.inputs.size());
    for (const auto& t : job.inputs) shapes.push_back(t.get_shape());
    auto it = programs.find(shapes);
    if (it != programs.end()) return it->second;
    try {
      auto p = spec.compile(shapes);
      programs.emplace(std::move(shapes), p);
      return p;
    } catch (const std::exception& e) {
      job.sink->on_error(job.request, e.what());
    } catch (...) {
      job.sink->on_error(job.request, "unknown error while compiling the model");
    }
    return nullptr;
  }
};

void dispatch(caf::event_based_actor* self, subgraph_state& st, inference job) {
  auto prog = st.program_for(job);
  if (!prog) return;
  auto w = st.idle.back();
  st.idle.pop_back();
  self->send(st.workers[w], run_atom::value, work{std::move(job), std::move(prog)});
}

caf::behavior subgraph_actor(caf::event_based_actor* self, subgraph_spec spec) {
  auto st = std::make_shared<subgraph_state>();
  st->spec = std::move(spec);
  for (std::size_t i = 0; i < st->spec.streams; ++i) {
    st->workers.push_back(spawn_device_worker(self, i, st->spec.profiling, st->spec.fixed));
    st->idle.push_back(st->spec.streams - 1 - i);
  }
  // Requests still queued when the model goes away complete with an error, never silently.
  self->attach_functor([st](const caf::error&) {
    for (auto& job : st->waiting) job.sink->on_error(job.request, "the compiled model was destroyed");
    st->waiting.clear();
  });
  return {
      [self, st](infer_atom, inference& job) {
        if (!job.sink->wanted(job.request)) return;
        if (st->idle.empty()) st->waiting.push_back(std::move(job));
        else dispatch(self, *st, std::move(job));
      },
      [self, st](done_atom, std::size_t worker) {
        st->idle.push_back(worker);
        while (!st->waiting.empty() && !st->idle.empty()) {
          auto job = std::move(st->waiting.front());
          st->waiting.pop_front();
          if (job.sink->wanted(job.request)) dispatch(self, *st, std::move(job));
        }
      },
  };
}

} // namespace

caf::actor spawn_subgraph_actor(caf::actor_system& sys, subgraph_spec spec) {
  return sys.spawn<caf::detached>(subgraph_actor, std::move(spec));
}

} // namespace troupe::actors
