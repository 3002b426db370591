/// Remote devices, both sides: Core::add_node (a client adds a worker's devices as
/// DEV@host:port) and Worker (this machine's devices served to clients), over CAF's network
/// layer (actors/node, actors/remote_device).
#include <troupe/worker.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <thread>

#include <caf/io/all.hpp>
#include <caf/openssl/remote_actor.hpp>
#include <caf/openssl/publish.hpp>

#include <unistd.h>

#include "actors/node.hpp"
#include "runtime/nodes.hpp"
#include "runtime/basp_gate.hpp"
#include "runtime/core_impl.hpp"
#include "runtime/device_properties.hpp"
#include "runtime/debug_device.hpp"
#include "runtime/node_tls.hpp"

namespace troupe {

namespace {

struct node_address {
  std::string host;
  uint16_t port = 0;
  std::string text() const { return host + ":" + std::to_string(port); }
};

/// "host:port" (port 0 only where `any_port`).
node_address parse_address(const std::string& what, const std::string& s, bool any_port) {
  const auto colon = s.rfind(':');
  const std::string why = what + " '" + s + "' is not host:port";
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) throw Exception(why);
  node_address a;
  a.host = s.substr(0, colon);
  const auto digits = s.substr(colon + 1);
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos) throw Exception(why);
  const long port = std::stol(digits);
  if (port > 65535 || (port == 0 && !any_port)) throw Exception(why + " (the port must be 1 to 65535)");
  a.port = static_cast<uint16_t>(port);
  return a;
}

/// 127.0.0.0/8, ::1 and localhost: only this machine reaches them.
bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1" || host == "[::1]";
}

caf::actor_system& network_system(Core::Impl& core, const std::string& what) {
  auto& sys = *core.eng->system;
  if (!sys.has_middleman())
    throw Exception(what + ": this Core's actor system has no network layer (an application's own system needs "
                           "cfg.load<caf::io::middleman>() and troupe's node message types)");
  return sys;
}

std::string option(const AnyMap& options, const std::string& name, const std::string& def) {
  auto it = options.find(name);
  return it == options.end() ? def : it->second.as_string();
}

/// A positive byte count given as option `name`, or `def`.
std::size_t byte_limit(const AnyMap& options, const std::string& name, std::size_t def) {
  const auto text = option(options, name, "");
  if (text.empty()) return def;
  if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 18 || std::stoull(text) == 0)
    throw Exception("troupe worker: option " + name + " must be a positive number of bytes, not '" + text + "'");
  return std::stoull(text);
}

/// What a TLS connect that fails in its handshake, or never answers, most likely means.
constexpr const char* tls_hint = " (over TLS: is the worker using TLS, and does each side trust the other's certificate?)";

/// Connects to the node actor published at `a` (over TLS with `tls`), giving up after
/// `timeout` (an unreachable host must not hang the caller for the system's TCP timeout).
caf::actor connect_node(caf::actor_system& sys, const node_address& a, bool tls, std::chrono::milliseconds timeout) {
  auto done = std::make_shared<std::promise<caf::expected<caf::actor>>>();
  auto result = done->get_future();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::thread([&sys, a, tls, done, deadline] {
    auto once = [&] { return tls ? caf::openssl::remote_actor(sys, a.host, a.port) : caf::io::remote_actor(sys, a.host, a.port); };
    // CAF 0.17 gives a connection it opens no "last seen" time until the node's handshake
    // arrives, so a heartbeat tick in between drops it as timed out: that one is tried again.
    auto node = once();
    while (!node && node.error() == caf::sec::connection_timeout && std::chrono::steady_clock::now() < deadline)
      node = once();
    done->set_value(std::move(node));
  }).detach();
  if (result.wait_for(timeout) != std::future_status::ready)
    throw Exception("node " + a.text() + ": no connection within " + std::to_string(timeout.count()) + " ms" +
                    (tls ? tls_hint : ""));
  auto node = result.get();
  if (!node) {
    // Connected, then dropped in the handshake: TLS on one side only, or a certificate refused.
    // (CAF's OpenSSL layer reports a failed TLS handshake as cannot_connect_to_node without
    // the context a failed TCP connect has.)
    const auto& e = node.error();
    const bool handshake = e == caf::sec::disconnect_during_handshake ||
                           (tls && e == caf::sec::cannot_connect_to_node && e.context().empty());
    throw Exception("node " + a.text() + ": cannot connect: " + sys.render(node.error()) +
                    (!handshake ? ""
                     : tls      ? tls_hint
                                : " (a worker started with -tls-cert refuses clients without TLS)"));
  }
  return *node;
}

} // namespace

