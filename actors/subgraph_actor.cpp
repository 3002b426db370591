#include "actors/subgraph_actor.hpp"

#include <chrono>
#include <deque>
#include <map>

#include "actors/least_recent.hpp"
#include "actors/system_tail.hpp"

namespace troupe::actors {

namespace {

/// What picks a program: every input's shape, and the bytes of the inputs that decide shapes.
using program_key = subgraph::compiled_programs::key;

program_key key_of(const std::vector<Tensor>& inputs, const std::vector<std::size_t>& value_keys) {
  program_key k;
  k.first.reserve(inputs.size());
  for (const auto& t : inputs) k.first.push_back(t.get_shape());
  for (auto i : value_keys) {
    const auto& t = inputs.at(i);
    const auto* bytes = static_cast<const char*>(t.data());
    k.second.emplace_back(bytes, bytes + t.get_byte_size());
  }
  return k;
}

using compiled_atom = caf::atom_constant<caf::atom("compiled")>;

/// What a compile job sends back: the program, or why there is none.
struct compile_outcome {
  std::shared_ptr<const program> prog;
  failure error;
  uint64_t us = 0; ///< how long it took
};

} // namespace
} // namespace troupe::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::actors::compile_outcome)

namespace troupe::actors {
namespace {

/// Compiles on a thread of its own and sends the outcome to `home`, so that the subgraph actor
/// keeps dispatching the shapes it has while a new one compiles.
void compile_job(caf::blocking_actor*, program_compiler compile, std::vector<Tensor> inputs, caf::actor home) {
  system_tail busy; // holds the program (a device's executable) until it is sent
  compile_outcome out;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    out.prog = compile(inputs);
  } catch (...) {
    // Compiling for these shapes failed: the shapes (the input) caused it, unless the device
    // says otherwise.
    out.error = current_failure();
  }
  out.us = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
  caf::anon_send(home, compiled_atom::value, std::move(out));
}

/// The subgraph actor's state: the requests that wait for their key's program.
struct subgraph_state {
  /// Requests by the key they wait for, in arrival order; the keys to compile, in order. One
  /// compile runs at a time (the first key of `queue`): a device compiles one model's shapes
  /// one after another, and the first compile derives the weights that later ones reuse.
  std::map<program_key, std::vector<inference>> waiting;
  std::deque<program_key> queue;
  bool compiling = false;

