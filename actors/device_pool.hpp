#pragma once
/// One pool of device workers per device per Core, shared by every subgraph compiled for that
/// device, so that however many models and subgraphs run, the device never runs more requests
/// at once than the largest stream count asked of it (the cores are not oversubscribed).
///
/// Each subgraph is a client with its own cap (its NUM_STREAMS): it never has more runs in
/// flight than that. Work waits in request-age order (the age is taken when a request enters
/// the model), so a HETERO request's later stages go before younger requests' first ones.
/// An idle worker that has already cloned the program is preferred (its clone is warm).
///
/// Shared state under one mutex, not an actor: a request thread reaches an idle worker with
/// one message (STACK.md: every actor hop from a plain thread is a thread wake-up).
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"

namespace troupe::actors {

class device_pool : public std::enable_shared_from_this<device_pool> {
public:
  device_pool(caf::actor_system& sys, std::string device);
  ~device_pool(); ///< queued work fails (cancelled); the workers exit
  device_pool(const device_pool&) = delete;
  device_pool& operator=(const device_pool&) = delete;

  /// A new client that runs at most `streams` requests at once; the pool grows to `streams`
  /// workers when it has fewer. `warm` (may be null) is cloned ahead by that many workers.
  std::size_t add_client(std::size_t streams, std::shared_ptr<const program> warm);
  /// The client is going away: its queued work fails (cancelled), and the workers drop their
  /// clones of its programs.
  void remove_client(std::size_t client, const std::vector<const program*>& programs);
  /// The workers drop their clones of these programs (a program evicted from a cache).
  void forget(const std::vector<const program*>& programs);
  /// From any thread. Work for a request its sink no longer wants is dropped.
  void submit(std::size_t client, work w);
  /// Worker `index` finished a run of `client`: the next work it may take, or none (idle).
  std::optional<work> next_or_idle(std::size_t index, std::size_t client);

  std::size_t workers() const;
  const std::string& device() const { return device_; }
  /// A request's age: smaller runs first.
  static uint64_t next_age();
  /// Workers every pool of this process has started: lets a test count a Core's threads.
  static std::size_t workers_started();

private:
  struct client_state {
    std::size_t cap = 1;
    std::size_t in_flight = 0;
  };
  /// Called with mutex_ held: the oldest queued work whose client has room, or none.
  std::optional<work> take_eligible();
  void grow(std::size_t n);

  caf::actor_system& sys_;
  const std::string device_;
  mutable std::mutex mutex_;
  std::vector<caf::actor> workers_;
  std::vector<std::size_t> idle_;                    ///< LIFO: the most recently used is warmest
  std::vector<std::set<const program*>> warm_;        ///< per worker: programs it has cloned
  std::map<std::size_t, client_state> clients_;
  std::size_t next_client_ = 0;
  std::multimap<uint64_t, work> waiting_;            ///< by request age
  bool closed_ = false;
};

} // namespace troupe::actors
