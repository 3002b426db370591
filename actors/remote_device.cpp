#include "actors/remote_device.hpp"

#include <future>
#include <optional>
#include <variant>

#include <troupe/exception.hpp>

#include "actors/messages.hpp"
#include "actors/node.hpp"
#include "graph/wire.hpp"

namespace troupe::actors {

/// What a call through a node's link ends with: the reply, or the failure (kind and message).
template <class T>
using outcome = std::variant<T, failure>;

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

/// A node's error reply as a failure: its code is a failure_kind, or one of node_errc.
failure failure_of(const caf::error& e, const std::string& address) {
  std::string message = e.category() == np::error_category && e.context().match_elements<std::string>()
                            ? e.context().get_as<std::string>(0)
                            : caf::to_string(e);
  if (e.category() == np::error_category && e.code() <= static_cast<uint8_t>(failure_kind::cancelled))
    return {static_cast<failure_kind>(e.code()), "node " + address + ": " + message};
  if (e.category() == np::error_category) return {failure_kind::bad_input, "node " + address + ": " + message};
  // CAF's own errors: the node or the link is gone.
  return {failure_kind::device_lost, "node " + address + " is unreachable: " + message};
}

struct link_state {
  caf::actor session;
  std::string address;
  /// Calls in flight: failed at once when the session goes down.
  std::map<uint64_t, std::function<void(const failure&)>> pending;
  uint64_t next = 1;
  bool lost = false;
};

/// Forwards `msg` to the session and hands the reply, or the failure, to `done`.
template <class Reply, class Atom, class Msg>
void forward(caf::stateful_actor<link_state>* self, Atom atom, Msg msg, outcome_promise<Reply> done) {
  auto& st = self->state;
  if (st.lost || !st.session) {
    done->set_value(failure{failure_kind::device_lost, "node " + st.address + " is gone"});
    return;
  }
  const uint64_t id = st.next++;
  st.pending.emplace(id, [done](const failure& f) { done->set_value(f); });
  self->request(st.session, caf::infinite, atom, std::move(msg))
      .then(
          [=](Reply& r) {
            if (self->state.pending.erase(id)) done->set_value(std::move(r));
          },
          [=](caf::error& e) {
            if (self->state.pending.erase(id)) done->set_value(failure_of(e, self->state.address));
          });
}

caf::behavior link_actor(caf::stateful_actor<link_state>* self, std::string address) {
  self->state.address = address;
  self->set_down_handler([=](caf::down_msg&) {
    auto& st = self->state;
    st.lost = true;
    const failure f{failure_kind::device_lost, "node " + st.address + " is gone (the link dropped or the worker stopped)"};
    for (auto& [id, fail] : st.pending) fail(f);
    st.pending.clear();
  });
  return {
      [=](session_atom, caf::actor& session) {
        self->state.session = session;
        self->monitor(session);
      },
      [=](np::compile_atom a, compile_call& c) { forward(self, a, std::move(c.msg), c.done); },
      [=](np::infer_atom a, infer_call& c) { forward(self, a, std::move(c.msg), c.done); },
  };
}

/// Sends `msg` through the link and waits for its outcome (a device worker blocks here, as it
/// blocks on a fence or a oneDNN stream).
template <class Reply, class Atom, class Msg>
outcome<Reply> through(const caf::actor& link, Atom atom, Msg msg) {
  auto done = std::make_shared<std::promise<outcome<Reply>>>();
  auto f = done->get_future();
  caf::anon_send(link, atom, link_call<Msg, Reply>{std::move(msg), done});
  return f.get();
}

class remote_executable final : public kernels::executable {
public:
  remote_executable(caf::actor link, std::string device, uint64_t model) : link_(std::move(link)), device_(std::move(device)), model_(model) {}
  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    np::infer_request req;
    req.model = model_;
    for (const auto& t : inputs) req.inputs.push_back(graph::encode_tensor(t));
    auto r = through<np::infer_reply>(link_, np::infer_atom::value, std::move(req));
    if (auto* f = std::get_if<failure>(&r)) {
      if (f->kind == failure_kind::bad_input) throw Exception(f->message);
      throw kernels::device_error(f->kind, f->message);
    }
    auto& reply = std::get<np::infer_reply>(r);
    outputs.clear();
    for (std::size_t i = 0; i < reply.outputs.size(); ++i)
      outputs.push_back(graph::decode_tensor(reply.outputs[i], "output #" + std::to_string(i) + " from " + device_));
  }
  std::vector<kernels::op_profile> profile() const override { return {}; }
  std::unique_ptr<kernels::executable> clone() const override {
    return std::make_unique<remote_executable>(link_, device_, model_);
  }

private:
  caf::actor link_;
  std::string device_;
  uint64_t model_;
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
    req.streams = 1;
    req.num_threads = cfg.num_threads;
    req.precision = to_string(cfg.inference_precision);
    req.profiling = cfg.profiling;
    req.f16_arithmetic = cfg.f16_arithmetic;
    const std::string bytes = graph::encode_graph(g);
    req.hash = model_hash(bytes, req);
    // First the hash alone: a node that has the model (another client sent it) compiles nothing.
    auto r = through<np::compiled>(link_->actor(), np::compile_atom::value, req);
    if (std::holds_alternative<failure>(r)) {
      req.graph = bytes;
      r = through<np::compiled>(link_->actor(), np::compile_atom::value, std::move(req));
    }
    if (auto* f = std::get_if<failure>(&r)) throw Exception(name() + ": " + f->message);
    return std::make_unique<remote_executable>(link_->actor(), name(), std::get<np::compiled>(r).model);
  }

private:
  std::shared_ptr<node_link> link_;
  std::string remote_;
  std::map<std::string, std::string> info_;
};

} // namespace

node_link::node_link(caf::actor_system& sys, std::string address)
    : sys_(sys), address_(std::move(address)), actor_(sys.spawn<caf::detached>(link_actor, address_)) {}

node_link::~node_link() { caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown); }

np::welcome node_link::connect(const caf::actor& node, const std::string& token, caf::timespan timeout) {
  caf::scoped_actor self{sys_};
  std::optional<np::welcome> w;
  std::string why;
  self->request(node, timeout, np::hello_atom::value, np::hello{np::version, token, actor_})
      .receive([&](np::welcome& x) { w = std::move(x); },
               [&](caf::error& e) { why = failure_of(e, address_).message; });
  if (!w) throw Exception(why);
  caf::anon_send(actor_, session_atom::value, w->session);
  return std::move(*w);
}

std::shared_ptr<kernels::device> make_remote_device(std::shared_ptr<node_link> link, std::string remote_name,
                                                    std::map<std::string, std::string> info) {
  return std::make_shared<remote_device>(std::move(link), std::move(remote_name), std::move(info));
}

} // namespace troupe::actors
