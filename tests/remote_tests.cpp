/// Remote devices: a worker (Worker, or the `troupe worker` command in a process of its own)
/// serving its devices over loopback to a client Core that adds it as a node. Outputs equal
/// the local device's; MULTI uses both; a node killed mid-run loses no request; bad addresses,
/// tokens and names get errors naming the node.
#define BOOST_TEST_MODULE remote_tests
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

#include <atomic>
#include <cstdlib>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/node.hpp"
#include "actors/protocol/node.hpp"
#include "benchmarks/loopback_socket.hpp"
#include "benchmarks/tiny_onnx.hpp"
#include "runtime/basp_gate.hpp"
#include "tests/support/add_relu_model.hpp"
#include "tests/support/control_flow_model.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/ppocr_cases.hpp"
#include "tests/support/tensor_compare.hpp"
#include "tests/support/test_data.hpp"
#include "tests/support/worker_process.hpp"

namespace fs = std::filesystem;
using namespace troupe;
using tests::expect_error;

namespace {

std::string add_relu_model() { return tests::add_relu_model("remote"); }
using tests::expected;
using tests::filled;
using tests::run_many;
using tests::served_by;
using tests::wait_serving;
using tests::worker_host;
using tests::worker_process;

} // namespace

BOOST_AUTO_TEST_CASE(a_nodes_devices_are_listed_and_compute_as_the_local_ones) {
  worker_process w;
  Core client;
  client.add_node(w.address);
  const auto devices = client.available_devices();
  const std::string remote_cpu = "CPU@" + w.address;
  BOOST_TEST((std::find(devices.begin(), devices.end(), remote_cpu) != devices.end()));
  auto cm = client.compile_model(add_relu_model(), remote_cpu);
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == remote_cpu);
  const auto o = run_many(cm, 20);
  BOOST_TEST(o.wrong == 0);
  BOOST_TEST(o.errors.empty());
  w.wait_logged("connected");
  // A second model of the same bytes and options compiles nothing more on the node.
  auto again = client.compile_model(add_relu_model(), remote_cpu);
  BOOST_TEST(run_many(again, 3).wrong == 0);
}

BOOST_AUTO_TEST_CASE(control_flow_travels_to_a_node_and_runs_there) {
  // The Loop's body and the If inside it cross the wire as nested graphs.
  worker_process w;
  Core client;
  client.add_node(w.address);
  const auto path = tests::loop_with_if_model(
      (std::filesystem::temp_directory_path() / ("troupe_remote_loop_" + std::to_string(::getpid()) + ".onnx")).string());
  auto cm = client.compile_model(path, "CPU@" + w.address);
  auto req = cm.create_infer_request();
  Tensor m(element_type::i64, Shape{}), y0(element_type::f32, Shape{1}), x(element_type::f32, Shape{1});
  *m.data<int64_t>() = 4;
  *y0.data<float>() = 1;
  *x.data<float>() = 2;
  req.set_input_tensor(0, m);
  req.set_input_tensor(1, y0);
  req.set_input_tensor(2, x);
  req.infer();
  BOOST_TEST(*req.get_output_tensor(0).data<float>() == 20.0f);
}

BOOST_AUTO_TEST_CASE(hetero_cost_over_a_node_falls_back_to_nominal_rates_and_says_so) {
  // A node's device reports no time per op, so calibration cannot cost its ops: COST places
  // by the nominal rates instead, which price a crossing to a node at a network round trip.
  worker_process w;
  Core client;
  client.add_node(w.address);
  const std::string device = "HETERO:CPU@" + w.address + ",CPU";
  const auto dir = fs::temp_directory_path() / ("troupe_remote_dots_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto cm = client.compile_model(add_relu_model(), device,
                                 {{"HETERO_PLACEMENT", "COST"}, {"HETERO_DUMP_GRAPH_DOT", dir.string()}});
  std::ifstream in(dir / ("hetero_subgraphs_troupe_remote_" + std::to_string(::getpid()) + ".dot"));
  const std::string dot((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const std::string& part : {"from the devices' nominal rates (calibration failed: HETERO calibration on CPU@" + w.address,
                                 std::string("reports no time per op")})
    BOOST_TEST(dot.find(part) != std::string::npos, dot);
  // PRIORITY would send both ops to the node; for 64-byte tensors the round trip never pays.
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "CPU");
  const auto o = run_many(cm, 8);
  BOOST_TEST(o.wrong == 0);
  BOOST_TEST(o.errors.empty());
  fs::remove_all(dir);
}

