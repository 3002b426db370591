#include "actors/subgraph_actor.hpp"

#include <map>

#include "actors/least_recent.hpp"
#include "actors/system_tail.hpp"

namespace troupe::actors {

namespace {

/// What picks a program: every input's shape, and the bytes of the inputs that decide shapes.
using program_key = std::pair<std::vector<Shape>, std::vector<std::string>>;

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

/// The programs compiled so far, by key, with when each was last used.
struct program_cache {
  struct entry {
    std::shared_ptr<const program> prog;
    uint64_t last_use = 0;
  };
  std::map<program_key, entry> by_key;
  uint64_t clock = 0;

  /// Drops the least recently used entries past `capacity` (0: none), returning their programs.
  std::vector<std::shared_ptr<const program>> trim(std::size_t capacity) {
    std::vector<std::shared_ptr<const program>> gone;
    evict_least_recent(by_key, capacity, [&](entry&& e) { gone.push_back(std::move(e.prog)); });
    return gone;
  }
};

/// `(infer_atom, inference)` -> the program for its key (compiled once, kept while among the
/// `capacity` most recently used) -> the pool.
caf::behavior subgraph_actor(caf::event_based_actor*, program_compiler compile, std::vector<std::size_t> value_keys,
                             std::size_t capacity, std::shared_ptr<compile_stats> stats,
                             std::shared_ptr<device_pool> pool, std::size_t client,
                             std::shared_ptr<subgraph::compiled_programs> compiled) {
  auto cache = std::make_shared<program_cache>();
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
        auto it = cache->by_key.find(key);
        if (it == cache->by_key.end()) {
          try {
            auto p = compile(job.inputs);
            if (stats) stats->count();
            {
              std::lock_guard lock(compiled->mutex);
              compiled->all.push_back(p);
            }
            it = cache->by_key.emplace(std::move(key), program_cache::entry{std::move(p), 0}).first;
          } catch (...) {
            // Compiling for these shapes failed: the shapes (the input) caused it, unless the
            // device says otherwise.
            job.sink->on_error(job.request, current_failure());
            return;
          }
        }
        it->second.last_use = ++cache->clock;
        auto prog = it->second.prog;
        if (auto gone = cache->trim(capacity); !gone.empty()) {
          // Requests still running on an evicted program keep it; the workers drop their clones.
          std::vector<const program*> forget;
          {
            std::lock_guard lock(compiled->mutex);
            for (const auto& g : gone) {
              forget.push_back(g.get());
              std::erase(compiled->all, g);
            }
          }
          pool->forget(forget);
        }
        pool->submit(client, work{std::move(job), std::move(prog), client});
      },
  };
}

} // namespace

subgraph::subgraph(caf::actor_system& sys, subgraph_spec spec) : fixed_(spec.fixed), pool_(spec.pool) {
  if (!pool_) pool_ = std::make_shared<device_pool>(sys, "a subgraph's own pool");
  client_ = pool_->add_client(spec.streams, fixed_);
  if (!fixed_)
    compiler_ = sys.spawn<caf::detached>(subgraph_actor, std::move(spec.compile), std::move(spec.value_keys),
                                         spec.cache_capacity, std::move(spec.stats), pool_, client_, compiled_);
}

subgraph::~subgraph() {
  // No wait for the compiler to exit: this may run on its own thread (when it drops the last
  // reference to a request). What it submits after this fails as cancelled.
  if (compiler_) caf::anon_send_exit(compiler_, caf::exit_reason::user_shutdown);
  std::vector<const program*> programs;
  if (fixed_) programs.push_back(fixed_.get());
  {
    std::lock_guard lock(compiled_->mutex);
    for (const auto& p : compiled_->all) programs.push_back(p.get());
  }
  pool_->remove_client(client_, programs);
}

void subgraph::submit(inference job) {
  if (job.age == 0) job.age = device_pool::next_age();
  if (fixed_) pool_->submit(client_, work{std::move(job), fixed_, client_});
  else caf::anon_send(compiler_, infer_atom::value, std::move(job));
}

} // namespace troupe::actors
