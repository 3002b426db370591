/// troupe_flood_bench: what one client's flood of bad input costs everyone else on a worker.
/// A `troupe worker` child on loopback (with a token) serves a Relu on its CPU. A measured
/// client sends it requests one at a time for S seconds alone, then beside each flood in turn:
///   junk connections    connect, send a BASP header claiming a 4 GiB payload, close (the gate)
///   silent connections  connect and send nothing, as many as the worker lets in (the gate)
///   wrong tokens        hello with a wrong token, over and over (the node's delayed refusals)
///   unexpected messages an authenticated client sends messages of no protocol step
///   unknown models      an authenticated client asks to run models the worker does not have
///   valid requests      the yardstick: a client sending valid requests, 64 in flight
/// The message floods keep 64 messages in flight (each answered with an error). In each phase a
/// new client also connects and compiles once, timed: a flood must not lock newcomers out.
/// Prints per phase the measured client's p50/p99 latency and requests/s, what the flood sent,
/// the newcomer's connect-and-compile time, the worker's CPU use (100 % is one core) and its
/// RSS at the phase's end.
///
///   troupe_flood_bench [SECONDS per phase, default 10] [FLOOD,... (default: all)]
///
/// The flood runs in this process and so shares this machine's cores with the worker and the
/// measured client: on a small machine part of the slowdown is the flooder's own CPU time.
#include <troupe/troupe.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/protocol/node.hpp"
#include "base/median.hpp"
#include "benchmarks/listening_child.hpp"
#include "benchmarks/loopback_socket.hpp"
#include "benchmarks/tiny_onnx.hpp"

namespace fs = std::filesystem;
namespace np = troupe::actors::node_protocol;
using namespace troupe;
using clock_type = std::chrono::steady_clock;

namespace {

const std::string token = "flood-bench-token";

double rss_mb(pid_t pid) {
  std::ifstream st("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(st, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  return 0;
}

/// CPU seconds process `pid` has used (user + system).
double cpu_seconds(pid_t pid) {
  std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(st)), std::istreambuf_iterator<char>());
  std::istringstream rest(text.substr(text.rfind(')') + 2)); // fields from the 3rd on
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

/// One flood: runs on its own threads from start() until stop(), counting what it sent.
struct flood {
  std::string name;
  std::function<void(std::atomic<bool>& stop, std::atomic<uint64_t>& sent)> body;
  std::vector<std::thread> threads;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sent{0};

  void start(int n) {
    for (int i = 0; i < n; ++i) threads.emplace_back([this] { body(stop_, sent); });
  }
  void stop() {
    stop_ = true;
    for (auto& t : threads) t.join();
  }
};

caf::actor_system_config& network_config(caf::actor_system_config& cfg) {
  cfg.set("logger.verbosity", caf::atom("quiet"));
  cfg.load<caf::io::middleman>();
  np::add_node_message_types(cfg);
  // As troupe's clients do: a worker drops a connection silent for a second, and a held-back
  // refusal (up to 4 s) would go to a closed one.
  cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds(100)});
  return cfg;
}

/// Keeps 64 requests made by `send` in flight until `stop`, counting them; a reply is `Reply`
/// or (what a flood gets) an error.
template <class Reply, class Send>
void keep_in_flight(caf::actor_system& sys, Send send, std::atomic<bool>& stop, std::atomic<uint64_t>& sent) {
  constexpr int window = 64;
  auto done = std::make_shared<std::atomic<int>>(0);
  sys.spawn([send, &stop, &sent, done](caf::event_based_actor* self) {
    auto next = std::make_shared<std::function<void()>>();
    *next = [self, send, &stop, &sent, done, next] {
      if (stop) {
        if (++*done == window) self->quit();
        return;
      }
      ++sent;
      send(self).then([next](Reply&) { (*next)(); }, [next](caf::error&) { (*next)(); });
    };
    for (int i = 0; i < window; ++i) (*next)();
  });
  while (*done < window) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

/// An authenticated session with the worker at port, through `sys`, and the client actor it
/// watches (the session ends when that one does: keep it until the flood ends).
std::pair<caf::actor, caf::actor> session_of(caf::actor_system& sys, uint16_t port, const std::string& with_token) {
  auto node = caf::io::remote_actor(sys, "127.0.0.1", port);
  if (!node) throw Exception("cannot reach the worker: " + sys.render(node.error()));
  auto client = sys.spawn([]() -> caf::behavior { return {[](int32_t) {}}; });
  caf::scoped_actor self{sys};
  caf::actor session;
  std::string failure;
  self->request(*node, std::chrono::seconds(30), np::hello_atom::value, np::hello{np::version, with_token, client})
      .receive([&](np::welcome& w) { session = w.session; }, [&](caf::error& e) { failure = sys.render(e); });
  if (!session) throw Exception("hello refused: " + failure);
  return {session, client};
}

struct phase_result {
  std::vector<double> ms;
  double seconds = 0;
  uint64_t sent = 0;
  double newcomer_ms = -1; ///< -1: the newcomer failed
  std::string newcomer_error;
  double worker_rss = 0;
  double worker_cpu = 0; ///< the worker's CPU seconds per second of the phase
};

} // namespace

