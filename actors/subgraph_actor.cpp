#include "actors/subgraph_actor.hpp"

#include <map>

#include "actors/device_worker.hpp"

namespace troupe::actors {

namespace {

/// `(infer_atom, inference)` -> the program for its input shapes (compiled once) -> dispatch.
caf::behavior subgraph_actor(caf::event_based_actor*, program_compiler compile,
                             std::shared_ptr<stream_dispatcher> dispatcher) {
  auto programs = std::make_shared<std::map<std::vector<Shape>, std::shared_ptr<const program>>>();
  return {
      [=](infer_atom, inference& job) {
        if (!job.sink->wanted(job.request)) return;
        std::vector<Shape> shapes;
        shapes.reserve(job.inputs.size());
        for (const auto& t : job.inputs) shapes.push_back(t.get_shape());
        auto it = programs->find(shapes);
        if (it == programs->end()) {
          try {
            auto p = compile(shapes);
            it = programs->emplace(std::move(shapes), std::move(p)).first;
          } catch (...) {
            // Compiling for these shapes failed: the shapes (the input) caused it, unless the
            // device says otherwise.
            job.sink->on_error(job.request, current_failure());
            return;
          }
        }
        dispatcher->submit(work{std::move(job), it->second});
      },
  };
}

} // namespace

subgraph::subgraph(caf::actor_system& sys, subgraph_spec spec)
    : fixed_(spec.fixed), dispatcher_(std::make_shared<stream_dispatcher>()) {
  for (std::size_t i = 0; i < spec.streams; ++i)
    workers_.push_back(spawn_device_worker(sys, i, spec.profiling, dispatcher_, fixed_));
  dispatcher_->set_workers(workers_);
  if (!fixed_) compiler_ = sys.spawn<caf::detached>(subgraph_actor, std::move(spec.compile), dispatcher_);
}

subgraph::~subgraph() {
  dispatcher_->shutdown("the compiled model was destroyed");
  for (auto& w : workers_) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  if (compiler_) caf::anon_send_exit(compiler_, caf::exit_reason::user_shutdown);
}

void subgraph::submit(inference job) {
  if (fixed_) dispatcher_->submit(work{std::move(job), fixed_});
  else caf::anon_send(compiler_, infer_atom::value, std::move(job));
}

} // namespace troupe::actors
