/// troupe in a CAF application (troupe/caf.hpp): a Core on the application's actor system and
/// compiled models as actors. Replies equal InferRequest's outputs, many requests in flight each
/// get one reply, bad input is an error naming the input, nothing runs on a system of troupe's
/// own, and dropping or stopping things mid-flight loses no reply. The example
/// (bin/caf_embedding) runs at the end.
#define BOOST_TEST_MODULE embedding_tests
#include <boost/test/unit_test.hpp>

#include <troupe/caf.hpp>
#include <troupe/troupe.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "benchmarks/tiny_onnx.hpp"
#include "runtime/engine.hpp"
#include "tests/support/ppocr_cases.hpp"
#include "tests/support/random_tensor.hpp"
#include "tests/support/test_data.hpp"
#include "tests/support/run_command.hpp"

namespace fs = std::filesystem;
using namespace troupe;

namespace {

using report_atom = caf::atom_constant<caf::atom("report")>;

/// y = a + b and z = a * b over [2,3] floats: two inputs and two outputs, so that their order
/// shows. Written to a file of its own, removed at the end.
struct tiny_model {
  std::string path = (fs::temp_directory_path() / ("troupe_embedding_" + std::to_string(getpid()) + ".onnx")).string();
  tiny_model() {
    tiny_onnx::model_builder b;
    b.input("a", {2, 3}).input("b", {2, 3}).output("y", {2, 3}).output("z", {2, 3});
    b.node("Add", {"a", "b"}, {"y"}, "add").node("Mul", {"a", "b"}, {"z"}, "mul");
    b.write(path);
  }
  ~tiny_model() { fs::remove(path); }
};

/// An application's own actor system with a troupe Core on it. The system is declared first, so
/// it outlives the Core (caf.hpp's rule); a test's models and actors are gone before either.
struct app {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  std::unique_ptr<Core> core;
  tiny_model tiny;
  app() : sys(quiet(cfg)), core(make_core(sys)) {}
  static caf::actor_system_config& quiet(caf::actor_system_config& c) {
    c.set("logger.verbosity", caf::atom("quiet"));
    return c;
  }
  CompiledModel compile(const std::string& device) { return core->compile_model(tiny.path, device); }
};

std::vector<Tensor> inputs_for(unsigned seed) {
  return {tests::random_tensor({2, 3}, seed), tests::random_tensor({2, 3}, seed + 100000)};
}

/// The same inputs through InferRequest::infer(): what a model actor must reply.
std::vector<Tensor> infer_sync(CompiledModel& cm, const std::vector<Tensor>& inputs) {
  auto r = cm.create_infer_request();
  for (std::size_t i = 0; i < inputs.size(); ++i) r.set_input_tensor(i, inputs[i]);
  r.infer();
  std::vector<Tensor> outs;
  for (std::size_t i = 0; i < cm.outputs().size(); ++i) outs.push_back(r.get_output_tensor(i).clone());
  return outs;
}

/// y and z computed here, for checking replies without a second run.
std::vector<std::vector<float>> expected_for(const std::vector<Tensor>& in) {
  std::vector<float> y(6), z(6);
  for (int i = 0; i < 6; ++i) {
    y[i] = in[0].data<float>()[i] + in[1].data<float>()[i];
    z[i] = in[0].data<float>()[i] * in[1].data<float>()[i];
  }
  return {y, z};
}

bool equal(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i].get_element_type() != want[i].get_element_type() || got[i].get_shape() != want[i].get_shape() ||
        std::memcmp(got[i].data(), want[i].data(), want[i].get_byte_size()) != 0)
      return false;
  return true;
}

bool equal(const std::vector<Tensor>& got, const std::vector<std::vector<float>>& want) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i].get_shape() != Shape{2, 3} || std::memcmp(got[i].data(), want[i].data(), 6 * sizeof(float)) != 0)
      return false;
  return true;
}

/// One request from a blocking test thread; the reply or the error.
caf::expected<std::vector<Tensor>> ask(caf::actor_system& sys, const caf::actor& model, std::vector<Tensor> inputs) {
  caf::scoped_actor self{sys};
  caf::expected<std::vector<Tensor>> result{caf::sec::unexpected_response};
  self->request(model, caf::infinite, infer_atom::value, std::move(inputs))
    .receive([&](std::vector<Tensor>& outs) { result = std::move(outs); }, [&](caf::error& e) { result = std::move(e); });
  return result;
}

