#include "runtime/engine.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include <caf/io/all.hpp>
#include <caf/openssl/manager.hpp>

#include <troupe/exception.hpp>

#include "actors/protocol/node.hpp"
#include "actors/system_tail.hpp"

namespace troupe {

namespace {

std::atomic<std::size_t> created{0};
std::atomic<std::size_t> destroyed{0};

/// The system whose actor (or scheduler thread) runs on this thread, if any.
thread_local const caf::actor_system* own_system = nullptr;

/// Marks every thread a system starts, detached actors' included, as that system's.
class thread_marker final : public caf::thread_hook {
public:
  void init(caf::actor_system& sys) override { sys_ = &sys; }
  void thread_started() override { own_system = sys_; }
  void thread_terminates() override { own_system = nullptr; }

private:
  const caf::actor_system* sys_ = nullptr;
};

} // namespace

struct engine::owned_system {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  ~owned_system() {
    system.reset();
    ++destroyed;
  }
};

namespace {

/// Closed once the process exits (the exit guard below, or the reaper's static destruction):
/// a system whose last handle goes after that is left to the process's exit, never torn down
/// halfway while the exit handlers run. Both have trivial destructors, so they are usable to
/// the very end.
std::mutex reaper_gate;
bool reaper_closed = false;

/// Tears down systems whose last handle went on one of their own threads (a callback or a
/// device worker dropping the last request): a system's teardown waits for all its actors,
/// the one dropping it included, so it cannot happen there. The process joins it at exit.
class reaper {
public:
  static reaper& instance() {
    static reaper r;
    return r;
  }
  void take(std::unique_ptr<engine::owned_system> s) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(s));
    }
    cv_.notify_one();
  }
  /// Blocks until every system handed over has been torn down.
  void drain() {
    std::unique_lock lock(mutex_);
    drained_.wait(lock, [&] { return queue_.empty() && !busy_; });
  }
  ~reaper() {
    {
      std::lock_guard gate(reaper_gate);
      reaper_closed = true;
    }
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

private:
  reaper() : thread_([this] { run(); }) {}
  void run() {
    std::unique_lock lock(mutex_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      auto s = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      s.reset();
      lock.lock();
      busy_ = false;
      drained_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::condition_variable drained_;
  bool busy_ = false;
  std::deque<std::unique_ptr<engine::owned_system>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

/// The exit guard: runs among the process's exit handlers, before those of every library loaded
/// before it was registered (it is registered again after the Vulkan driver loads). It waits
/// for the system threads still finishing work that held the application's objects (their
/// last references may tear down a Vulkan instance or a whole system) and for the reaper's
/// teardowns, then closes the gate: what is still alive is left to the process's exit.
void guard_exit() {
  if (!own_system) { // on a system thread (exit() inside a callback), waiting could wait for itself
    actors::wait_for_tails();
    reaper::instance().drain();
  }
  std::lock_guard gate(reaper_gate);
  reaper_closed = true;
}

} // namespace

void register_exit_guard() { std::atexit(guard_exit); }

engine::engine() : owned(std::make_unique<owned_system>()) {
  auto& cfg = owned->cfg;
  // Every actor on the inference path is detached (woken by a condition variable), so the
  // cooperative scheduler has little to do: few threads, and they back off to long sleeps
  // quickly instead of spinning on the 2 cores the inference needs.
  cfg.set("scheduler.max-threads", 1);
  cfg.set("work-stealing.aggressive-poll-attempts", 1);
  cfg.set("work-stealing.moderate-poll-attempts", 1);
  cfg.set("work-stealing.relaxed-sleep-duration", caf::timespan{std::chrono::milliseconds(10)});
  cfg.set("logger.verbosity", caf::atom("quiet"));
  cfg.add_thread_hook<thread_marker>();
  // Remote devices: CAF's network layer, and the node protocol's types under their names.
  cfg.load<caf::io::middleman>();
  cfg.load<caf::openssl::manager>(); // TLS to nodes; inert until use_tls gives it an identity
  actors::node_protocol::add_node_message_types(cfg);
  // CAF sends no heartbeats by default, so a link that goes silent (a cable, a partition: no
  // FIN) would never be noticed. A node silent for a second is taken as gone; a closed
  // connection is noticed at once anyway.
  cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds(100)});
  cfg.set("middleman.connection-timeout", caf::timespan{std::chrono::seconds(1)});
  reaper::instance(); // made before any system, so it outlives them all at exit
  register_exit_guard();
  owned->system = std::make_unique<caf::actor_system>(cfg);
  system = owned->system.get();
  ++created;
  release_thread();
}

engine::engine(caf::actor_system& borrowed) : system(&borrowed) {}

engine::~engine() {
  if (!owned) return;
  std::lock_guard gate(reaper_gate);
  if (reaper_closed) {
    (void)owned.release(); // the process is exiting: left to it, never torn down halfway
    return;
  }
  if (own_system != owned->system.get()) return; // torn down here, by the member's destructor
  reaper::instance().take(std::move(owned));
}

void engine::release_thread() const {
  if (owned && own_system != owned->system.get() && caf::logger::current_logger() == &owned->system->logger())
    caf::logger::set_current_actor_system(nullptr);
}

void engine::use_tls(const std::string& cert, const std::string& key, const std::string& ca) {
  std::lock_guard lock(tls_mutex);
  const auto& have = system->config();
  auto same = [&] { return have.openssl_certificate == cert && have.openssl_key == key && have.openssl_cafile == ca; };
  if (!system->has_openssl_manager())
    throw Exception("TLS: this Core's actor system has no TLS layer (an application's own system needs "
                    "cfg.load<caf::openssl::manager>())");
  if (same()) return;
  const bool unset = have.openssl_certificate.empty() && have.openssl_key.empty() && have.openssl_cafile.empty() &&
                     have.openssl_capath.empty() && have.openssl_passphrase.empty();
  if (!owned)
    throw Exception("TLS: this Core runs on an application's own actor system, which must be configured with these "
                    "files itself (cfg.openssl_certificate '" + cert + "', openssl_key '" + key + "', openssl_cafile '" +
                    ca + "') before it is created");
  if (!unset)
    throw Exception("TLS: this Core already uses certificate '" + have.openssl_certificate + "', key '" +
                    have.openssl_key + "' and CA '" + have.openssl_cafile + "', not '" + cert + "', '" + key +
                    "' and '" + ca + "' (CAF keeps one TLS identity per actor system: use one per Core)");
  owned->cfg.openssl_certificate = cert;
  owned->cfg.openssl_key = key;
  owned->cfg.openssl_cafile = ca;
}

std::size_t engine::systems_created() { return created.load(); }

std::size_t engine::systems_destroyed() { return destroyed.load(); }

std::shared_ptr<engine> make_engine() { return std::make_shared<engine>(); }

std::shared_ptr<engine> borrow_engine(caf::actor_system& system) { return std::make_shared<engine>(system); }

} // namespace troupe
