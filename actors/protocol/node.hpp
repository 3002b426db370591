#pragma once
/// The node protocol: what a client sends to a worker's node actor over CAF's network layer,
/// and what comes back. Every type here crosses the wire, so each has an inspect() overload
/// and a name registered in both processes (add_node_message_types), and none holds anything
/// process-local: models travel as graph bytes (graph/wire), tensors as one byte blob each.
///
///   client                               node actor (published at HOST:PORT)
///   (hello_atom, hello)             ->   session actor for this client, or an error (wrong
///                                        token, other protocol version)
///   session: (compile_atom, compile_request) -> compiled, or an error; with empty graph
///            bytes when the node may know the hash: error need_graph asks for them
///   session: (infer_atom, infer_request)     -> infer_reply, or an error whose code is the
///            failure_kind and whose context is the message
/// A node keeps compiled models for every client until it holds more than node_spec::max_models;
/// then it forgets the least recently used idle ones (an infer of one gets need_graph).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/all.hpp>

namespace troupe::actors::node_protocol {

/// Raised whenever a message changes meaning: a client and a node of other versions refuse
/// each other at hello.
constexpr uint32_t version = 2;

using hello_atom = caf::atom_constant<caf::atom("n_hello")>;
using compile_atom = caf::atom_constant<caf::atom("n_compile")>;
using infer_atom = caf::atom_constant<caf::atom("n_infer")>;

/// The category of every error a node replies with; the code is a kernels::failure_kind plus
/// one (CAF takes code 0 for "no error"), or one of the codes below.
constexpr caf::atom_value error_category = caf::atom("troupe_n");
enum class node_errc : uint8_t {
  refused = 100,    ///< wrong token or protocol version
  need_graph = 101, ///< the node does not have the model of that hash: send its bytes
  bad_request = 102,///< malformed or oversized message, unknown device or model
};

/// A failure_kind as an error code, and back (codes 1 to 4).
constexpr uint8_t failure_code(int kind) { return static_cast<uint8_t>(kind + 1); }
constexpr int failure_kind_of(uint8_t code) { return code - 1; }
/// The largest code failure_code gives.
constexpr uint8_t last_failure_code = 4;

struct hello {
  uint32_t version = 0;
  std::string token;
  /// The client's link actor: the session monitors it, so that a client that dies or whose
  /// link drops is noticed (and logged) at once.
  caf::actor client;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, hello& x) {
  return f(caf::meta::type_name("troupe_hello"), x.version, x.token, x.client);
}

/// The node's answer to hello: its devices, each with its info() (DEVICE_TYPE, ...), and
/// the session actor that serves this client.
struct welcome {
  std::vector<std::string> devices;
  std::vector<std::map<std::string, std::string>> info;
  caf::actor session;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, welcome& x) {
  return f(caf::meta::type_name("troupe_welcome"), x.devices, x.info, x.session);
}

struct compile_request {
  uint64_t hash = 0;  ///< content_hash of the graph bytes, the device and the options below
  std::string device; ///< the node's own name of it: "CPU", "GPU.0"
  std::string graph;  ///< graph/wire bytes; empty to ask whether the node has it already
  int32_t streams = 1;     ///< requests it runs at once there
  int32_t num_threads = 0; ///< per stream; 0: the device's default
  std::string precision;   ///< "f32", "bf16", "f16"
  bool profiling = false;
  bool f16_arithmetic = false;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, compile_request& x) {
  return f(caf::meta::type_name("troupe_compile"), x.hash, x.device, x.graph, x.streams, x.num_threads, x.precision,
           x.profiling, x.f16_arithmetic);
}

struct compiled {
  uint64_t model = 0; ///< the node's id of the compiled model
  int streams = 1;    ///< requests it runs at once there
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, compiled& x) {
  return f(caf::meta::type_name("troupe_compiled"), x.model, x.streams);
}

struct infer_request {
  uint64_t model = 0;
  std::vector<std::string> inputs; ///< graph/wire tensor blobs, in the graph's input order
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, infer_request& x) {
  return f(caf::meta::type_name("troupe_infer"), x.model, x.inputs);
}

struct infer_reply {
  std::vector<std::string> outputs; ///< graph/wire tensor blobs, in the graph's output order
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, infer_reply& x) {
  return f(caf::meta::type_name("troupe_outputs"), x.outputs);
}

/// Registers the protocol's types in `cfg` under the names both processes use.
inline void add_node_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<hello>("troupe_hello");
  cfg.add_message_type<welcome>("troupe_welcome");
  cfg.add_message_type<compile_request>("troupe_compile");
  cfg.add_message_type<compiled>("troupe_compiled");
  cfg.add_message_type<infer_request>("troupe_infer");
  cfg.add_message_type<infer_reply>("troupe_outputs");
  cfg.add_message_type<std::vector<std::map<std::string, std::string>>>("troupe_infos");
}

} // namespace troupe::actors::node_protocol
