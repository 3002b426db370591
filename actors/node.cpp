#include "actors/node.hpp"

#include <algorithm>
#include <mutex>
#include <set>

#include "actors/protocol/node.hpp"
#include "actors/subgraph_actor.hpp"
#include "base/rate_limited_log.hpp"
#include "graph/shape_inference.hpp"
#include "graph/wire.hpp"

namespace troupe::actors {

namespace np = node_protocol;
static_assert(np::failure_code(static_cast<int>(failure_kind::cancelled)) == np::last_failure_code);

namespace {

using done_atom = caf::atom_constant<caf::atom("n_done")>;

caf::error node_error(np::node_errc code, std::string message) {
  return caf::error(static_cast<uint8_t>(code), np::error_category, caf::make_message(std::move(message)));
}

caf::error failure_error(const failure& f) {
  return caf::error(np::failure_code(static_cast<int>(f.kind)), np::error_category, caf::make_message(f.message));
}

/// A model compiled on this node, shared by every session that sends the same graph.
struct node_model {
  uint64_t id = 0;
  uint64_t hash = 0;
  uint64_t last_use = 0;           ///< node_shared::clock when last compiled or run (under its mutex)
  std::atomic<int> in_flight{0};   ///< inferences running on it: it is not forgotten meanwhile
  std::string device;
  std::vector<graph::Value> inputs; ///< what each input must be
  std::unique_ptr<subgraph> run;
  int streams = 1;
};

/// The host part of a node id's text ("HOSTHASH#PID"): the processes of one machine share it.
std::string host_of(const std::string& who) { return who.substr(0, who.find('#')); }

struct node_shared {
  node_spec spec;
  std::shared_ptr<node_load> load;
  std::mutex mutex;
  std::map<uint64_t, std::shared_ptr<node_model>> by_hash;
  std::map<uint64_t, std::shared_ptr<node_model>> by_id;
  uint64_t next_id = 1;
  /// Refusals in a row by client host (the node id's host part), and the refusals being held
  /// back (the node actor's own: touched on its thread only).
  std::map<std::string, int> refused_in_a_row;
  std::map<uint64_t, caf::response_promise> held_refusals;
  uint64_t next_refusal = 1;
  /// The sessions alive, linked to the node: their ends are not the node's.
  std::set<caf::actor_addr> sessions;