namespace {

/// The PP-OCR case on the node's CPU equals the local CPU's (the same code on the same
/// machine: only the transport differs), and onnxruntime's within the suite's tolerance.
void remote_matches_local(const tests::model_case& c) {
  worker_process w;
  Core client;
  client.add_node(w.address);
  const auto local = tests::run_on_device(client, c, "CPU");
  const auto remote = tests::run_on_device(client, c, "CPU@" + w.address);
  BOOST_REQUIRE(remote.size() == local.size());
  const auto same = tests::compare_scaled(remote, local, 1e-5, 1e-6);
  BOOST_TEST(same.ok, c.model << " on CPU@" << w.address << " against CPU: " << same.message);
  const auto ort = tests::compare_scaled(remote, tests::ort_output(c), 1e-4, 1e-5);
  BOOST_TEST(ort.ok, c.model << " on CPU@" << w.address << " against onnxruntime: " << ort.message);
}

} // namespace

BOOST_AUTO_TEST_CASE(ppocr_cls_on_a_node_equals_the_local_cpu, *tests::needs_case(tests::ppocr_cls)) {
  remote_matches_local(tests::ppocr_cls);
}

BOOST_AUTO_TEST_CASE(ppocr_rec_on_a_node_equals_the_local_cpu, *tests::needs_case(tests::ppocr_rec)) {
  remote_matches_local(tests::ppocr_rec);
}

