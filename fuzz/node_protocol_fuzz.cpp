/// libFuzzer target for what a `troupe worker` does with a client's messages: the node actor
/// (actors/node.hpp) on this machine's CPU, fed hello, compile, infer and arbitrary messages
/// decoded from the fuzzer's bytes by CAF's binary deserializer (as the BASP broker decodes a
/// frame's payload), before and after a hello with the right token. Every message must be
/// answered (a reply or an error) within 10 s; a crash, a sanitizer report, a hang or an
/// allocation past libFuzzer's limits is a finding. The frame layer in front (basp_gate) is
/// covered by remote_tests; this target starts where a whole frame has arrived.
///
/// Input: records of [kind: 1 byte][length: 2 bytes, little-endian][payload], at most 12:
///   kind % 5 == 0  hello: u32 version, string token (CAF's encoding); the client actor is ours
///              1  compile: compile_request's fields; a hash of 0 is replaced by the bytes' own
///                 (a client can compute it, so the fuzzer need not)
///              2  infer: u64 model id (0: the last one compiled), vector<string> inputs
///              3  a caf::message of any registered type, sent to the session (or the node)
///              4  the same, to the node actor
/// Messages other than hello go to the session once a hello got one, to the node before.
/// TROUPE_FUZZ_SEEDS=DIR writes seed inputs there (a hello, a compile, inferences) and exits.
#include <troupe/exception.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/node.hpp"
#include "actors/protocol/node.hpp"
#include "graph/wire.hpp"
#include "kernels/cpu/cpu_device.hpp"

namespace {

using namespace troupe;
namespace np = actors::node_protocol;

constexpr const char* token = "fuzz-token";
constexpr auto reply_timeout = std::chrono::seconds(10);

struct harness {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::shared_ptr<kernels::device> cpu;