  /// Every line of the node goes through here, by kind: a client's flood of bad messages
  /// costs the worker ten lines a second, not one per message.
  rate_limited_log limited{[this](const std::string& line) {
    if (spec.log) spec.log(line);
  }};
  void log(const std::string& kind, const std::string& line) { limited(kind, line); }
  uint64_t clock = 0;
  std::shared_ptr<node_model> find_hash(uint64_t h) {
    std::lock_guard lock(mutex);
    auto it = by_hash.find(h);
    if (it == by_hash.end()) return nullptr;
    it->second->last_use = ++clock;
    return it->second;
  }
  std::shared_ptr<node_model> find_id(uint64_t id) {
    std::lock_guard lock(mutex);
    auto it = by_id.find(id);
    if (it == by_id.end()) return nullptr;
    it->second->last_use = ++clock;
    return it->second;
  }
  /// Past max_models, the least recently used models that run nothing are forgotten (under the
  /// mutex): a client that asks for one again gets need_graph and sends it again. Returns what
  /// was forgotten, to be destroyed (and logged) outside the lock.
  std::vector<std::shared_ptr<node_model>> forget_idle_models() {
    std::vector<std::shared_ptr<node_model>> gone;
    while (by_id.size() > spec.max_models) {
      std::shared_ptr<node_model> oldest;
      for (const auto& [id, m] : by_id)
        if (m->in_flight.load() == 0 && (!oldest || m->last_use < oldest->last_use)) oldest = m;
      if (!oldest) break; // every one is running: over the bound until they finish
      by_id.erase(oldest->id);
      by_hash.erase(oldest->hash);
      gone.push_back(std::move(oldest));
    }
    return gone;
  }
};

/// A finished inference, handed back to its session as a message: the sink runs on a device
/// worker's thread, and only the session may deliver its promises.
class reply_sink final : public completion_sink {
public:
  reply_sink(caf::actor session, uint64_t job) : session_(std::move(session)), job_(job) {}
  void on_outputs(uint64_t, std::vector<Tensor> outputs, std::vector<kernels::op_profile>) noexcept override {
    try {
      np::infer_reply r;
      for (const auto& t : outputs) r.outputs.push_back(graph::encode_tensor(t));
      caf::anon_send(session_, done_atom::value, job_, std::move(r));
    } catch (const std::exception& e) {
      caf::anon_send(session_, done_atom::value, job_,
                     failure_error({failure_kind::device_failure, std::string("encoding the outputs: ") + e.what()}));
    }
  }
  void on_error(uint64_t, const failure& f) noexcept override {
    caf::anon_send(session_, done_atom::value, job_, failure_error(f));
  }
  bool wanted(uint64_t) const noexcept override { return true; }

private:
  caf::actor session_;
  uint64_t job_;
};

struct session_state {
  std::map<uint64_t, caf::response_promise> pending;   ///< inferences running
  /// Their input bytes (node_load::held_bytes) and models (node_model::in_flight).
  std::map<uint64_t, std::pair<uint64_t, std::shared_ptr<node_model>>> held;
  std::map<uint64_t, caf::response_promise> compiling; ///< compiles running (jobs share the numbering)
  uint64_t next_job = 1;
};

/// Delivers `value` to job `job`'s promise in `jobs` and forgets it; false when there is no
/// such job (it was answered already: its client went).
template <class T>
bool settle(std::map<uint64_t, caf::response_promise>& jobs, uint64_t job, T&& value) {
  auto it = jobs.find(job);
  if (it == jobs.end()) return false;
  it->second.deliver(std::forward<T>(value));
  jobs.erase(it);
  return true;
}

/// The element types of a message by CAF's names, e.g. "(@str, @i32)": what a log line says of a
/// message it refuses. Never its values: a client may send one as large as a frame may be.
std::string element_types(caf::actor_system& sys, caf::message_view& x) {
  auto& content = x.content();
  const std::size_t shown = std::min<std::size_t>(content.size(), 8);
  std::string out = "(";
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    out += sys.types().portable_name(content.type(i));
  }
  if (content.size() > shown) out += ", ... " + std::to_string(content.size()) + " elements";
  return out + ")";
}

/// What a node and its sessions answer to a message of no protocol step: an error to the
/// client and a line in the worker's log, not CAF's default print on stderr (a client could
/// fill the worker's stderr with them).
auto unexpected_message_handler(std::shared_ptr<node_shared> sh, std::string where) {
  return [sh, where](caf::scheduled_actor* self, caf::message_view& x) -> caf::result<caf::message> {
    const auto sender = self->current_sender();
    const std::string from = sender ? caf::to_string(sender->node()) : std::string("?");
    sh->log("unexpected messages from " + from,
            where + ": an unexpected message from " + from + " was refused: " + element_types(self->home_system(), x));
    return caf::sec::unexpected_message;
  };
}

/// An inference answered: no longer in flight, its inputs no longer held.
void release(session_state& st, node_load& load, uint64_t job) {
  --load.in_flight;
  if (auto it = st.held.find(job); it != st.held.end()) {
    load.held_bytes -= it->second.first;
    --it->second.second->in_flight;
    st.held.erase(it);
  }
}

/// Compiles `req` on this node, or says why not.
caf::expected<np::compiled> compile(node_shared& sh, caf::actor_system& sys, np::compile_request& req) {
  const auto dev = sh.spec.devices.find(req.device);
  if (dev == sh.spec.devices.end()) return node_error(np::node_errc::bad_request, "no device '" + req.device + "' here");
  if (!req.graph.empty() && req.hash != model_hash(req.graph, req))
    return node_error(np::node_errc::bad_request, "the model's hash does not match its bytes");
  if (auto known = sh.find_hash(req.hash)) return np::compiled{known->id, known->streams};
  if (req.graph.empty()) return node_error(np::node_errc::need_graph, "send the model's bytes");
  if (req.streams < 0 || req.streams > sh.spec.max_streams)
    return node_error(np::node_errc::bad_request, "the model asks for " + std::to_string(req.streams) +
                                                      " streams; this node runs 1 to " +
                                                      std::to_string(sh.spec.max_streams) + " per model");
  if (req.num_threads < 0 || req.num_threads > sh.spec.max_threads)
    return node_error(np::node_errc::bad_request, "the model asks for " + std::to_string(req.num_threads) +
                                                      " threads per stream; this node runs 0 (its default) to " +
                                                      std::to_string(sh.spec.max_threads));
  if (req.precision != "" && req.precision != "f32" && req.precision != "bf16" && req.precision != "f16")
    return node_error(np::node_errc::bad_request, "unknown precision '" + req.precision + "' (f32, bf16 or f16)");
  if (req.graph.size() > sh.spec.max_graph_bytes)
    return node_error(np::node_errc::bad_request, "the model is " + std::to_string(req.graph.size()) +
                                                      " bytes, more than this node takes");
  try {
    auto g = graph::decode_graph(req.graph, "the model sent for " + req.device);
    // The shapes in the bytes are the client's claims: derived again from the inputs' here, so
    // that the device plans its buffers from what the ops compute (a forged shape made the CPU's
    // planner recurse without end), and each bounded before anything is allocated.
    graph::forget_derived_shapes(g);
    graph::infer_shapes(g);
    for (const auto& v : g.values) {
      if (!v.shape.is_static()) continue;
      uint64_t bytes = std::max<uint64_t>(1, element_size(v.type));
      bool over = false;
      for (auto d : v.shape.to_shape()) over = over || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes);
      if (over || bytes > sh.spec.max_value_bytes)
        return node_error(np::node_errc::bad_request, "value '" + v.name + "' of the model is " + v.shape.to_string() +
                                                          " " + to_string(v.type) + ", more than the " +
                                                          std::to_string(sh.spec.max_value_bytes) +
                                                          " bytes this node holds for one value");
    }
    for (const auto& op : g.ops)
      if (auto s = dev->second->query(g, op); !s.supported)
        return node_error(np::node_errc::bad_request, req.device + " does not support op '" + op.type + "' (node '" +
                                                          op.name + "'): " + s.reason);
    kernels::compile_config cfg;
    cfg.num_threads = req.num_threads;
    cfg.inference_precision = req.precision == "bf16" ? element_type::bf16
                              : req.precision == "f16" ? element_type::f16
                                                       : element_type::f32;
    cfg.profiling = req.profiling;
    cfg.f16_arithmetic = req.f16_arithmetic;
    auto prog = std::make_shared<program>();
    prog->prototype = dev->second->compile(g, cfg);
    prog->profiling = cfg.profiling;
    auto m = std::make_shared<node_model>();
    m->device = req.device;
    for (auto v : g.inputs) m->inputs.push_back(g.value(v));
    m->streams = std::max(1, req.streams);
    subgraph_spec spec;
    spec.fixed = std::move(prog);
    spec.streams = static_cast<std::size_t>(m->streams);
    spec.pool = sh.spec.pool_for ? sh.spec.pool_for(req.device) : nullptr;
    m->run = std::make_unique<subgraph>(sys, std::move(spec));
    std::unique_lock lock(sh.mutex);
    if (auto it = sh.by_hash.find(req.hash); it != sh.by_hash.end()) // another client was faster
      return np::compiled{it->second->id, it->second->streams};
    m->id = sh.next_id++;
    m->hash = req.hash;
    m->last_use = ++sh.clock;
    sh.by_hash[req.hash] = m;
    sh.by_id[m->id] = m;
    const np::compiled done{m->id, m->streams};
    auto gone = sh.forget_idle_models();
    lock.unlock();
    for (const auto& f : gone)
      sh.log("models forgotten", "forgot model " + std::to_string(f->id) + " on " + f->device +
                                     " (the least recently used of more than " + std::to_string(sh.spec.max_models) + ")");
    return done;
  } catch (const std::exception& e) {
    return node_error(np::node_errc::bad_request, e.what());
  }
}