/// What a client actor saw: per request, how many replies, whether the outputs were right; the
/// errors.
struct client_report {
  std::vector<int> replies;
  std::vector<bool> right;
  std::vector<caf::error> errors;
  bool on_its_system = true; ///< every reply ran in the client, on the application's system
  std::string first_error() const { return errors.empty() ? "" : error_message(errors.front()); }
};

} // namespace

namespace {

struct client_state {
  std::shared_ptr<client_report> report;
  std::size_t answered = 0;
  static inline const char* name = "embedding_test_client";
};

/// An event-based actor on the application's system: sends `n` requests at once (request i
/// with inputs_for(i)), checks each reply as it comes, and sends its report to `to` once every
/// request is answered. Keeps no handle to the model actor once they are sent, unless
/// `stop_at_first_reply`: then it sends the model actor an exit message when the first reply
/// comes, with the others still in flight.
caf::behavior client(caf::stateful_actor<client_state>* self, caf::actor model, int n, caf::actor to,
                     caf::actor_system* app_system, bool stop_at_first_reply) {
  auto& st = self->state;
  st.report = std::make_shared<client_report>();
  st.report->replies.assign(static_cast<std::size_t>(n), 0);
  st.report->right.assign(static_cast<std::size_t>(n), false);
  caf::actor stop = stop_at_first_reply ? model : caf::actor{};
  auto answered = [self, n, to, app_system, stop](std::size_t i) {
    auto& s = self->state;
    if (stop && s.answered == 0) self->send_exit(stop, caf::exit_reason::user_shutdown);
    ++s.report->replies[i];
    if (&self->home_system() != app_system) s.report->on_its_system = false;
    if (++s.answered == static_cast<std::size_t>(n)) {
      self->send(to, report_atom::value, s.report);
      self->quit();
    }
  };
  for (int i = 0; i < n; ++i) {
    const auto idx = static_cast<std::size_t>(i);
    auto in = inputs_for(static_cast<unsigned>(i));
    auto want = expected_for(in);
    self->request(model, caf::infinite, infer_atom::value, std::move(in))
      .then(
        [self, idx, want, answered](std::vector<Tensor>& outs) {
          self->state.report->right[idx] = equal(outs, want);
          answered(idx);
        },
        [self, idx, answered](caf::error& e) {
          self->state.report->errors.push_back(std::move(e));
          answered(idx);
        });
  }
  model = nullptr;
  return {[](report_atom) {}}; // replies come as response handlers; this keeps the actor up
}

/// Spawns a client for `n` requests, runs `meanwhile` (which may drop things), waits for its
/// report.
template <class F>
std::shared_ptr<client_report> run_client(caf::actor_system& sys, caf::actor model, int n, F meanwhile,
                                          bool stop_at_first_reply = false) {
  caf::scoped_actor self{sys};
  sys.spawn(client, std::move(model), n, caf::actor_cast<caf::actor>(self), &sys, stop_at_first_reply);
  meanwhile();
  std::shared_ptr<client_report> report;
  self->receive([&](report_atom, std::shared_ptr<client_report>& r) { report = std::move(r); });
  return report;
}

void check_once_each(const client_report& r) {
  for (std::size_t i = 0; i < r.replies.size(); ++i) BOOST_TEST(r.replies[i] == 1, "request " << i);
  BOOST_TEST(r.on_its_system);
}

} // namespace

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<client_report>)

BOOST_AUTO_TEST_SUITE(embedding)