BOOST_AUTO_TEST_CASE(a_remote_devices_streams_are_counted_from_the_nodes_cores) {
  // A worker held to one core (taskset): THROUGHPUT gives its CPU one stream, whatever this
  // machine has.
  worker_process w("", worker_host() + ":0", "TROUPE_TEST_ONE_CORE=1 taskset -c 0");
  Core client;
  client.add_node(w.address);
  const std::string remote_cpu = "CPU@" + w.address;
  BOOST_TEST(client.get_property(remote_cpu, "NODE_CORES").as_string() == "1");
  auto cm = client.compile_model(add_relu_model(), remote_cpu, {{"PERFORMANCE_HINT", "THROUGHPUT"}});
  BOOST_TEST(cm.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS").as<int>() == 1);
  BOOST_TEST(run_many(cm, 4).wrong == 0);
}

BOOST_AUTO_TEST_CASE(multi_serves_from_a_local_and_a_remote_device) {
  worker_process w;
  Core client;
  client.add_node(w.address);
  // The remote device alone for a while, then both: each serves.
  tests::check_multi_serves_both(client, "CPU@" + w.address, add_relu_model());
}

BOOST_AUTO_TEST_CASE(a_slow_link_is_used_only_when_it_helps) {
  worker_process w;
  // 20 ms each way in front of the worker: a request there takes 40 ms and more, against
  // microseconds on the local CPU. MULTI measures each device's service time, network
  // included, and waits for the faster device rather than hand a request to the slow one.
  bench::link_proxy slow(w.address, std::chrono::milliseconds(20));
  Core client;
  client.add_node(slow.address());
  const std::string remote_cpu = "CPU@" + slow.address();
  {
    // The link is slow indeed: a request there takes at least the two delays (a lower bound
    // the proxy guarantees, not a timing that a busy machine could break).
    auto alone = client.compile_model(add_relu_model(), remote_cpu).create_infer_request();
    alone.set_tensor("a", filled(0));
    alone.set_tensor("b", filled(1));
    const auto t0 = std::chrono::steady_clock::now();
    alone.infer();
    const auto took_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    BOOST_TEST(took_ms >= 40.0);
  }
  auto cm = client.compile_model(add_relu_model(), "MULTI:" + remote_cpu + ",CPU"); // the slow one first
  int wrong = 0, failed = 0;
  for (int round = 0; round < 10; ++round) {
    const auto o = run_many(cm, 30);
    wrong += o.wrong;
    failed += static_cast<int>(o.errors.size());
  }
  BOOST_TEST(wrong == 0);
  BOOST_TEST(failed == 0);
  // It is measured (one request), and then sent nothing more.
  BOOST_TEST(served_by(cm, remote_cpu) >= 1u);
  BOOST_TEST(served_by(cm, remote_cpu) <= 2u, cm.get_property("REQUESTS_SERVED").as_string());
  BOOST_TEST(served_by(cm, "CPU") >= 298u, cm.get_property("REQUESTS_SERVED").as_string());
}

BOOST_AUTO_TEST_CASE(a_token_is_asked_and_checked_on_both_sides) {
  const auto token_file = fs::temp_directory_path() / ("troupe_token_" + std::to_string(::getpid()));
  std::ofstream(token_file) << "s3cret\n";
  worker_process w("-token-file " + token_file.string());
  Core client;
  expect_error([&] { client.add_node(w.address); }, {"node " + w.address, "needs a token"});
  expect_error([&] { client.add_node(w.address, {{"NODE_TOKEN", "guess"}}); }, {"node " + w.address, "wrong token"});
  w.wait_logged("refused client");
  w.wait_logged("wrong token");
  // The third refusal in a row from this host still comes at once; the fourth 250 ms late and
  // the fifth 500 ms (a lower bound: a slow machine only adds to it).
  expect_error([&] { client.add_node(w.address, {{"NODE_TOKEN", "guess2"}}); }, {"wrong token"});
  for (int late : {250, 500}) {
    const auto t0 = std::chrono::steady_clock::now();
    expect_error([&] { client.add_node(w.address, {{"NODE_TOKEN", "guess3"}}); }, {"wrong token"});
    BOOST_TEST((std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(late)));
    w.wait_logged("answered after " + std::to_string(late) + " ms");
  }
  client.add_node(w.address, {{"NODE_TOKEN", "s3cret"}});
  auto cm = client.compile_model(add_relu_model(), "CPU@" + w.address);
  BOOST_TEST(run_many(cm, 2).wrong == 0);
}

BOOST_AUTO_TEST_CASE(a_worker_beyond_loopback_without_a_token_must_be_told_insecure) {
  Core core;
  std::vector<std::string> lines;
  auto log = [&lines](const std::string& l) { lines.push_back(l); };
  expect_error([&] { Worker w(core, "0.0.0.0:0", {}, log); }, {"0.0.0.0:0", "without a token", "-insecure"});
  expect_error([&] { Worker w(core, "0.0.0.0:0", {{"NODE_INSECURE", "maybe"}}, log); }, {"NODE_INSECURE", "maybe"});
  BOOST_TEST(lines.empty());
  {
    Worker w(core, "0.0.0.0:0", {{"NODE_INSECURE", "YES"}}, log);
    BOOST_REQUIRE(lines.size() == 1);
    BOOST_TEST(lines[0].find("warning") != std::string::npos, lines[0]);
  }
  lines.clear();
  { // with a token, or on loopback, no question and no warning
    Worker with_token(core, "0.0.0.0:0", {{"NODE_TOKEN", "s3cret"}}, log);
    Worker on_loopback(core, "127.0.0.1:0", {}, log);
  }
  BOOST_TEST(lines.empty());
}

BOOST_AUTO_TEST_CASE(bad_node_addresses_and_names_are_errors_naming_them) {
  Core client;
  expect_error([&] { client.add_node("localhost"); }, {"'localhost'", "host:port"});
  expect_error([&] { client.add_node("127.0.0.1:99999"); }, {"127.0.0.1:99999", "1 to 65535"});
  expect_error([&] { client.add_node("127.0.0.1:x"); }, {"127.0.0.1:x", "host:port"});
  // Nothing listens on port 1 here: refused at once, not after a timeout.
  expect_error([&] { client.add_node("127.0.0.1:1"); }, {"node 127.0.0.1:1", "cannot connect"});
  expect_error([&] { client.compile_model(add_relu_model(), "CPU@127.0.0.1:7999"); },
               {"CPU@127.0.0.1:7999", "node 127.0.0.1:7999 was not added"});
  expect_error([&] { client.compile_model(add_relu_model(), "MULTI:CPU,CPU@127.0.0.1:7999"); },
               {"node 127.0.0.1:7999 was not added"});
  worker_process w;
  client.add_node(w.address);
  expect_error([&] { client.add_node(w.address); }, {"node " + w.address, "added already"});
  expect_error([&] { client.add_node(w.address, {{"TOKEN", "x"}}); }, {"unknown option 'TOKEN'"});
}

BOOST_AUTO_TEST_CASE(a_worker_killed_mid_run_loses_no_request_under_multi) {
  worker_process wp;
  Core client;
  client.add_node(wp.address);
  const std::string remote_cpu = "CPU@" + wp.address;
  auto cm = client.compile_model(add_relu_model(), "MULTI:" + remote_cpu + ",CPU");
  cm.set_property({{"DEVICE_PRIORITIES", remote_cpu + ",CPU"}});
  // Requests in flight on both; the worker dies with some of them running there.
  constexpr int n = 1000;
  std::vector<InferRequest> reqs;
  std::atomic<int> completions{0};
  for (int r = 0; r < n; ++r) {
    reqs.push_back(cm.create_infer_request());
    reqs.back().set_tensor("a", filled(static_cast<float>(r)));
    reqs.back().set_tensor("b", filled(1));
    reqs.back().set_callback([&completions](std::exception_ptr) { ++completions; });
  }
  for (int r = 0; r < n; ++r) {
    reqs[r].start_async();
    if (r == n / 4) wp.kill9();
  }
  int wrong = 0, failed = 0;
  for (int r = 0; r < n; ++r) {
    try {
      reqs[r].wait();
      auto y = reqs[r].get_tensor("y");
      for (int i = 0; i < 16; ++i) wrong += y.data<float>()[i] != expected(r, i);
    } catch (const std::exception& e) {
      ++failed;
      BOOST_TEST_MESSAGE(e.what());
    }
  }
  BOOST_TEST(failed == 0);
  BOOST_TEST(wrong == 0);
  BOOST_TEST(completions.load() == n); // each exactly once: a second completion would count twice
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "CPU");
}