  /// Every waiting request fails with `f` (the actor is going away).
  void fail_waiting(const failure& f) {
    for (auto& [key, jobs] : waiting)
      for (auto& job : jobs) job.sink->on_error(job.request, f);
    waiting.clear();
    queue.clear();
  }
};

/// `(infer_atom, inference)` -> the program for its key (compiled once, on a compile job, and
/// kept while among the `capacity` most recently used) -> the pool. Requests of keys already
/// compiled (submitted before their program came, or that the caller's thread did not find)
/// go on while another key compiles.
caf::behavior subgraph_actor(caf::event_based_actor* self, program_compiler compile, std::vector<std::size_t> value_keys,
                             std::size_t capacity, std::shared_ptr<compile_stats> stats,
                             std::shared_ptr<device_pool> pool, std::size_t client,
                             std::shared_ptr<subgraph::compiled_programs> compiled) {
  auto st = std::make_shared<subgraph_state>();
  // Requests still waiting for a compile when the actor goes complete as cancelled.
  self->attach_functor([st] {
    system_tail busy;
    st->fail_waiting({failure_kind::cancelled, "the compiled model was destroyed"});
  });
  auto start_next = [=] {
    if (st->compiling || st->queue.empty()) return;
    st->compiling = true;
    const auto& first = st->waiting.at(st->queue.front()).front();
    self->spawn<caf::detached>(compile_job, compile, first.inputs, caf::actor_cast<caf::actor>(self));
  };
  /// Adds `prog` for `key`, evicting past the capacity (the workers drop their clones).
  auto keep = [=](program_key key, std::shared_ptr<const program> prog) {
    std::vector<std::shared_ptr<const program>> gone;
    {
      std::lock_guard lock(compiled->mutex);
      compiled->by_key.insert_or_assign(std::move(key), subgraph::compiled_programs::entry{std::move(prog), ++compiled->clock});
      evict_least_recent(compiled->by_key, capacity,
                         [&](subgraph::compiled_programs::entry&& e) { gone.push_back(std::move(e.prog)); });
    }
    if (gone.empty()) return;
    // Requests still running on an evicted program keep it; the workers drop their clones.
    std::vector<const program*> forget;
    for (const auto& g : gone) forget.push_back(g.get());
    pool->forget(forget);
  };
  return {
      [=](infer_atom, inference& message) {
        system_tail busy;
        auto job = std::move(message); // its sink goes inside the tail, not with the message
        if (!job.sink->wanted(job.request)) return;
        program_key key;
        try {
          key = key_of(job.inputs, value_keys);
        } catch (...) {
          job.sink->on_error(job.request, current_failure());
          return;
        }
        std::shared_ptr<const program> prog;
        {
          std::lock_guard lock(compiled->mutex);
          if (auto it = compiled->by_key.find(key); it != compiled->by_key.end()) {
            it->second.last_use = ++compiled->clock;
            prog = it->second.prog;
          }
        }
        if (prog) {
          pool->submit(client, work{std::move(job), std::move(prog), client});
          return;
        }
        auto [w, fresh] = st->waiting.try_emplace(key);
        w->second.push_back(std::move(job));
        if (fresh) st->queue.push_back(std::move(key));
        start_next();
      },
      [=](compiled_atom, compile_outcome& out) {
        system_tail busy;
        auto key = std::move(st->queue.front());
        st->queue.pop_front();
        st->compiling = false;
        auto node = st->waiting.extract(key);
        if (!out.prog) {
          for (auto& job : node.mapped()) job.sink->on_error(job.request, out.error);
        } else {
          if (stats) stats->count(out.us);
          keep(std::move(key), out.prog);
          for (auto& job : node.mapped())
            if (job.sink->wanted(job.request)) pool->submit(client, work{std::move(job), out.prog, client});
        }
        start_next();
      },
  };
}

} // namespace

subgraph::subgraph(caf::actor_system& sys, subgraph_spec spec) : fixed_(spec.fixed), pool_(spec.pool) {
  if (!pool_) pool_ = std::make_shared<device_pool>(sys, "a subgraph's own pool");
  client_ = pool_->add_client(spec.streams, fixed_);
  if (!fixed_) {
    value_keys_ = spec.value_keys;
    compiler_ = sys.spawn<caf::detached>(subgraph_actor, std::move(spec.compile), std::move(spec.value_keys),
                                         spec.cache_capacity, std::move(spec.stats), pool_, client_, compiled_);
  }
}

subgraph::~subgraph() {
  // No wait for the compiler to exit: this may run on its own thread (when it drops the last
  // reference to a request). What it submits after this fails as cancelled.
  if (compiler_) caf::anon_send_exit(compiler_, caf::exit_reason::user_shutdown);
  std::vector<const program*> programs;
  if (fixed_) programs.push_back(fixed_.get());
  {
    std::lock_guard lock(compiled_->mutex);
    for (const auto& [key, e] : compiled_->by_key) programs.push_back(e.prog.get());
  }
  pool_->remove_client(client_, programs);
}

void subgraph::submit(inference job) {
  if (job.age == 0) job.age = device_pool::next_age();
  if (fixed_) return pool_->submit(client_, work{std::move(job), fixed_, client_});
  std::shared_ptr<const program> prog;
  try {
    const auto key = key_of(job.inputs, value_keys_);
    std::lock_guard lock(compiled_->mutex);
    if (auto it = compiled_->by_key.find(key); it != compiled_->by_key.end()) {
      it->second.last_use = ++compiled_->clock;
      prog = it->second.prog;
    }
  } catch (...) {
    // No key (a value-key input is missing): the subgraph actor reports it.
  }
  if (prog) pool_->submit(client_, work{std::move(job), std::move(prog), client_});
  else caf::anon_send(compiler_, infer_atom::value, std::move(job));
}

} // namespace troupe::actors
