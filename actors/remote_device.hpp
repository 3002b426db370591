#pragma once
/// The client side of remote devices: each device a node reported becomes a kernels::device
/// named DEV@host:port. Compiling sends the graph (once per content hash: a node that has it
/// compiles nothing); running sends the inputs as blobs and blocks the device worker that
/// runs it until the outputs come back. One link actor per node carries every message and
/// watches the node's session: when the node dies or the link drops, every run in flight
/// fails at once with a device_lost error (which MULTI re-dispatches), not at a timeout.
#include <map>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/protocol/node.hpp"
#include "kernels/device.hpp"

namespace troupe::actors {

struct node_link_state;

/// One node as a client sees it.
class node_link {
public:
  /// Spawns the link actor (detached) for the node at `address` ("host:port").
  node_link(caf::actor_system& sys, std::string address);
  ~node_link();
  node_link(const node_link&) = delete;
  node_link& operator=(const node_link&) = delete;

  /// Says hello to `node` (the published node actor) with `token`; the devices it serves.
  /// Throws an Exception naming the node when it refuses, cannot be reached or says nothing
  /// within `timeout`.
  node_protocol::welcome connect(const caf::actor& node, const std::string& token, caf::timespan timeout);

  const std::string& address() const { return address_; }
  /// The link actor: compile and infer requests go through it.
  const caf::actor& actor() const { return actor_; }

private:
  caf::actor_system& sys_;
  std::string address_;
  caf::actor actor_;
};

/// Device `remote_name` of the node behind `link`.
std::shared_ptr<kernels::device> make_remote_device(std::shared_ptr<node_link> link, std::string remote_name,
                                                    std::map<std::string, std::string> info);

} // namespace troupe::actors