BOOST_AUTO_TEST_CASE(a_request_whose_only_device_was_remote_fails_naming_the_node) {
  worker_process wp;
  Core client;
  client.add_node(wp.address);
  auto cm = client.compile_model(add_relu_model(), "CPU@" + wp.address);
  BOOST_TEST(run_many(cm, 2).wrong == 0);
  wp.kill9();
  const auto o = run_many(cm, 3);
  BOOST_REQUIRE(o.errors.size() == 3u);
  BOOST_TEST(o.errors[0].find("node " + wp.address) != std::string::npos, o.errors[0]);
}

BOOST_AUTO_TEST_CASE(sigterm_drains_the_worker_and_it_exits_0) {
  worker_process wp;
  Core client;
  client.add_node(wp.address);
  auto cm = client.compile_model(add_relu_model(), "CPU@" + wp.address);
  BOOST_TEST(run_many(cm, 5).wrong == 0);
  const int status = wp.terminate();
  BOOST_TEST(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == 0);
}


BOOST_AUTO_TEST_CASE(a_worker_restarted_mid_run_rejoins_and_gets_its_models_again) {
  auto first = std::make_unique<worker_process>();
  const std::string address = first->address;
  Core client;
  client.add_node(address);
  const std::string remote_cpu = "CPU@" + address;
  auto multi = client.compile_model(add_relu_model(), "MULTI:" + remote_cpu + ",CPU");
  auto alone = client.compile_model(add_relu_model(), remote_cpu);
  BOOST_TEST(run_many(alone, 2).wrong == 0);
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0}, failed{0}, done{0};
  // Requests keep coming while the worker dies and comes back.
  std::thread load([&] {
    while (!stop) {
      const auto o = run_many(multi, 8);
      wrong += o.wrong;
      failed += static_cast<int>(o.errors.size());
      done += 8;
    }
  });
  while (done < 40) std::this_thread::yield();
  first->kill9();
  wait_serving(multi, "CPU");
  // The model compiled only there fails, naming the node, while it is gone.
  const auto gone = run_many(alone, 1);
  BOOST_REQUIRE(gone.errors.size() == 1u);
  BOOST_TEST(gone.errors[0].find("node " + address) != std::string::npos, gone.errors[0]);
  const int before = done;
  while (done < before + 40) std::this_thread::yield();
  worker_process second("", address); // the same address: the client finds it again by itself
  wait_serving(multi, remote_cpu + ",CPU");
  const int back = done;
  while (done < back + 40) std::this_thread::yield();
  stop = true;
  load.join();
  BOOST_TEST(wrong.load() == 0);
  BOOST_TEST(failed.load() == 0);
  // The new worker gets the model again (it knew nothing of it) and serves: with the remote
  // device alone in the priorities (the local CPU is faster, so MULTI would not pick it).
  const auto served_before = served_by(multi, remote_cpu);
  multi.set_property({{"DEVICE_PRIORITIES", remote_cpu}});
  const auto o = run_many(multi, 10);
  BOOST_TEST(o.wrong == 0);
  BOOST_TEST(o.errors.empty());
  BOOST_TEST(served_by(multi, remote_cpu) == served_before + 10, multi.get_property("REQUESTS_SERVED").as_string());
  BOOST_TEST(run_many(alone, 3).wrong == 0);
}