void Core::add_node(const std::string& address, const AnyMap& options) {
  engine::thread_release done{*impl_->eng};
  const auto a = parse_address("node address", address, false);
  const std::string name = a.text();
  for (const auto& [k, v] : options)
    if (k != "NODE_TOKEN" && k != "NODE_TIMEOUT_MS" && !is_tls_option(k))
      throw Exception("add_node(" + name + "): unknown option '" + k +
                      "' (NODE_TOKEN, NODE_TIMEOUT_MS, NODE_TLS_CERT, NODE_TLS_KEY, NODE_TLS_CA)");
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->nodes.count(name)) throw Exception("node " + name + " was added already");
  }
  const std::string token = option(options, "NODE_TOKEN", "");
  const auto timeout = std::chrono::milliseconds(std::stol(option(options, "NODE_TIMEOUT_MS", "10000")));
  auto& sys = network_system(*impl_, "node " + name);
  const auto tls = tls_from_options(options, "node " + name);
  if (tls.on()) impl_->eng->use_tls(tls.cert, tls.key, tls.ca);
  auto node = connect_node(sys, a, tls.on(), timeout);
  auto link = std::make_shared<actors::node_link>(sys, a.host, a.port, tls.on());
  auto w = link->connect(node, token, std::chrono::duration_cast<caf::timespan>(timeout));
  std::lock_guard lock(impl_->mutex);
  if (impl_->nodes.count(name)) throw Exception("node " + name + " was added already");
  impl_->enumerate_gpus(); // local devices first in the list
  impl_->nodes[name] = link;
  for (std::size_t i = 0; i < w.devices.size(); ++i)
    impl_->add(w.devices[i] + "@" + name, actors::make_remote_device(link, w.devices[i], w.info[i]), true);
}

void add_nodes_from_environment(Core& core) {
  const char* list = std::getenv("TROUPE_NODES");
  if (!list || !*list) return;
  AnyMap options;
  if (const char* file = std::getenv("TROUPE_NODE_TOKEN_FILE"); file && *file) {
    std::ifstream f(file);
    std::string token;
    if (!f || !std::getline(f, token) || token.empty())
      throw Exception(std::string("TROUPE_NODE_TOKEN_FILE: cannot read a token from ") + file);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
    options["NODE_TOKEN"] = token;
  }
  for (const char* name : {"NODE_TLS_CERT", "NODE_TLS_KEY", "NODE_TLS_CA"})
    if (const char* file = std::getenv((std::string("TROUPE_") + name).c_str()); file && *file) options[name] = std::string(file);
  std::string all = list;
  for (std::size_t at = 0; at <= all.size();) {
    auto comma = all.find(',', at);
    if (comma == std::string::npos) comma = all.size();
    const auto one = all.substr(at, comma - at);
    if (!one.empty()) {
      try {
        core.add_node(one, options);
      } catch (const std::exception& e) {
        throw Exception(std::string("TROUPE_NODES: ") + e.what());
      }
    }
    at = comma + 1;
  }
}

struct Worker::Impl {
  explicit Impl(Core::Impl& c) : core(c) {}
  Core::Impl& core;
  std::shared_ptr<actors::node_load> load = std::make_shared<actors::node_load>();
  caf::actor node;
  node_address at;
  std::vector<std::string> devices;
  bool published = false;
  uint16_t caf_port = 0;            ///< where CAF listens: `at` itself with TLS, else loopback behind the gate
  std::unique_ptr<basp_gate> gate; ///< plain TCP: clients come in through it
  /// Either kind of port (plain or TLS) is closed through CAF's plain middleman: both go to
  /// the one BASP broker (and CAF 0.17's caf::openssl::unpublish does not compile).
  void unpublish() {
    if (!published) return;
    if (gate) gate->stop_accepting();
    caf::io::unpublish(node, caf_port);
    published = false;
  }
};

