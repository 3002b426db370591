/// Remote devices over loopback, measured:
///  1. What a request costs through a node against the local path, per tensor size (1 KB to
///     16 MB in and out): a Relu on CPU here and on CPU@127.0.0.1:P, a `troupe worker` child,
///     over plain TCP and over TLS (a certificate made with the openssl command).
///  2. MULTI of a local and a remote device whose service time is a wait (this machine's two
///     cores cannot show real devices overlapping): requests/s against the local one alone.
/// `troupe_remote_bench [wait_ms] [requests] [round-trip|multi]`. The second part runs its node in a child of this
/// program (`--serve-wait MS`), which serves a WAIT device through the node actor.
#include <troupe/troupe.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/io/all.hpp>

#include "base/median.hpp"
#include "actors/node.hpp"
#include "actors/remote_device.hpp"
#include "actors/scheduler.hpp"
#include "benchmarks/listening_child.hpp"
#include "benchmarks/tiny_onnx.hpp"
#include "benchmarks/wait_device.hpp"

namespace fs = std::filesystem;
using namespace troupe;
using namespace troupe::bench;

namespace {

using child = listening_child;

fs::path own_folder() { return fs::read_symlink("/proc/self/exe").parent_path(); }

/// A self-signed certificate and key made with the openssl command in `dir` (shared by the
/// worker and the client, as docs/remote.md allows); false when the command fails.
bool make_certificate(const fs::path& dir) {
  fs::create_directories(dir);
  const std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " +
                          (dir / "key.pem").string() + " -out " + (dir / "cert.pem").string() +
                          " -days 1 -subj /CN=troupe-bench >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

/// Part 1: per tensor size, the median latency of a synchronous infer() of a Relu here, on a
/// node over plain TCP and on a node over TLS, interleaved.
void round_trips() {
  const fs::path certs = fs::temp_directory_path() / ("troupe_remote_bench_tls_" + std::to_string(getpid()));
  if (!make_certificate(certs)) throw Exception("the openssl command could not make a certificate in " + certs.string());
  const auto cert = (certs / "cert.pem").string(), key = (certs / "key.pem").string();
  // Two workers and this process share the machine's cores: the workers' OpenMP threads must
  // not spin after each request (as they may on a machine of their own) while this one works.
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  child worker({(own_folder() / "troupe").string(), "worker", "-listen", "127.0.0.1:0"});
  child tls_worker({(own_folder() / "troupe").string(), "worker", "-listen", "127.0.0.1:0", "-tls-cert", cert, "-tls-key", key});
  unsetenv("OMP_WAIT_POLICY");
  Core core;
  core.add_node(worker.address);
  core.add_node(tls_worker.address, {{"NODE_TLS_CERT", cert}, {"NODE_TLS_KEY", key}});
  fs::remove_all(certs);
  const std::string remote = "CPU@" + worker.address, remote_tls = "CPU@" + tls_worker.address;
  std::printf("round trip through a node on loopback, plain TCP (%s) and TLS (%s), against the local CPU: Relu, "
              "f32 in and out, median of sync infer()\n",
              worker.address.c_str(), tls_worker.address.c_str());
  std::printf("  %10s %12s %12s %12s %12s %12s\n", "bytes", "local us", "remote us", "added us", "added MB/s", "TLS us");
  for (std::size_t bytes : {std::size_t(1) << 10, std::size_t(16) << 10, std::size_t(256) << 10, std::size_t(1) << 20,
                            std::size_t(4) << 20, std::size_t(16) << 20}) {
    const auto n = static_cast<int64_t>(bytes / 4);
    tiny_onnx::model_builder b;
    b.input("x", {1, n}).output("y", {1, n}).node("Relu", {"x"}, {"y"}, "relu");
    const auto path = (fs::temp_directory_path() / ("troupe_remote_bench_" + std::to_string(getpid()) + ".onnx")).string();
    b.write(path);
    std::vector<InferRequest> reqs;
    for (const auto* device : {"CPU", remote.c_str(), remote_tls.c_str()})
      reqs.push_back(core.compile_model(path, device).create_infer_request());
    fs::remove(path);
    Tensor x(element_type::f32, {1, n});
    std::fill_n(x.data<float>(), n, 1.0f);
    for (auto& r : reqs) {
      r.set_tensor("x", x);
      r.infer();
    }
    const int runs = bytes >= (std::size_t(4) << 20) ? 20 : 200;
    std::vector<std::vector<double>> us(reqs.size());
    for (int i = 0; i < runs; ++i)
      for (std::size_t k = 0; k < reqs.size(); ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        reqs[k].infer();
        us[k].push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
    const double lu = median(us[0]), ru = median(us[1]), tu = median(us[2]), added = ru - lu;
    std::printf("  %10zu %12.1f %12.1f %12.1f %12.1f %12.1f\n", bytes, lu, ru, added, added > 0 ? 2.0 * bytes / added : 0.0, tu);
  }
}

/// The WAIT device a `--serve-wait` child serves: every model waits `wait` per request.
class wait_kernel_device final : public kernels::device {
public:
  explicit wait_kernel_device(std::chrono::microseconds wait) : wait_(wait) {}
  std::string name() const override { return "WAIT"; }
  std::map<std::string, std::string> info() const override { return {{"DEVICE_TYPE", "wait"}}; }
  kernels::support query(const graph::Graph&, const graph::Op&) const override { return {true, {}}; }
  std::unique_ptr<kernels::executable> compile(const graph::Graph&, const kernels::compile_config&) const override {
    return std::make_unique<wait_executable>(wait_);
  }

private:
  std::chrono::microseconds wait_;
};

caf::actor_system_config& network_config(caf::actor_system_config& cfg) {
  cfg.set("logger.verbosity", caf::atom("quiet"));
  cfg.load<caf::io::middleman>();
  actors::node_protocol::add_node_message_types(cfg);
  return cfg;
}

/// `--serve-wait MS`: a node serving WAIT until SIGTERM.
int serve_wait(int wait_ms) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  caf::actor_system_config cfg;
  caf::actor_system sys{network_config(cfg)};
  actors::node_spec spec;
  spec.devices["WAIT"] = std::make_shared<wait_kernel_device>(std::chrono::milliseconds(wait_ms));
  auto node = actors::spawn_node(sys, std::move(spec), std::make_shared<actors::node_load>());
  auto port = caf::io::publish(node, 0, "127.0.0.1", true);
  if (!port) return 1;
  std::printf("listening on 127.0.0.1:%u, devices: WAIT\n", static_cast<unsigned>(*port));
  std::fflush(stdout);
  int sig = 0;
  sigwait(&set, &sig);
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
  return 0;
}

/// Part 2: a local WAIT device alone, then MULTI of it and the node's.
void multi_local_and_remote(int wait_ms, uint64_t requests) {
  child node({"/proc/self/exe", "--serve-wait", std::to_string(wait_ms)});
  caf::actor_system_config cfg;
  caf::actor_system sys{network_config(cfg)};
  const auto colon = node.address.rfind(':');
  const auto port = static_cast<uint16_t>(std::stoi(node.address.substr(colon + 1)));
  auto remote_node = caf::io::remote_actor(sys, "127.0.0.1", port);
  if (!remote_node) throw Exception("cannot reach the WAIT node: " + sys.render(remote_node.error()));
  auto link = std::make_shared<actors::node_link>(sys, "127.0.0.1", port, false);
  link->connect(*remote_node, "", std::chrono::seconds(10));
  auto remote_wait = actors::make_remote_device(link, "WAIT", {});

  constexpr std::size_t streams = 2;
  kernels::compile_config cc;
  cc.streams = streams;
  graph::Graph g; // the WAIT device ignores the graph; the node checks the input against it
  g.outputs.push_back(g.add_input("x", element_type::f32, PartialShape(Shape{1, 256})));
  auto remote_prog = std::make_shared<actors::program>();
  remote_prog->prototype = remote_wait->compile(g, cc);
  actors::subgraph_spec remote_sub;
  remote_sub.fixed = remote_prog;
  remote_sub.streams = streams;

  Tensor t(element_type::f32, {1, 256});
  const auto wait = std::chrono::milliseconds(wait_ms);
  std::printf("MULTI of a local and a remote device that wait %d ms per request, %zu streams each, %llu "
              "requests, 8 in flight\n",
              wait_ms, streams, static_cast<unsigned long long>(requests));
  actors::scheduler_spec one;
  one.devices.push_back({"WAIT", wait_subgraph(sys, wait, streams), streams});
  actors::scheduler alone(sys, std::move(one));
  actors::scheduler_spec two;
  two.devices.push_back({"WAIT", wait_subgraph(sys, wait, streams), streams});
  two.devices.push_back({"WAIT@" + node.address, std::make_shared<actors::subgraph>(sys, std::move(remote_sub)), streams});
  actors::scheduler both(sys, std::move(two));
  run_requests(alone, t, 16, 8); // warm-up: every device measured
  run_requests(both, t, 16, 8);
  const double s1 = run_requests(alone, t, requests, 8);
  const double s2 = run_requests(both, t, requests, 8);
  const auto served = both.served();
  std::printf("  local alone:       %8.1f requests/s (ideal %.1f)\n", requests / s1, streams * 1000.0 / wait_ms);
  std::printf("  local + remote:    %8.1f requests/s (ideal %.1f); served: WAIT=%llu WAIT@%s=%llu\n", requests / s2,
              2 * streams * 1000.0 / wait_ms, static_cast<unsigned long long>(served[0]), node.address.c_str(),
              static_cast<unsigned long long>(served[1]));
  std::printf("  local + remote against local alone: %.2fx\n", s1 / s2);
}

} // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 2 && std::string(argv[1]) == "--serve-wait") return serve_wait(std::atoi(argv[2]));
    const int wait_ms = argc > 1 ? std::atoi(argv[1]) : 5;
    const uint64_t requests = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 400;
    const std::string part = argc > 3 ? argv[3] : "all"; // "round-trip", "multi" or "all"
    if (part != "multi") round_trips();
    if (part != "round-trip") multi_local_and_remote(wait_ms, requests);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "troupe_remote_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