/// Decodes and checks a request's inputs against the model's.
/// `bytes`: the request's input bytes, counted once by the caller (it also bounds what is held).
std::vector<Tensor> inputs_of(const node_model& m, const np::infer_request& req, uint64_t bytes, std::size_t max_bytes) {
  if (req.inputs.size() != m.inputs.size())
    throw Exception("the model on " + m.device + " takes " + std::to_string(m.inputs.size()) + " inputs, the request has " +
                    std::to_string(req.inputs.size()));
  if (bytes > max_bytes)
    throw Exception("the request is " + std::to_string(bytes) + " bytes, more than this node takes (" +
                    std::to_string(max_bytes) + ")");
  std::vector<Tensor> r;
  for (std::size_t i = 0; i < req.inputs.size(); ++i) {
    const auto& want = m.inputs[i];
    auto t = graph::decode_tensor(req.inputs[i], "input '" + want.name + "'");
    if (t.get_element_type() != want.type || !want.shape.is_static() || t.get_shape() != want.shape.to_shape())
      throw Exception("input '" + want.name + "': expected " + to_string(want.type) + " " + want.shape.to_string() +
                      ", got " + to_string(t.get_element_type()) + " " + to_string(t.get_shape()));
    r.push_back(std::move(t));
  }
  return r;
}