BOOST_AUTO_TEST_CASE(replies_equal_infer_request_outputs) {
  app a;
  for (const std::string device : {"CPU", "MULTI:CPU,REFERENCE"}) {
    BOOST_TEST_CONTEXT(device) {
      auto cm = a.compile(device);
      auto actor = spawn_model_actor(a.sys, cm);
      for (unsigned seed = 1; seed <= 8; ++seed) {
        const auto in = inputs_for(seed);
        auto got = ask(a.sys, actor, in);
        BOOST_REQUIRE_MESSAGE(got, (got ? std::string() : error_message(got.error())));
        BOOST_TEST(equal(*got, infer_sync(cm, in)), "seed " << seed);
        BOOST_TEST(equal(*got, expected_for(in)), "seed " << seed);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_thousand_requests_in_flight_each_get_one_reply) {
  app a;
  for (const std::string device : {"CPU", "MULTI:CPU,REFERENCE"}) {
    BOOST_TEST_CONTEXT(device) {
      auto cm = a.compile(device);
      auto report = run_client(a.sys, spawn_model_actor(a.sys, cm), 1000, [] {});
      check_once_each(*report);
      BOOST_TEST(report->errors.empty(), report->first_error());
      for (std::size_t i = 0; i < report->right.size(); ++i) BOOST_TEST(report->right[i], "request " << i);
    }
  }
}

BOOST_AUTO_TEST_CASE(bad_input_replies_an_error_naming_the_input) {
  app a;
  auto actor = spawn_model_actor(a.sys, a.compile("CPU"));
  auto expect = [&](std::vector<Tensor> in, std::vector<std::string> pieces) {
    auto got = ask(a.sys, actor, std::move(in));
    BOOST_REQUIRE(!got);
    BOOST_TEST(got.error().category() == infer_error_category);
    BOOST_TEST(got.error().code() == static_cast<uint8_t>(infer_errc::invalid_input));
    const auto msg = error_message(got.error());
    for (const auto& p : pieces) BOOST_TEST(msg.find(p) != std::string::npos, "'" << msg << "' lacks '" << p << "'");
  };
  const auto good = inputs_for(1);
  expect({good[0]}, {"takes 2 inputs", "'a', 'b'", "has 1"});
  expect({good[0], good[1], good[1]}, {"takes 2 inputs", "has 3"});
  expect({good[0], tests::random_tensor({3, 2}, 7)}, {"input 'b'", "wrong shape", "[2,3]", "[3,2]"});
  expect({Tensor(element_type::i64, {2, 3}), good[1]}, {"input 'a'", "wrong element type", "f32", "i64"});
  expect({good[0], Tensor()}, {"input 'b'", "empty"});
  // The actor still serves after them.
  BOOST_TEST(static_cast<bool>(ask(a.sys, actor, good)));
  // A message outside the protocol is an error saying what the protocol is.
  caf::scoped_actor self{a.sys};
  self->request(actor, caf::infinite, infer_atom::value, good[0])
    .receive([&](const std::vector<Tensor>&) { BOOST_ERROR("a single Tensor was served"); },
             [&](caf::error& e) {
               BOOST_TEST(error_message(e).find("std::vector<troupe::Tensor>") != std::string::npos, error_message(e));
             });
}

BOOST_AUTO_TEST_CASE(runs_on_the_applications_system_only) {
  const auto made = engine::systems_created();
  {
    app a;
    const auto running = a.sys.registry().running();
    auto cm = a.compile("CPU");
    // troupe's device workers are actors of the application's system, and so is the model actor.
    BOOST_TEST(a.sys.registry().running() > running);
    auto actor = spawn_model_actor(a.sys, cm);
    BOOST_TEST(static_cast<bool>(ask(a.sys, actor, inputs_for(3))));
    BOOST_TEST(&caf::actor_cast<caf::abstract_actor*>(actor)->home_system() == &a.sys);
    BOOST_TEST(engine::systems_created() == made, "a Core from make_core created an actor system of its own");
    // A model from a Core with a system of its own is refused, not served across systems...
    Core own;
    BOOST_TEST(engine::systems_created() == made + 1); // ...and such a Core shows on the count
    try {
      spawn_model_actor(a.sys, own.compile_model(a.tiny.path, "CPU"));
      BOOST_ERROR("a model of another actor system was accepted");
    } catch (const Exception& e) {
      BOOST_TEST(std::string(e.what()).find("make_core") != std::string::npos, e.what());
    }
  }
}

BOOST_AUTO_TEST_CASE(dropping_core_model_and_handle_in_flight_loses_no_reply) {
  app a;
  for (const std::string device : {"CPU", "MULTI:CPU,REFERENCE"}) {
    BOOST_TEST_CONTEXT(device) {
      auto cm = std::make_unique<CompiledModel>(a.compile(device));
      caf::actor actor = spawn_model_actor(a.sys, *cm);
      auto report = run_client(a.sys, actor, 300, [&] {
        // The client holds the only handle now, and drops it once its requests are sent.
        actor = nullptr;
        cm.reset();
        if (device != "CPU") a.core.reset();
      });
      check_once_each(*report);
      // The model actor outlives its last handle while requests are in flight: they all run.
      BOOST_TEST(report->errors.empty(), report->first_error());
      for (std::size_t i = 0; i < report->right.size(); ++i) BOOST_TEST(report->right[i], "request " << i);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_stopped_model_actor_answers_every_request) {
  app a;
  auto cm = a.compile("MULTI:CPU,REFERENCE");
  caf::actor actor = spawn_model_actor(a.sys, cm);
  auto report = run_client(a.sys, actor, 300, [] {}, true);
  check_once_each(*report);
  // Each one either ran, or was cancelled by the stop (in flight), or reached a stopped actor
  // (still in its mailbox: an exit message goes first).
  std::size_t cancelled = 0, receiver_down = 0;
  for (const auto& e : report->errors) {
    if (e.category() == infer_error_category && e.code() == static_cast<uint8_t>(infer_errc::cancelled) &&
        error_message(e).find("the model actor was stopped") != std::string::npos)
      ++cancelled;
    else if (e == caf::sec::request_receiver_down)
      ++receiver_down;
    else
      BOOST_ERROR("unexpected error: " << error_message(e));
  }
  BOOST_TEST_MESSAGE("stopped with requests in flight: " << 300 - report->errors.size() << " ran, " << cancelled
                                                         << " cancelled, " << receiver_down << " reached it stopped");
  // Runs still in flight at the stop finish on the devices and are dropped: the model serves on.
  auto again = spawn_model_actor(a.sys, cm);
  BOOST_TEST(static_cast<bool>(ask(a.sys, again, inputs_for(5))));
}

// ---- examples/caf_embedding -----------------------------------------------------------------

namespace {

/// Runs bin/caf_embedding (beside this test) with `args`: its exit status and output.
std::pair<int, std::string> run_example(const std::string& args) {
  const auto bin = fs::read_symlink("/proc/self/exe").parent_path() / "caf_embedding";
  const auto r = tests::run_command(bin.string() + " " + args + " 2>&1");
  BOOST_REQUIRE(r);
  return {r->code, r->out};
}

std::string last_line(const std::string& out) {
  const auto start = out.rfind('\n', out.size() >= 2 ? out.size() - 2 : 0);
  return out.substr(start == std::string::npos ? 0 : start + 1);
}

} // namespace

BOOST_AUTO_TEST_CASE(example_answers_every_request) {
  tiny_model tiny;
  for (const std::string device : {"CPU", "MULTI:CPU,REFERENCE"}) {
    BOOST_TEST_CONTEXT(device) {
      const auto [status, out] = run_example("-m " + tiny.path + " -d " + device + " -n 500 -window 50");
      BOOST_TEST(status == 0, out);
      BOOST_TEST(last_line(out) == "500 requests, 500 replies, 0 errors\n", out);
    }
  }
  // A device that fails to compile is an error and a non-zero status, not a summary.
  const auto [status, out] = run_example("-m " + tiny.path + " -d NOPE -n 5");
  BOOST_TEST(status != 0, out);
  BOOST_TEST(out.find("unknown device 'NOPE'") != std::string::npos, out);
}

BOOST_AUTO_TEST_CASE(example_on_ppocr_cls, *tests::needs_model_of(tests::ppocr_cls)) {
  const auto [status, out] = run_example("-m " + tests::ppocr_model(tests::ppocr_cls.model).path.string() +
                                         " -shape 1x3x48x192 -d CPU -n 100");
  BOOST_TEST(status == 0, out);
  BOOST_TEST(last_line(out) == "100 requests, 100 replies, 0 errors\n", out);
}

BOOST_AUTO_TEST_SUITE_END()