BOOST_AUTO_TEST_CASE(a_model_the_worker_cannot_compile_is_refused_naming_node_and_reason) {
  worker_process w("", worker_host() + ":0", "TROUPE_EXCLUDED_OPS=CPU:Relu");
  Core client;
  client.add_node(w.address);
  expect_error([&] { client.compile_model(add_relu_model(), "CPU@" + w.address); },
               {"CPU@" + w.address, "node " + w.address, "Relu"});
  w.wait_logged("refused a model");
  // The worker serves on: a model without the op compiles there.
  tiny_onnx::model_builder b;
  b.input("a", {1, 16}).input("b", {1, 16}).output("y", {1, 16}).node("Add", {"a", "b"}, {"y"}, "add");
  const auto path = (fs::temp_directory_path() / ("troupe_remote_add_" + std::to_string(::getpid()) + ".onnx")).string();
  auto cm = client.compile_model(b.write(path), "CPU@" + w.address);
  auto r = cm.create_infer_request();
  r.set_tensor("a", filled(0));
  r.set_tensor("b", filled(1));
  r.infer();
  BOOST_TEST(r.get_tensor("y").data<float>()[15] == 15.0f); // (0 + 15 - 8) + (1 + 15 - 8)
}

namespace np = troupe::actors::node_protocol;

/// The message of a node's error reply.
std::string message_of(const caf::error& e) {
  return e.context().match_elements<std::string>() ? e.context().get_as<std::string>(0) : caf::to_string(e);
}