/// Compiles `req` off the session's thread (compiling blocks) and hands the outcome back to
/// the session as job `job`: only the session talks to the client (an actor whose handle
/// crosses the wire stays scheduled; see docs/internals.md).
void compile_job(caf::blocking_actor*, std::shared_ptr<node_shared> sh, np::compile_request req, caf::actor session,
                 uint64_t job, std::string who) {
  auto r = compile(*sh, session->home_system(), req);
  if (!r && r.error().code() != static_cast<uint8_t>(np::node_errc::need_graph))
    sh->log("refused models of " + who, "refused a model of client " + who + " for " + req.device + ": " +
            (r.error().context().match_elements<std::string>() ? r.error().context().get_as<std::string>(0)
                                                                 : std::string("?")));
  if (r) caf::anon_send(session, done_atom::value, job, *r);
  else caf::anon_send(session, done_atom::value, job, r.error());
}

caf::behavior session(caf::stateful_actor<session_state>* self, std::shared_ptr<node_shared> sh, caf::actor client,
                      std::string who) {
  self->monitor(client);
  self->set_default_handler(unexpected_message_handler(sh, "the session of client " + who));
  self->set_down_handler([=](caf::down_msg&) {
    sh->log("clients of " + host_of(who), "client " + who + " disconnected");
    for (auto& [job, p] : self->state.pending) {
      p.deliver(failure_error({failure_kind::cancelled, "the client is gone"}));
      release(self->state, *sh->load, job);
    }
    self->state.pending.clear();
    for (auto& [job, p] : self->state.compiling) p.deliver(failure_error({failure_kind::cancelled, "the client is gone"}));
    self->state.compiling.clear();
    self->quit();
  });
  return {
      [=](np::compile_atom, np::compile_request& req) -> caf::result<np::compiled> {
        const uint64_t job = self->state.next_job++;
        auto promise = self->make_response_promise<np::compiled>();
        self->state.compiling.emplace(job, promise);
        self->spawn<caf::detached>(compile_job, sh, std::move(req), caf::actor_cast<caf::actor>(self), job, who);
        return promise;
      },
      [=](done_atom, uint64_t job, np::compiled& c) { settle(self->state.compiling, job, std::move(c)); },
      [=](np::infer_atom, np::infer_request& req) -> caf::result<np::infer_reply> {
        auto m = sh->find_id(req.model);
        // need_graph: the client compiled it on an earlier run of this worker; it sends it again.
        if (!m) {
          sh->log("unknown models asked by " + who, "client " + who + " asked for model " + std::to_string(req.model) +
                                                        ", which this node does not have");
          return node_error(np::node_errc::need_graph, "no model " + std::to_string(req.model) + " on this node");
        }
        uint64_t bytes = 0;
        for (const auto& b : req.inputs) bytes += b.size();
        std::vector<Tensor> inputs;
        try {
          inputs = inputs_of(*m, req, bytes, sh->spec.max_request_bytes);
        } catch (const std::exception& e) {
          sh->log("rejected requests of " + who, "rejected a request of client " + who + ": " + e.what());
          return failure_error({failure_kind::bad_input, e.what()});
        }
        // Bounded before it is queued: one client's flood, or all clients' bytes together,
        // must not take the worker's memory.
        std::string busy;
        if (self->state.pending.size() >= sh->spec.max_in_flight_per_client)
          busy = "client " + who + " has " + std::to_string(self->state.pending.size()) +
                 " requests in flight; this node runs at most " + std::to_string(sh->spec.max_in_flight_per_client) +
                 " per client";
        else if (const auto held = sh->load->held_bytes.fetch_add(bytes); held + bytes > sh->spec.max_held_bytes) {
          sh->load->held_bytes -= bytes;
          busy = "the node holds " + std::to_string(held) + " bytes of requests in flight; this one's " +
                 std::to_string(bytes) + " more would pass its bound of " + std::to_string(sh->spec.max_held_bytes);
        }
        if (!busy.empty()) {
          sh->log("busy refusals of " + who, "refused a request of client " + who + ": " + busy);
          return failure_error({failure_kind::device_failure, busy});
        }
        const uint64_t job = self->state.next_job++;
        auto promise = self->make_response_promise<np::infer_reply>();
        self->state.pending.emplace(job, promise);
        ++m->in_flight;
        self->state.held.emplace(job, std::make_pair(bytes, m));
        ++sh->load->in_flight;
        m->run->submit(inference{job, std::move(inputs),
                                 std::make_shared<reply_sink>(caf::actor_cast<caf::actor>(self), job), 0});
        return promise;
      },
      [=](done_atom, uint64_t job, np::infer_reply& r) {
        if (!settle(self->state.pending, job, std::move(r))) return;
        release(self->state, *sh->load, job);
        ++sh->load->served;
      },
      [=](done_atom, uint64_t job, caf::error& e) {
        if (settle(self->state.compiling, job, e) || !settle(self->state.pending, job, std::move(e))) return;
        release(self->state, *sh->load, job);
      },
  };
}

