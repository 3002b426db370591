#include "actors/remote_device.hpp"

#include <algorithm>
#include <future>
#include <mutex>
#include <optional>
#include <variant>

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>

#include <troupe/exception.hpp>

#include "actors/messages.hpp"
#include "actors/node.hpp"
#include "graph/wire.hpp"

namespace troupe::actors {

/// What a call through a node's link ends with: the reply, or the failure (kind and message;
/// `need_graph` when the node asks for the model's bytes).
struct link_failure {
  failure f;
  bool need_graph = false;
};
template <class T>
using outcome = std::variant<T, link_failure>;

/// Where the link actor puts a call's outcome; the calling thread waits on its future.
template <class T>
using outcome_promise = std::shared_ptr<std::promise<outcome<T>>>;

/// A call through the link: the message for the session and where its outcome goes (local
/// only: it stays in this process).
template <class Msg, class Reply>
struct link_call {
  Msg msg;
  outcome_promise<Reply> done;
};
using compile_call = link_call<node_protocol::compile_request, node_protocol::compiled>;
using infer_call = link_call<node_protocol::infer_request, node_protocol::infer_reply>;

} // namespace troupe::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::actors::compile_call)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::actors::infer_call)

namespace troupe::actors {

namespace np = node_protocol;

namespace {

using session_atom = caf::atom_constant<caf::atom("n_session")>;
using reconnect_atom = caf::atom_constant<caf::atom("n_reconn")>;

/// The first reconnect is tried this soon after the link dropped; each failed one doubles
/// the wait, up to the second figure.
constexpr auto first_retry = std::chrono::milliseconds(100);
constexpr auto last_retry = std::chrono::milliseconds(2000);
/// A reconnect that gets no answer within this is counted as failed.
constexpr auto reconnect_timeout = std::chrono::seconds(5);

/// A node's error reply as a failure: its code is a failure_kind's (failure_code), or one of
/// node_errc.
link_failure failure_of(const caf::error& e, const std::string& address) {
  if (!e) return {{failure_kind::device_failure, "node " + address + " answered with an empty error"}};
  std::string message = e.category() == np::error_category && e.context().match_elements<std::string>()
                            ? e.context().get_as<std::string>(0)
                            : caf::to_string(e);
  if (e.category() == np::error_category && e.code() >= 1 && e.code() <= np::last_failure_code)
    return {{static_cast<failure_kind>(np::failure_kind_of(e.code())), "node " + address + ": " + message}};
  if (e.category() == np::error_category)
    return {{failure_kind::bad_input, "node " + address + ": " + message},
            e.code() == static_cast<uint8_t>(np::node_errc::need_graph)};
  // CAF's own errors: the node or the link is gone.
  return {{failure_kind::device_lost, "node " + address + " is unreachable: " + message}};
}

struct link_state {
  std::string host;
  uint16_t port = 0;
  bool tls = false; ///< reconnects go through CAF's OpenSSL layer
  std::string address; ///< host:port
  std::string token;
  std::shared_ptr<link_shared> shared;
  caf::actor session; ///< null while the node is gone
  /// Calls in flight: failed at once when the session goes down.
  std::map<uint64_t, std::function<void(const link_failure&)>> pending;
  uint64_t next = 1;
  caf::timespan retry_in = first_retry;
};

using link_actor_t = caf::stateful_actor<link_state>;

/// Fails every call in flight with `f`.
void fail_pending(link_actor_t* self, const failure& f) {
  auto pending = std::move(self->state.pending);
  self->state.pending.clear();
  for (auto& [id, fail] : pending) fail({f});
}

/// Forwards `msg` to the session and hands the reply, or the failure, to `done`.
template <class Reply, class Atom, class Msg>
void forward(link_actor_t* self, Atom atom, Msg msg, outcome_promise<Reply> done) {
  auto& st = self->state;
  if (!st.session) {
    done->set_value(link_failure{{failure_kind::device_lost, "node " + st.address + " is gone (reconnecting)"}});
    return;
  }
  const uint64_t id = st.next++;
  st.pending.emplace(id, [done](const link_failure& f) { done->set_value(f); });
  self->request(st.session, caf::infinite, atom, std::move(msg))
      .then(
          [=](Reply& r) {
            if (self->state.pending.erase(id)) done->set_value(std::move(r));
          },
          [=](caf::error& e) {
            if (self->state.pending.erase(id)) done->set_value(failure_of(e, self->state.address));
          });
}

void adopt(link_actor_t* self, caf::actor session) {
  self->state.session = std::move(session);
  self->state.retry_in = first_retry;
  self->monitor(self->state.session);
}

/// One try at finding the node again: connect, hello with the token, adopt the new session.
void reconnect(link_actor_t* self) {
  auto retry = [self] {
    auto& st = self->state;
    self->delayed_send(self, st.retry_in, reconnect_atom::value);
    st.retry_in = std::min<caf::timespan>(st.retry_in * 2, last_retry);
  };
  auto& sys = self->home_system();
  auto mm = self->state.tls ? sys.openssl_manager().actor_handle() : sys.middleman().actor_handle();
  const auto& st = self->state;
  self->request(mm, reconnect_timeout, caf::connect_atom::value, st.host, st.port)
      .then(
          [=](const caf::node_id&, caf::strong_actor_ptr& node, const std::set<std::string>&) {
            if (!node) return retry();
            const np::hello h{np::version, self->state.token, caf::actor_cast<caf::actor>(self)};
            self->request(caf::actor_cast<caf::actor>(node), reconnect_timeout, np::hello_atom::value, h)
                .then(
                    [=](np::welcome& w) {
                      adopt(self, std::move(w.session));
                      ++self->state.shared->generation;
                      self->state.shared->presence->set(true);
                    },
                    [=](caf::error&) { retry(); });
          },
          [=](caf::error&) { retry(); });
}

caf::behavior link_actor(link_actor_t* self, std::string host, uint16_t port, bool tls,
                         std::shared_ptr<link_shared> shared) {
  auto& st = self->state;
  st.tls = tls;
  st.host = std::move(host);
  st.port = port;
  st.address = st.host + ":" + std::to_string(port);
  st.shared = std::move(shared);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    if (!st.session || dm.source != st.session.address()) return; // an earlier session's
    st.session = nullptr;
    // First gone (MULTI stops sending here), then the runs in flight fail (and go elsewhere).
    st.shared->presence->set(false);
    fail_pending(self, {failure_kind::device_lost,
                        "node " + st.address + " is gone (the link dropped or the worker stopped)"});
    self->delayed_send(self, st.retry_in, reconnect_atom::value);
  });
  self->set_exit_handler([=](caf::exit_msg& m) {
    fail_pending(self, {failure_kind::device_lost, "node " + self->state.address + ": the link was closed"});
    self->quit(m.reason);
  });
  return {
      [=](session_atom, caf::actor& session, std::string& token) {
        self->state.token = std::move(token);
        adopt(self, std::move(session));
      },
      [=](reconnect_atom) {
        if (!self->state.session) reconnect(self);
      },
      [=](np::compile_atom a, compile_call& c) { forward(self, a, std::move(c.msg), c.done); },
      [=](np::infer_atom a, infer_call& c) { forward(self, a, std::move(c.msg), c.done); },
  };
}