BOOST_AUTO_TEST_CASE(malformed_and_oversized_messages_are_refused_logged_and_the_worker_serves_on) {
  worker_process w("-max-request-bytes 100");
  const auto host = w.address.substr(0, w.address.rfind(':')); // a delaying proxy's, in remote_tests_delayed
  const auto port = static_cast<uint16_t>(std::stoi(w.address.substr(w.address.rfind(':') + 1)));
  // Bytes that are not CAF's protocol at all: the connection is dropped, nothing else.
  {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(port);
    BOOST_REQUIRE(::inet_pton(AF_INET, host.c_str(), &at.sin_addr) == 1);
    BOOST_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    std::string junk(4096, '\xab');
    junk.replace(0, 8, "\0\0\0\0\xff\xff\xff\xff"); // a header that claims a huge payload
    BOOST_TEST(::write(fd, junk.data(), junk.size()) > 0);
    ::close(fd);
  }
  // Requests larger than the worker takes: refused with the limit, logged.
  Core client;
  client.add_node(w.address);
  auto cm = client.compile_model(add_relu_model(), "CPU@" + w.address);
  const auto big = run_many(cm, 1);
  BOOST_REQUIRE(big.errors.size() == 1u);
  BOOST_TEST(big.errors[0].find("node " + w.address) != std::string::npos, big.errors[0]);
  BOOST_TEST(big.errors[0].find("more than this node takes (100)") != std::string::npos, big.errors[0]);
  w.wait_logged("rejected a request");
  // Node messages that are well-formed for CAF but wrong for troupe, sent by hand.
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  np::add_node_message_types(cfg);
  caf::actor_system sys{cfg};
  {
    auto node = caf::io::remote_actor(sys, host, port);
    BOOST_REQUIRE(node);
    caf::scoped_actor self{sys};
    caf::actor session;
    self->request(*node, std::chrono::seconds(10), np::hello_atom::value, np::hello{np::version, "", self})
        .receive([&](np::welcome& wl) { session = wl.session; }, [&](caf::error& e) { BOOST_FAIL(sys.render(e)); });
    BOOST_REQUIRE(session);
    auto expect_refusal = [&](auto atom, auto msg, uint8_t code, const std::string& part) {
      bool replied = false;
      self->request(session, std::chrono::seconds(10), atom, std::move(msg))
          .receive([&](const caf::message&) { BOOST_FAIL("accepted: " << part); },
                   [&](caf::error& e) {
                     replied = true;
                     BOOST_TEST(e.category() == np::error_category, sys.render(e));
                     BOOST_TEST(int(e.code()) == int(code), sys.render(e));
                     BOOST_TEST(message_of(e).find(part) != std::string::npos, message_of(e));
                   });
      BOOST_TEST(replied);
    };
    // Model 1 is the one compiled above; its inputs here are not tensors.
    expect_refusal(np::infer_atom::value, np::infer_request{1, {"junk", "junk"}},
                   np::failure_code(static_cast<int>(kernels::failure_kind::bad_input)), "input 'a'");
    expect_refusal(np::infer_atom::value, np::infer_request{1, {"x"}},
                   np::failure_code(static_cast<int>(kernels::failure_kind::bad_input)), "takes 2 inputs");
    expect_refusal(np::infer_atom::value, np::infer_request{77, {}}, static_cast<uint8_t>(np::node_errc::need_graph),
                   "no model 77");
    np::compile_request bad;
    bad.device = "CPU";
    bad.graph = "not a graph";
    bad.hash = actors::model_hash(bad.graph, bad);
    expect_refusal(np::compile_atom::value, bad, static_cast<uint8_t>(np::node_errc::bad_request), "graph");
    bad.hash ^= 1;
    expect_refusal(np::compile_atom::value, bad, static_cast<uint8_t>(np::node_errc::bad_request), "hash does not match");
    bad.device = "NPU";
    expect_refusal(np::compile_atom::value, bad, static_cast<uint8_t>(np::node_errc::bad_request), "no device 'NPU'");
  }
  w.wait_logged("refused a model");
  // Still there, still serving.
  BOOST_TEST(::kill(w.pid, 0) == 0);
  Core again;
  again.add_node(w.address);
  BOOST_TEST(again.compile_model(add_relu_model(), "CPU@" + w.address).get_property("EXECUTION_DEVICES").as_string() ==
             "CPU@" + w.address);
}

