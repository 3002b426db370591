#pragma once
/// The worker side of remote devices: the node actor a `troupe worker` publishes. A client's
/// hello with the right token and protocol version gets a session actor of its own; the
/// session compiles the graphs the client sends on this machine's devices (once per content
/// hash, shared by every client) and runs inferences on them through the devices' pools,
/// tensors in and out as byte blobs (actors/protocol/node.hpp).
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <caf/all.hpp>

#include "actors/protocol/node.hpp"
#include "kernels/device.hpp"

namespace troupe::actors {

class device_pool;

struct node_spec {
  /// The devices this node serves, by the name clients see before "@host:port".
  std::map<std::string, std::shared_ptr<kernels::device>> devices;
  /// Each device's pool (the worker's Core shares them with its own models).
  std::function<std::shared_ptr<device_pool>(const std::string&)> pool_for;
  std::string token; ///< empty: no token asked
  /// Facts of the node's machine every device's info carries to clients (NODE_CORES: the
  /// cores its CPU streams and threads are counted from).
  std::map<std::string, std::string> machine;
  /// The most bytes one model, and one request's inputs, may bring: larger ones are refused
  /// (and logged), not compiled or run.
  std::size_t max_graph_bytes = std::size_t(2) << 30;
  std::size_t max_request_bytes = std::size_t(1) << 30;
  /// The most streams (device workers, each a thread) and threads per stream one model may ask
  /// for: a client's numbers, so bounded before anything is spawned.
  int max_streams = 64;
  int max_threads = 256;
  /// The most bytes one value of a model (input, intermediate or output, by its shape) may take.
  std::size_t max_value_bytes = std::size_t(4) << 30;
  /// The most inferences one client may have in flight, and the most bytes of inputs all
  /// clients' inferences in flight may hold together: past either a request is refused as a
  /// device failure (MULTI takes it elsewhere), not queued.
  std::size_t max_in_flight_per_client = 256;
  std::size_t max_held_bytes = std::size_t(8) << 30;
  /// Compiled models kept (every client's together); past it the least recently used idle
  /// ones are forgotten, and a client that asks for one again sends its bytes again.
  std::size_t max_models = 64;
  /// One line per event worth a log: connects, disconnects, refusals, rejected messages.
  std::function<void(const std::string&)> log;
};

/// What a node has in flight, for draining before it stops.
struct node_load {
  std::atomic<int64_t> in_flight{0};
  std::atomic<uint64_t> served{0};
  std::atomic<uint64_t> held_bytes{0}; ///< inputs of the inferences in flight
};

/// The key a node keeps a compiled model under: the graph's bytes, the device and the options
/// it is compiled with. The client sends it first without the bytes; the node checks it
/// against the bytes when they come.
uint64_t model_hash(std::string_view graph_bytes, const node_protocol::compile_request& r);

/// Spawns the node actor on `sys`; each client gets a session actor, and each compile a
/// detached actor of its own (compiling blocks its thread).
caf::actor spawn_node(caf::actor_system& sys, node_spec spec, std::shared_ptr<node_load> load);

} // namespace troupe::actors