Worker::Worker(Core& core, const std::string& listen, const AnyMap& options, std::function<void(const std::string&)> log)
    : impl_(std::make_unique<Impl>(*core.impl_)) {
  auto& ci = *core.impl_;
  engine::thread_release done{*ci.eng};
  impl_->at = parse_address("listen address", listen, true);
  for (const auto& [k, v] : options)
    if (k != "NODE_TOKEN" && k != "NODE_MAX_MODEL_BYTES" && k != "NODE_MAX_REQUEST_BYTES" && k != "NODE_INSECURE" &&
        !is_tls_option(k))
      throw Exception("troupe worker: unknown option '" + k +
                      "' (NODE_TOKEN, NODE_MAX_MODEL_BYTES, NODE_MAX_REQUEST_BYTES, NODE_INSECURE, NODE_TLS_CERT, "
                      "NODE_TLS_KEY, NODE_TLS_CA)");
  auto& sys = network_system(ci, "troupe worker");
  const auto tls = tls_from_options(options, "troupe worker");
  if (tls.on()) ci.eng->use_tls(tls.cert, tls.key, tls.ca);
  // A worker runs any model it is sent: beyond loopback, without a token or TLS (whose clients
  // need a certificate the worker's CA signed), anyone who can reach the port may run code-like
  // input on this machine. That takes an explicit yes.
  const std::string insecure = option(options, "NODE_INSECURE", "NO");
  if (insecure != "YES" && insecure != "NO")
    throw Exception("troupe worker: NODE_INSECURE is '" + insecure + "'; it takes YES or NO");
  if (option(options, "NODE_TOKEN", "").empty() && !tls.on() && !is_loopback(impl_->at.host)) {
    if (insecure != "YES")
      throw Exception("troupe worker: listening on " + impl_->at.text() +
                      " (beyond loopback) without a token or TLS would let anyone who can reach the port run models on "
                      "this "
                      "machine: give a token (-token-file, NODE_TOKEN; and TLS where the link is not trusted), or "
                      "accept that with -insecure (NODE_INSECURE=YES)");
    if (log)
      log("warning: listening on " + impl_->at.text() +
          " without a token or TLS (-insecure): anyone who can reach the port may run models on this machine");
  }
  actors::node_spec spec;
  for (const auto& name : ci.listed()) {
    if (name.find('@') != std::string::npos) continue; // a node serves its own devices only
    // TROUPE_EXCLUDED_OPS and TROUPE_FAIL_EVERY of the worker's environment act as they do locally.
    spec.devices[name] = debug_device(ci.find(name).entry.dev, excluded_ops(name, nullptr), fail_every(name, nullptr));
    impl_->devices.push_back(name);
  }
  spec.pool_for = [&ci](const std::string& name) { return ci.pool_for(name); };
  spec.token = option(options, "NODE_TOKEN", "");
  spec.machine["NODE_CORES"] = std::to_string(core_count());
  spec.max_graph_bytes = byte_limit(options, "NODE_MAX_MODEL_BYTES", spec.max_graph_bytes);
  spec.max_request_bytes = byte_limit(options, "NODE_MAX_REQUEST_BYTES", spec.max_request_bytes);
  // Inputs of requests in flight, all clients together: half this machine's memory.
  if (const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE); pages > 0 && page > 0)
    spec.max_held_bytes = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 2;
  // Plain TCP: CAF listens on loopback only, behind basp_gate (runtime/basp_gate.hpp), which
  // bounds what a client that has not authenticated can make the worker hold or keep open.
  basp_gate_limits limits;
  limits.max_frame = std::max(spec.max_graph_bytes, spec.max_request_bytes) + (std::size_t(16) << 20);
  auto gate_log = log; // called from the gate's thread too
  spec.log = std::move(log);
  impl_->node = actors::spawn_node(sys, std::move(spec), impl_->load);
  auto port = tls.on() ? caf::openssl::publish(impl_->node, impl_->at.port, impl_->at.host.c_str(), true)
                       : caf::io::publish(impl_->node, 0, "127.0.0.1", true);
  if (!port) {
    caf::anon_send_exit(impl_->node, caf::exit_reason::user_shutdown);
    throw Exception("troupe worker: cannot listen at " + impl_->at.text() + ": " + sys.render(port.error()));
  }
  impl_->caf_port = *port;
  impl_->published = true;
  if (tls.on()) {
    impl_->at.port = *port;
    return;
  }
  try {
    impl_->gate = std::make_unique<basp_gate>(impl_->at.host, impl_->at.port, *port, limits, std::move(gate_log));
  } catch (const std::exception& e) {
    impl_->unpublish();
    caf::anon_send_exit(impl_->node, caf::exit_reason::user_shutdown);
    throw Exception(std::string("troupe worker: ") + e.what());
  }
  impl_->at.port = impl_->gate->port();
}

Worker::~Worker() {
  impl_->unpublish();
  impl_->gate.reset();
  caf::anon_send_exit(impl_->node, caf::exit_reason::user_shutdown);
}

std::string Worker::address() const { return impl_->at.text(); }
std::vector<std::string> Worker::devices() const { return impl_->devices; }
int64_t Worker::in_flight() const { return impl_->load->in_flight.load(); }
uint64_t Worker::served() const { return impl_->load->served.load(); }

void Worker::drain() {
  impl_->unpublish();
  while (impl_->load->in_flight.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

} // namespace troupe