namespace {

/// A TCP connection to 127.0.0.1:port.
int connect_loopback(uint16_t port) {
  const int fd = bench::connect_loopback(port);
  BOOST_REQUIRE(fd >= 0);
  return fd;
}

/// A BASP frame: a 32-byte header whose bytes 4..7 say the payload's length (big-endian), then
/// the payload (`claimed`: the length the header says, when it is not the payload's).
std::string frame(const std::string& payload, int64_t claimed = -1) {
  const auto n = static_cast<uint32_t>(claimed < 0 ? static_cast<int64_t>(payload.size()) : claimed);
  std::string f(32, '\0');
  f[4] = char(n >> 24), f[5] = char(n >> 16), f[6] = char(n >> 8), f[7] = char(n);
  return f + payload;
}

/// What stands behind the gate: accepts connections on loopback and keeps every byte each sent.
struct recording_server {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  uint16_t port = 0;
  std::mutex m;
  std::vector<std::string> got; ///< per accepted connection
  std::vector<int> conns;        ///< the accepted sockets, closed by the destructor
  std::vector<std::thread> readers;
  std::thread t;
  std::atomic<bool> stop{false};
  recording_server() {
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    BOOST_REQUIRE(::listen(listener, 8) == 0);
    socklen_t len = sizeof at;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&at), &len);
    port = ntohs(at.sin_port);
    t = std::thread([this] {
      while (!stop) {
        const int c = ::accept(listener, nullptr, nullptr);
        if (c < 0) return;
        std::lock_guard l(m);
        const std::size_t k = got.size();
        got.emplace_back();
        conns.push_back(c);
        readers.emplace_back([this, c, k] {
          char buf[65536];
          for (ssize_t n; (n = ::read(c, buf, sizeof buf)) > 0;) {
            std::lock_guard l(m);
            got[k].append(buf, static_cast<std::size_t>(n));
          }
        });
      }
    });
  }
  std::string bytes(std::size_t k) {
    std::lock_guard l(m);
    return k < got.size() ? got[k] : std::string();
  }
  /// Every reader is joined before `got` goes: a detached one could still be appending to it
  /// (ThreadSanitizer saw one write while the test's end destroyed the vector).
  ~recording_server() {
    stop = true;
    ::shutdown(listener, SHUT_RDWR);
    ::close(listener);
    t.join();
    for (int c : conns) ::shutdown(c, SHUT_RDWR); // the accept thread is gone: no one adds to conns
    for (auto& r : readers) r.join();
    for (int c : conns) ::close(c);
  }
};

/// Blocks until the peer closes `fd` (a gate that never closes is CTest's timeout).
void expect_closed(int fd) {
  char c;
  while (::read(fd, &c, 1) > 0) {
  }
  ::close(fd);
}

} // namespace