/// Sends `msg` through the link and waits for its outcome (a device worker blocks here, as it
/// blocks on a fence or a oneDNN stream).
template <class Reply, class Atom, class Msg>
outcome<Reply> through(const node_link& link, Atom atom, Msg msg) {
  auto done = std::make_shared<std::promise<outcome<Reply>>>();
  auto f = done->get_future();
  caf::anon_send(link.actor(), atom, link_call<Msg, Reply>{std::move(msg), done});
  try {
    return f.get();
  } catch (const std::future_error&) { // the link actor is gone: the message was dropped
    return link_failure{{failure_kind::device_lost, "node " + link.address() + ": the link was closed"}};
  }
}

/// A model as compiled on a node: what it takes to compile it again after the node came back.
class remote_model {
public:
  remote_model(std::shared_ptr<node_link> link, std::string device, np::compile_request req, std::string bytes)
      : link_(std::move(link)), device_(std::move(device)), req_(std::move(req)), bytes_(std::move(bytes)) {}

  /// The node's id of the model, compiling it there first when the link reconnected since.
  uint64_t id() {
    std::lock_guard lock(mutex_);
    const auto now = link_->shared()->generation.load();
    if (!id_ || generation_ != now) {
      id_ = compile();
      generation_ = now;
    }
    return *id_;
  }
  /// The node lost the model (it restarted and the link has not noticed yet).
  void forget(uint64_t id) {
    std::lock_guard lock(mutex_);
    if (id_ == id) id_.reset();
  }
  const node_link& link() const { return *link_; }
  const std::string& device() const { return device_; }

private:
  uint64_t compile() {
    // First the hash alone: a node that has the model (another client sent it) compiles nothing.
    auto r = through<np::compiled>(*link_, np::compile_atom::value, req_);
    if (auto* f = std::get_if<link_failure>(&r); f && f->need_graph) {
      auto with_bytes = req_;
      with_bytes.graph = bytes_;
      r = through<np::compiled>(*link_, np::compile_atom::value, std::move(with_bytes));
    }
    if (auto* f = std::get_if<link_failure>(&r)) {
      if (f->f.kind == failure_kind::bad_input) throw Exception(device_ + ": " + f->f.message);
      throw kernels::device_error(f->f.kind, device_ + ": " + f->f.message);
    }
    return std::get<np::compiled>(r).model;
  }