/// Whether the client's token is the node's, in a time that does not depend on where they first
/// differ (a byte-by-byte compare that stops early lets a client find the token byte by byte
/// from the answer's timing). The length is not hidden.
bool same_token(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  const std::size_t n = std::max(given.size(), expected.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto a = static_cast<unsigned char>(i < given.size() ? given[i] : 0);
    const auto b = static_cast<unsigned char>(i < expected.size() ? expected[i] : 0);
    diff = static_cast<unsigned char>(diff | (a ^ b));
  }
  return diff == 0;
}

using refusal_atom = caf::atom_constant<caf::atom("n_refuse")>;

/// A token refusal comes back at once for the first few in a row from one client host, then
/// later and later (250 ms, doubling, at most 4 s: under the clients' 5 s hello timeout), so
/// that guessing tokens takes time; a client that gets in resets its host's count.
constexpr int refusals_answered_at_once = 3;
std::chrono::milliseconds refusal_delay(int in_a_row) {
  if (in_a_row <= refusals_answered_at_once) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(250 << std::min(in_a_row - refusals_answered_at_once - 1, 4));
}

caf::behavior node_actor(caf::event_based_actor* self, std::shared_ptr<node_shared> sh) {
  // A session ends when its client goes, or, with reason `unreachable`, when nobody holds its
  // handle any more (a client that said hello twice and kept the second). CAF's default would
  // take the node, and with it every other client's session, down with it.
  self->set_exit_handler([=](caf::exit_msg& m) {
    if (sh->sessions.erase(m.source) == 0) self->quit(std::move(m.reason));
  });
  self->set_default_handler(unexpected_message_handler(sh, "the node"));
  return {
      [=](refusal_atom, uint64_t id, const std::string& message) {
        auto it = sh->held_refusals.find(id);
        if (it == sh->held_refusals.end()) return;
        it->second.deliver(node_error(np::node_errc::refused, message));
        sh->held_refusals.erase(it);
      },
      [=](np::hello_atom, np::hello& h) -> caf::result<np::welcome> {
        const std::string who = caf::to_string(self->current_sender() ? self->current_sender()->node() : caf::node_id());
        const std::string host = host_of(who);
        if (h.version != np::version) {
          sh->log("refusals of " + host, "refused client " + who + ": protocol version " + std::to_string(h.version) +
                                             ", this node speaks " + std::to_string(np::version));
          return node_error(np::node_errc::refused, "this node speaks troupe's node protocol version " +
                                                        std::to_string(np::version) + ", the client " +
                                                        std::to_string(h.version));
        }
        if (!same_token(h.token, sh->spec.token)) {
          const int n = ++sh->refused_in_a_row[host];
          const auto delay = refusal_delay(n);
          const std::string message = h.token.empty() ? "this node needs a token" : "wrong token";
          sh->log("refusals of " + host, "refused client " + who + ": " + (h.token.empty() ? "no token" : "wrong token") +
                  (delay.count() ? " (" + std::to_string(n) + " in a row from its host: answered after " +
                                       std::to_string(delay.count()) + " ms)"
                                 : ""));
          if (!delay.count()) return node_error(np::node_errc::refused, message);
          const uint64_t id = sh->next_refusal++;
          sh->held_refusals.emplace(id, self->make_response_promise());
          self->delayed_send(self, delay, refusal_atom::value, id, message);
          return caf::delegated<np::welcome>();
        }
        sh->refused_in_a_row.erase(host);
        if (!h.client) return node_error(np::node_errc::bad_request, "hello without the client's actor");
        np::welcome w;
        for (const auto& [name, dev] : sh->spec.devices) {
          w.devices.push_back(name);
          auto info = dev->info();
          info.insert(sh->spec.machine.begin(), sh->spec.machine.end());
          w.info.push_back(std::move(info));
        }
        // Linked: when the node stops (the Worker goes), every session stops with it.
        // Scheduled, not detached: CAF 0.17 can keep a detached actor whose handle crossed the
        // wire referenced after it ended, and then ~actor_system waits for it for ever.
        w.session = self->spawn<caf::linked>(session, sh, h.client, who);
        sh->sessions.insert(w.session.address());
        sh->log("clients of " + host, "client " + who + " connected");
        return w;
      },
  };
}

} // namespace

uint64_t model_hash(std::string_view graph_bytes, const node_protocol::compile_request& r) {
  const std::string options = r.device + '\n' + std::to_string(r.streams) + '\n' + std::to_string(r.num_threads) +
                              '\n' + r.precision + '\n' + (r.profiling ? "p" : "-") + (r.f16_arithmetic ? "h" : "-");
  return graph::content_hash(graph_bytes) ^ (graph::content_hash(options) * 0x9E3779B97F4A7C15ull);
}

caf::actor spawn_node(caf::actor_system& sys, node_spec spec, std::shared_ptr<node_load> load) {
  auto sh = std::make_shared<node_shared>();
  sh->spec = std::move(spec);
  sh->load = std::move(load);
  return sys.spawn(node_actor, std::move(sh));
}

} // namespace troupe::actors