  harness() {
    cfg.set("logger.verbosity", caf::atom("quiet"));
    cfg.set("scheduler.max-threads", 2);
    np::add_node_message_types(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    cpu = std::shared_ptr<kernels::device>(kernels::cpu::make_cpu_device());
  }

  caf::actor spawn_node() {
    actors::node_spec spec;
    spec.devices["CPU"] = cpu;
    spec.token = token;
    // Small enough that libFuzzer's 2 GB RSS limit is reached only by what a limit misses.
    spec.max_graph_bytes = std::size_t(64) << 20;
    spec.max_request_bytes = std::size_t(64) << 20;
    return actors::spawn_node(*sys, std::move(spec), std::make_shared<actors::node_load>());
  }
};

/// Never destroyed: CAF's own globals go at exit before a static actor system would, and
/// ~actor_system then dereferences freed state. The process ends with it running.
harness& the_harness() {
  static harness* h = new harness;
  return *h;
}

/// TROUPE_FUZZ_PRINT=1: each message and its answer on stderr, to read a finding by (read
/// once: the fuzzer sends thousands of messages a second).
bool printing() {
  static const bool yes = std::getenv("TROUPE_FUZZ_PRINT") != nullptr;
  return yes;
}

/// What a compile record asks for.
void print_compile(const np::compile_request& r) {
  std::fprintf(stderr, "compile on '%s', streams %d, threads %d, precision '%s'\n", r.device.c_str(), r.streams,
               r.num_threads, r.precision.c_str());
  try {
    const auto g = graph::decode_graph(r.graph, "fuzz");
    for (std::size_t i = 0; i < g.values.size(); ++i)
      std::fprintf(stderr, "  value %zu '%s' %s %s%s\n", i, g.values[i].name.c_str(), to_string(g.values[i].type).c_str(),
                   g.values[i].shape.to_string().c_str(), g.values[i].constant ? " (constant)" : "");
    for (const auto& op : g.ops) {
      std::string io;
      // append, not " " + to_string(v): GCC 12 -O3 sees a false overlap there (-Wrestrict).
      for (auto v : op.inputs) io.append(" ").append(std::to_string(v));
      io += " ->";
      for (auto v : op.outputs) io.append(" ").append(std::to_string(v));
      std::fprintf(stderr, "  %s '%s':%s\n", op.type.c_str(), op.name.c_str(), io.c_str());
    }
  } catch (const troupe::Exception& e) {
    std::fprintf(stderr, "  %s\n", e.what());
  }
}

/// Waits for the reply to one request; a hang is a finding.
template <class... Ts>
void ask(caf::scoped_actor& self, const caf::actor& to, caf::actor* session, uint64_t* compiled, Ts&&... xs) {
  bool timed_out = false;
  const bool print = printing();
  if (print)
    std::fprintf(stderr, "ask %s: %s\n", to == *session ? "session" : "node",
                 caf::deep_to_string(caf::make_message(xs...)).substr(0, 300).c_str());
  self->request(to, reply_timeout, std::forward<Ts>(xs)...)
      .receive([&](caf::error& e) {
                 timed_out = e == caf::sec::request_timeout;
                 if (print) std::fprintf(stderr, "  -> error %s\n", caf::to_string(e).c_str());
               },
               caf::others >> [&](caf::message_view& view) -> caf::result<caf::message> {
                 const auto m = view.move_content_to_message();
                 if (print) std::fprintf(stderr, "  -> %s\n", caf::deep_to_string(m).substr(0, 300).c_str());
                 if (m.match_elements<np::welcome>()) *session = m.get_as<np::welcome>(0).session;
                 if (m.match_elements<np::compiled>()) *compiled = m.get_as<np::compiled>(0).model;
                 return caf::message{};
               });
  if (timed_out) {
    std::fprintf(stderr, "node_protocol_fuzz: no answer within %lld s\n",
                 static_cast<long long>(reply_timeout.count()));
    std::abort();
  }
}

void run(const uint8_t* data, std::size_t size) {
  auto& h = the_harness();
  caf::scoped_actor self{*h.sys};
  auto node = h.spawn_node();
  caf::actor session;
  uint64_t compiled = 0;
  int hellos = 0;
  std::size_t at = 0;
  for (int record = 0; record < 12 && at + 3 <= size; ++record) {
    const uint8_t kind = data[at] % 5;
    const std::size_t len = std::min<std::size_t>(data[at + 1] | (std::size_t(data[at + 2]) << 8), size - at - 3);
    const char* payload = reinterpret_cast<const char*>(data + at + 3);
    at += 3 + len;
    caf::binary_deserializer src{*h.sys, payload, len};
    const caf::actor& to = session ? session : node;
    switch (kind) {
    case 0: {
      // A wrong token's answer is delayed from the fourth in a row (by design): at most four.
      if (++hellos > 4) break;
      np::hello hello;
      if (src(hello.version, hello.token)) break;
      hello.client = caf::actor_cast<caf::actor>(self);
      ask(self, node, &session, &compiled, np::hello_atom::value, std::move(hello));
      break;
    }
    case 1: {
      np::compile_request r;
      if (src(r.hash, r.device, r.graph, r.streams, r.num_threads, r.precision, r.profiling, r.f16_arithmetic)) break;
      if (r.hash == 0) r.hash = actors::model_hash(r.graph, r);
      if (printing()) print_compile(r);
      ask(self, to, &session, &compiled, np::compile_atom::value, std::move(r));
      break;
    }
    case 2: {
      np::infer_request r;
      if (src(r.model, r.inputs)) break;
      if (r.model == 0) r.model = compiled;
      ask(self, to, &session, &compiled, np::infer_atom::value, std::move(r));
      break;
    }
    default: {
      caf::message m;
      if (src(m)) break;
      ask(self, kind == 3 ? to : node, &session, &compiled, std::move(m));
      break;
    }
    }
  }
  // The client goes: its session ends with it (monitor), the node with the harness's exit.
  self->send_exit(node, caf::exit_reason::user_shutdown);
}

/// Seeds: the messages a real client sends, each encoded as the input format says.
void write_seeds(const std::string& dir) {
  auto& h = the_harness();
  auto record = [&](uint8_t kind, auto&&... xs) {
    std::vector<char> buf;
    caf::binary_serializer sink{*h.sys, buf};
    if (sink(xs...)) std::abort();
    std::string r(1, static_cast<char>(kind));
    r.push_back(static_cast<char>(buf.size() & 0xff));
    r.push_back(static_cast<char>(buf.size() >> 8));
    r.append(buf.begin(), buf.end());
    return r;
  };
  graph::Graph g;
  const auto x = g.add_input("x", element_type::f32, PartialShape(Shape{2, 4}));
  const auto b = g.add_constant("b", Tensor(element_type::f32, Shape{4}));
  graph::Value y;
  y.name = "y";
  y.type = element_type::f32;
  y.shape = PartialShape(Shape{2, 4});
  const auto yid = g.add_value(y);
  g.ops.push_back(graph::Op{"Add", "", "add", {x, b}, {yid}, {}, {}});
  graph::Value z = y;
  z.name = "z";
  const auto zid = g.add_value(z);
  g.ops.push_back(graph::Op{"Relu", "", "relu", {yid}, {zid}, {}, {}});
  g.outputs = {zid};
  const std::string model = graph::encode_graph(g);
  Tensor in(element_type::f32, Shape{2, 4});
  for (std::size_t i = 0; i < 8; ++i) in.data<float>()[i] = static_cast<float>(i) - 3.5f;
  const std::string input = graph::encode_tensor(in);

  const auto hello = record(0, np::version, std::string(token));
  const auto compile = record(1, uint64_t{0}, std::string("CPU"), model, int32_t{1}, int32_t{1}, std::string("f32"), false, false);
  const auto infer = record(2, uint64_t{0}, std::vector<std::string>{input});
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"hello", hello},
      {"wrong_token", record(0, np::version, std::string("guess"))},
      {"compile_before_hello", compile},
      {"hello_compile", hello + compile},
      {"hello_twice_compile", hello + hello + compile},
      {"hello_compile_infer", hello + compile + infer + infer},
      {"hello_infer_unknown", hello + record(2, uint64_t{77}, std::vector<std::string>{input})},
      {"hello_message", hello + record(3, caf::make_message(np::infer_atom::value, np::infer_request{}))},
  };
  for (const auto& [name, bytes] : seeds) std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("TROUPE_FUZZ_SEEDS")) {
    write_seeds(dir);
    std::_Exit(0); // the actor system stays up: no teardown at exit

  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    run(data, size);
  } catch (const troupe::Exception&) {
  }
  return 0;
}
