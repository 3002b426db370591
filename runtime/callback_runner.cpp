#include "runtime/callback_runner.hpp"

#include "actors/system_tail.hpp"

namespace troupe {

namespace {

using callback_atom = caf::atom_constant<caf::atom("callback")>;

thread_local bool running_callbacks = false;

/// A callback to run, as a message (local only).
struct callback_job {
  std::function<void()> run;
};

} // namespace

} // namespace troupe

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::callback_job)

namespace troupe {

/// The callback thread's actor. A class (not a lambda without arguments: CAF 0.17's spawn of
/// one dereferences an empty argument tuple, undefined behaviour that UBSan reports).
class callback_actor final : public caf::event_based_actor {
public:
  explicit callback_actor(caf::actor_config& cfg) : caf::event_based_actor(cfg) {}
  caf::behavior make_behavior() override {
    return {[](callback_atom, callback_job& job) {
      running_callbacks = true;
      actors::system_tail busy; // the callback and what it captured go inside the tail
      auto run = std::move(job.run);
      run();
      run = nullptr;
    }};
  }
};

callback_runner::callback_runner(caf::actor_system& sys) : actor_(sys.spawn<callback_actor, caf::detached>()) {}

callback_runner::~callback_runner() { caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown); }

void callback_runner::post(std::function<void()> job) {
  caf::anon_send(actor_, callback_atom::value, callback_job{std::move(job)});
}

bool callback_runner::on_callback_thread() { return running_callbacks; }

} // namespace troupe