BOOST_AUTO_TEST_CASE(the_gate_passes_frames_whole_holds_large_ones_until_sent_and_closes_bad_connections) {
  recording_server inner;
  std::mutex lm;
  std::string log;
  basp_gate_limits lim;
  lim.max_frame = 1 << 20;
  lim.stream_frame = 1024;
  lim.handshake_timeout = lim.idle_timeout = std::chrono::milliseconds(300);
  lim.max_connections = 3;
  basp_gate gate("127.0.0.1", 0, inner.port, lim, [&](const std::string& line) {
    std::lock_guard l(lm);
    log += line + "\n";
  });
  auto logged = [&](const std::string& part) {
    while (true) {
      {
        std::lock_guard l(lm);
        if (log.find(part) != std::string::npos) return;
      }
      std::this_thread::yield();
    }
  };
  // Frames of 0, 100 and 5000 bytes (the last one held until whole), sent a byte at a time
  // where it matters: the server gets exactly these bytes.
  const std::string small = frame(""), mid = frame(std::string(100, 'm')), large = frame(std::string(5000, 'L'));
  int fd = connect_loopback(gate.port());
  const std::string all = small + mid + large;
  BOOST_REQUIRE(::write(fd, all.data(), 32 + 132 + 40) == 204); // the large frame's header and 8 bytes
  while (inner.bytes(0).size() < 164) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  BOOST_TEST(inner.bytes(0) == small + mid, "a large frame was passed on before all of it came");
  BOOST_REQUIRE(::write(fd, all.data() + 204, all.size() - 204) == static_cast<ssize_t>(all.size() - 204));
  while (inner.bytes(0).size() < all.size()) std::this_thread::yield();
  BOOST_TEST(inner.bytes(0) == all);
  // A header over the limit closes the connection, logged; what it claimed was never held.
  const std::string huge = frame("", int64_t(1) << 30);
  BOOST_REQUIRE(::write(fd, huge.data(), huge.size()) == 32);
  expect_closed(fd);
  logged("a frame of 1073741824 bytes (the limit is 1048576)");
  // A connection that sends nothing, or a part of its first frame only, is closed.
  fd = connect_loopback(gate.port());
  expect_closed(fd);
  fd = connect_loopback(gate.port());
  BOOST_REQUIRE(::write(fd, mid.data(), 40) == 40);
  expect_closed(fd);
  logged("no handshake within 300 ms");
  // One more connection than the limit is closed at once (a gate whose timeouts cannot close
  // the three first on a slow machine).
  lim.handshake_timeout = lim.idle_timeout = std::chrono::minutes(10);
  basp_gate full("127.0.0.1", 0, inner.port, lim, [&](const std::string& line) {
    std::lock_guard l(lm);
    log += line + "\n";
  });
  std::vector<int> open;
  for (int k = 0; k < 3; ++k) {
    open.push_back(connect_loopback(full.port()));
    BOOST_REQUIRE(::write(open.back(), small.data(), small.size()) == 32);
  }
  while (inner.bytes(5).size() < 32) std::this_thread::yield(); // all three are through
  expect_closed(connect_loopback(full.port()));
  logged("3 are open and have sent their handshake");
  // A connection that has sent nothing makes room for a new one (a flood of silent ones must
  // not lock clients out): the oldest silent one goes.
  ::close(open.back());
  open.pop_back();
  std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the gate has seen it go
  const int silent = connect_loopback(full.port());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int newcomer = connect_loopback(full.port());
  expect_closed(silent);
  logged("no handshake yet, and a new connection needed its place");
  BOOST_REQUIRE(::write(newcomer, small.data(), small.size()) == 32);
  while (inner.bytes(7).size() < 32) std::this_thread::yield(); // the refused one never reached it; 6 is the silent one
  ::close(newcomer);
  for (int f : open) ::close(f);
  // One client host may hold at most max_per_host of them.
  lim.max_connections = 10;
  lim.max_per_host = 2;
  basp_gate per_host("127.0.0.1", 0, inner.port, lim, [&](const std::string& line) {
    std::lock_guard l(lm);
    log += line + "\n";
  });
  open.clear();
  for (int k = 0; k < 2; ++k) {
    open.push_back(connect_loopback(per_host.port()));
    BOOST_REQUIRE(::write(open.back(), small.data(), small.size()) == 32);
  }
  while (inner.bytes(9).size() < 32) std::this_thread::yield();
  expect_closed(connect_loopback(per_host.port()));
  logged("2 from 127.0.0.1 are open");
  for (int f : open) ::close(f);
}