  std::shared_ptr<node_link> link_;
  std::string device_;
  np::compile_request req_; ///< without the bytes
  std::string bytes_;
  std::mutex mutex_;
  std::optional<uint64_t> id_;
  uint64_t generation_ = 0;
};

class remote_executable final : public kernels::executable {
public:
  explicit remote_executable(std::shared_ptr<remote_model> model) : model_(std::move(model)) {}
  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    np::infer_request req;
    for (const auto& t : inputs) req.inputs.push_back(graph::encode_tensor(t));
    req.model = model_->id();
    auto r = through<np::infer_reply>(model_->link(), np::infer_atom::value, req);
    if (auto* f = std::get_if<link_failure>(&r); f && f->need_graph) { // the node restarted: once more
      model_->forget(req.model);
      req.model = model_->id();
      r = through<np::infer_reply>(model_->link(), np::infer_atom::value, std::move(req));
    }
    if (auto* f = std::get_if<link_failure>(&r)) {
      if (f->f.kind == failure_kind::bad_input) throw Exception(f->f.message);
      throw kernels::device_error(f->f.kind, f->f.message);
    }
    auto& reply = std::get<np::infer_reply>(r);
    outputs.clear();
    for (std::size_t i = 0; i < reply.outputs.size(); ++i)
      outputs.push_back(
          graph::decode_tensor(reply.outputs[i], "output #" + std::to_string(i) + " from " + model_->device()));
  }
  std::vector<kernels::op_profile> profile() const override { return {}; }
  std::unique_ptr<kernels::executable> clone() const override { return std::make_unique<remote_executable>(model_); }

private:
  std::shared_ptr<remote_model> model_;
};

class remote_device final : public kernels::device {
public:
  remote_device(std::shared_ptr<node_link> link, std::string remote, std::map<std::string, std::string> info)
      : link_(std::move(link)), remote_(std::move(remote)), info_(std::move(info)) {
    info_["NODE"] = link_->address();
  }
  std::string name() const override { return remote_ + "@" + link_->address(); }
  std::map<std::string, std::string> info() const override { return info_; }
  /// The node checks each op when it compiles (and names the one it cannot run).
  kernels::support query(const graph::Graph&, const graph::Op&) const override { return {true, {}}; }
  std::unique_ptr<kernels::executable> compile(const graph::Graph& g, const kernels::compile_config& cfg) const override {
    np::compile_request req;
    req.device = remote_;
    req.streams = std::max(1, cfg.streams);
    req.num_threads = cfg.num_threads;
    req.precision = to_string(cfg.inference_precision);
    req.profiling = cfg.profiling;
    req.f16_arithmetic = cfg.f16_arithmetic;
    std::string bytes = graph::encode_graph(g);
    req.hash = model_hash(bytes, req);
    auto model = std::make_shared<remote_model>(link_, name(), std::move(req), std::move(bytes));
    model->id(); // compiled now: its errors are compile_model's
    return std::make_unique<remote_executable>(std::move(model));
  }
  std::shared_ptr<kernels::device_presence> presence() const override { return link_->shared()->presence; }

private:
  std::shared_ptr<node_link> link_;
  std::string remote_;
  std::map<std::string, std::string> info_;
};

} // namespace

node_link::node_link(caf::actor_system& sys, std::string host, uint16_t port, bool tls)
    : sys_(sys), address_(host + ":" + std::to_string(port)),
      actor_(sys.spawn(link_actor, std::move(host), port, tls, shared_)) {}

node_link::~node_link() { caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown); }

np::welcome node_link::connect(const caf::actor& node, const std::string& token, caf::timespan timeout) {
  caf::scoped_actor self{sys_};
  std::optional<np::welcome> w;
  std::string why;
  self->request(node, timeout, np::hello_atom::value, np::hello{np::version, token, actor_})
      .receive([&](np::welcome& x) { w = std::move(x); },
               [&](caf::error& e) { why = failure_of(e, address_).f.message; });
  if (!w) throw Exception(why);
  caf::anon_send(actor_, session_atom::value, w->session, token);
  return std::move(*w);
}

std::shared_ptr<kernels::device> make_remote_device(std::shared_ptr<node_link> link, std::string remote_name,
                                                    std::map<std::string, std::string> info) {
  return std::make_shared<remote_device>(std::move(link), std::move(remote_name), std::move(info));
}

} // namespace troupe::actors
