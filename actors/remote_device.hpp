#pragma once
/// The client side of remote devices: each device a node reported becomes a kernels::device
/// named DEV@host:port. Compiling sends the graph (once per content hash: a node that has it
/// compiles nothing); running sends the inputs as blobs and blocks the device worker that
/// runs it until the outputs come back. One link actor per node carries every message and
/// watches the node's session: when the node dies or the link drops, every run in flight
/// fails at once with a device_lost error (which MULTI re-dispatches), not at a timeout, and
/// the node's devices say they are gone. The link then reconnects in the background; when
/// the node is back its devices say so, and each model is sent again on its next run.
#include <atomic>
#include <map>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/protocol/node.hpp"
#include "kernels/device.hpp"

namespace troupe::actors {

/// What the link actor and the node's devices share.
struct link_shared {
  /// Raised at each reconnect: a model compiled under an older one is sent again.
  std::atomic<uint64_t> generation{0};
  /// The node's devices are there (watched by MULTI's schedulers).
  std::shared_ptr<kernels::device_presence> presence = std::make_shared<kernels::device_presence>();
};

/// One node as a client sees it.
class node_link {
public:
  /// Spawns the link actor for the node at `host`:`port` (reconnecting over TLS with `tls`).
  node_link(caf::actor_system& sys, std::string host, uint16_t port, bool tls);
  ~node_link();
  node_link(const node_link&) = delete;
  node_link& operator=(const node_link&) = delete;

  /// Says hello to `node` (the published node actor) with `token`; the devices it serves.
  /// Throws an Exception naming the node when it refuses, cannot be reached or says nothing
  /// within `timeout`. Later the link reconnects by itself with the same token.
  node_protocol::welcome connect(const caf::actor& node, const std::string& token, caf::timespan timeout);

  const std::string& address() const { return address_; }
  /// The link actor: compile and infer requests go through it.
  const caf::actor& actor() const { return actor_; }
  const std::shared_ptr<link_shared>& shared() const { return shared_; }

private:
  caf::actor_system& sys_;
  std::string address_;
  std::shared_ptr<link_shared> shared_ = std::make_shared<link_shared>();
  caf::actor actor_;
};

/// Device `remote_name` of the node behind `link`.
std::shared_ptr<kernels::device> make_remote_device(std::shared_ptr<node_link> link, std::string remote_name,
                                                    std::map<std::string, std::string> info);

} // namespace troupe::actors