int main(int argc, char** argv) {
  try {
    const double seconds = argc > 1 ? std::atof(argv[1]) : 10;
    const auto bin = fs::read_symlink("/proc/self/exe").parent_path() / "troupe";
    const auto dir = fs::temp_directory_path() / ("troupe_flood_bench_" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "token") << token << "\n";
    tiny_onnx::model_builder b;
    b.input("x", {1, 256}).output("y", {1, 256}).node("Relu", {"x"}, {"y"}, "relu");
    const auto model = (dir / "relu.onnx").string();
    b.write(model);
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1); // the worker shares two cores with this process
    bench::listening_child worker({bin.string(), "worker", "-listen", "127.0.0.1:0", "-token-file", (dir / "token").string()});
    const auto port = static_cast<uint16_t>(std::stoi(worker.address.substr(worker.address.rfind(':') + 1)));
    const std::string device = "CPU@" + worker.address;

    Core measured;
    measured.add_node(worker.address, {{"NODE_TOKEN", token}});
    auto request = measured.compile_model(model, device).create_infer_request();
    Tensor x(element_type::f32, {1, 256});
    std::fill_n(x.data<float>(), 256, 1.0f);
    request.set_tensor("x", x);
    for (int i = 0; i < 200; ++i) request.infer(); // warm-up

    caf::actor_system_config cfg;
    caf::actor_system sys{network_config(cfg)};
    std::vector<std::unique_ptr<flood>> floods;
    auto add = [&](std::string name, auto body) {
      floods.push_back(std::make_unique<flood>());
      floods.back()->name = std::move(name);
      floods.back()->body = body;
    };
    add("none", [](std::atomic<bool>&, std::atomic<uint64_t>&) {});
    // The yardstick: the same client sending valid requests as fast as it can. A flood of bad
    // messages should cost the others no more than this.
    add("valid requests", [&](std::atomic<bool>& stop, std::atomic<uint64_t>& sent) {
      Core c;
      c.add_node(worker.address, {{"NODE_TOKEN", token}});
      auto cm = c.compile_model(model, device);
      std::vector<InferRequest> reqs;
      for (int i = 0; i < 64; ++i) {
        reqs.push_back(cm.create_infer_request());
        reqs.back().set_tensor("x", x);
        reqs.back().start_async();
      }
      while (!stop)
        for (auto& r : reqs) {
          r.wait();
          ++sent;
          if (!stop) r.start_async();
        }
      for (auto& r : reqs) r.wait();
    });
    add("junk connections", [port](std::atomic<bool>& stop, std::atomic<uint64_t>& sent) {
      std::string header(32, '\0');
      header[4] = header[5] = header[6] = header[7] = '\xff'; // a payload of 4 GiB announced
      while (!stop) {
        const int fd = bench::connect_loopback(port);
        if (fd < 0) continue;
        if (::write(fd, header.data(), header.size()) > 0) ++sent;
        ::close(fd);
      }
    });
    add("silent connections", [port](std::atomic<bool>& stop, std::atomic<uint64_t>& sent) {
      std::vector<int> open;
      while (!stop) {
        if (open.size() < 600) { // past the worker's bound it closes them; reopen what it closed
          const int fd = bench::connect_loopback(port);
          if (fd >= 0) open.push_back(fd), ++sent;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::erase_if(open, [](int fd) {
          char c;
          if (::recv(fd, &c, 1, MSG_DONTWAIT) == 0) return ::close(fd), true; // closed by the worker
          return false;
        });
      }
      for (int fd : open) ::close(fd);
    });
    add("wrong tokens", [&sys, port](std::atomic<bool>& stop, std::atomic<uint64_t>& sent) {
      auto node = caf::io::remote_actor(sys, "127.0.0.1", port);
      if (!node) return;
      keep_in_flight<np::welcome>(
          sys,
          [to = *node](caf::event_based_actor* self) {
            return self->request(to, caf::infinite, np::hello_atom::value, np::hello{np::version, "guess", self});
          },
          stop, sent);
    });
    add("unexpected messages", [&sys, port](std::atomic<bool>& stop, std::atomic<uint64_t>& sent) {
      const auto [session, client] = session_of(sys, port, token);
      keep_in_flight<np::welcome>( // never welcomed: refused
          sys,
          [session](caf::event_based_actor* self) {
            return self->request(session, caf::infinite, std::string("not a protocol message"), int32_t(42));
          },
          stop, sent);
      caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
    });
    add("unknown models", [&sys, port](std::atomic<bool>& stop, std::atomic<uint64_t>& sent) {
      const auto [session, client] = session_of(sys, port, token);
      keep_in_flight<np::infer_reply>(
          sys,
          [session](caf::event_based_actor* self) {
            return self->request(session, caf::infinite, np::infer_atom::value, np::infer_request{77, {"junk"}});
          },
          stop, sent);
      caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
    });

    std::printf("one flooding client beside a measured one on a worker at %s: a Relu of 256 floats on its CPU, "
                "requests one at a time, %.0f s per phase; %u cores here, shared by the worker, both clients and "
                "the flood\n\n",
                worker.address.c_str(), seconds, std::thread::hardware_concurrency());
    std::printf("| flood | sent | measured requests/s | p50 ms | p99 ms | p99 against none | newcomer's connect + "
                "compile ms | worker CPU %% | worker RSS MB |\n|---|---|---|---|---|---|---|---|---|\n");
    double p99_alone = 0;
    const std::string only = argc > 2 ? "," + std::string(argv[2]) + "," : "";
    for (auto& f : floods) {
      if (!only.empty() && f->name != "none" && only.find("," + f->name + ",") == std::string::npos) continue;
      phase_result r;
      f->start(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(500)); // the flood under way
      const double cpu0 = cpu_seconds(worker.pid);
      const auto t0 = clock_type::now();
      const auto end = t0 + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(seconds));
      std::thread newcomer([&] {
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds / 2));
        const auto n0 = clock_type::now();
        try {
          Core c;
          c.add_node(worker.address, {{"NODE_TOKEN", token}});
          c.compile_model(model, device);
          r.newcomer_ms = std::chrono::duration<double, std::milli>(clock_type::now() - n0).count();
        } catch (const std::exception& e) {
          r.newcomer_error = e.what();
        }
      });
      while (clock_type::now() < end) {
        const auto s = clock_type::now();
        request.infer();
        r.ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - s).count());
      }
      r.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
      r.worker_cpu = (cpu_seconds(worker.pid) - cpu0) / r.seconds;
      newcomer.join();
      r.worker_rss = rss_mb(worker.pid);
      f->stop();
      r.sent = f->sent;
      const double p99 = percentile(r.ms, 0.99);
      if (f->name == "none") p99_alone = p99;
      std::printf("| %s | %llu | %.0f | %.3f | %.3f | %.2fx | %s | %.0f | %.0f |\n", f->name.c_str(),
                  static_cast<unsigned long long>(r.sent), static_cast<double>(r.ms.size()) / r.seconds,
                  percentile(r.ms, 0.5), p99, p99_alone > 0 ? p99 / p99_alone : 0.0,
                  r.newcomer_ms >= 0 ? std::to_string(static_cast<int>(r.newcomer_ms)).c_str()
                                     : ("failed: " + r.newcomer_error.substr(0, 80)).c_str(),
                  100 * r.worker_cpu, r.worker_rss);
      std::fflush(stdout);
    }
    fs::remove_all(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "troupe_flood_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
