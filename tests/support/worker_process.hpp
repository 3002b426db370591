#pragma once
/// What the remote-device tests share: `troupe worker` in a child process (as deployed),
/// requests run in bulk against the add_relu model, and waits on a model's devices.
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/add_relu_model.hpp"
#include "benchmarks/link_proxy.hpp"

namespace troupe::tests {

/// Runs `n` requests at once; counts wrong elements and errors.
struct outcome {
  int wrong = 0;
  std::vector<std::string> errors;
};
inline outcome run_many(CompiledModel& cm, int n) {
  auto reqs = start_requests(cm, n);
  outcome o;
  for (int r = 0; r < n; ++r) {
    try {
      reqs[r].wait();
    } catch (const std::exception& e) {
      o.errors.push_back(e.what());
      continue;
    }
    auto y = reqs[r].get_tensor("y");
    for (int i = 0; i < 16; ++i) o.wrong += y.data<float>()[i] != expected(r, i);
  }
  return o;
}

/// Where workers run: this machine's loopback, or (tests/netns_remote.sh) another network
/// namespace, reached over a veth pair with delay and loss.
inline std::string worker_host() {
  const char* h = std::getenv("TROUPE_TEST_WORKER_HOST");
  return h && *h ? h : "127.0.0.1";
}
inline std::string worker_prefix() {
  const char* ns = std::getenv("TROUPE_TEST_WORKER_NETNS");
  return ns && *ns ? std::string("ip netns exec ") + ns + " " : "";
}

/// TROUPE_TEST_LINK_DELAY_MS and TROUPE_TEST_LINK_LOSS_PERCENT (ctest remote_tests_delayed):
/// clients reach each worker through a link_proxy that delays every chunk that long each way
/// and "loses" that share of them (see link_proxy); 0 without them.
inline std::chrono::milliseconds link_delay() {
  const char* d = std::getenv("TROUPE_TEST_LINK_DELAY_MS");
  return std::chrono::milliseconds(d && *d ? std::atoi(d) : 0);
}
inline double link_loss_percent() {
  const char* p = std::getenv("TROUPE_TEST_LINK_LOSS_PERCENT");
  return p && *p ? std::atof(p) : 0.0;
}

/// Whether workers are reached through a link_proxy (a delay or losses asked).
inline bool behind_proxy() { return link_delay().count() > 0 || link_loss_percent() > 0; }

/// The delaying proxies, by the address clients use: a worker restarted at that address
/// listens again where the first one did, behind the same proxy.
inline std::map<std::string, std::shared_ptr<bench::link_proxy>>& delaying_proxies() {
  static std::map<std::string, std::shared_ptr<bench::link_proxy>> proxies;
  return proxies;
}

/// `troupe worker` in a child process (as deployed); its first line gives the port, the rest
/// is its log. `address` is where clients reach it (a delaying proxy's, see link_delay).
struct worker_process {
  pid_t pid = -1;
  std::string address;
  std::shared_ptr<std::mutex> m = std::make_shared<std::mutex>();
  std::shared_ptr<std::string> log = std::make_shared<std::string>();
  /// `listen`: where it listens (port 0: any free one).
  /// `env`: VAR=value ... for its environment.
  explicit worker_process(const std::string& extra = "", const std::string& listen = worker_host() + ":0",
                          const std::string& env = "") {
    start(extra, listen, env);
  }
  void start(const std::string& extra, std::string listen, const std::string& env) {
    std::shared_ptr<bench::link_proxy> proxy;
    if (behind_proxy()) {
      auto& proxies = delaying_proxies();
      if (auto it = proxies.find(listen); it != proxies.end()) {
        proxy = it->second;
        listen = proxy->target();
      }
    }
    const auto bin = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "troupe";
    // Made before fork: the child of a threaded process may only call async-signal-safe
    // functions (no malloc) until it execs.
    // Beyond loopback (the network-namespace runs) a worker without a token must be told so.
    const bool loopback = listen.rfind("127.", 0) == 0 || listen.rfind("localhost:", 0) == 0;
    const std::string insecure = !loopback && extra.find("-token-file") == std::string::npos ? " -insecure" : "";
    const std::string cmd = "exec " + worker_prefix() + (env.empty() ? "" : "env " + env + " ") + bin.string() +
                            " worker -listen " + listen + " " + extra + insecure;
    int out[2];
    BOOST_REQUIRE(pipe(out) == 0);
    pid = fork();
    BOOST_REQUIRE(pid >= 0);
    if (pid == 0) {
      dup2(out[1], 1);
      close(out[0]);
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    std::string line;
    char c;
    // The first line past its warnings (-insecure's) says where it listens.
    do {
      line.clear();
      while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
    } while (line.rfind("warning: ", 0) == 0);
    // Keep reading its log in the background (it never blocks on a full pipe).
    std::thread([fd = out[0], m = m, log = log] {
      char buf[256];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
        std::lock_guard l(*m);
        log->append(buf, static_cast<std::size_t>(n));
      }
      close(fd);
    }).detach();
    const std::string head = "listening on ";
    if (line.rfind(head, 0) != 0) {
      kill9(); // the destructor of a half-made object does not run
      BOOST_FAIL("worker said: " << line);
    }
    address = line.substr(head.size(), line.find(',') - head.size());
    if (behind_proxy()) {
      if (!proxy) {
        proxy = std::make_shared<bench::link_proxy>(address, link_delay(), link_loss_percent());
        delaying_proxies()[proxy->address()] = proxy;
      }
      address = proxy->address();
    }
  }
/// Waits, without a clock, until its log holds `part` (a line that never comes is CTest's timeout).
  void wait_logged(const std::string& part) {
    while (true) {
      {
        std::lock_guard l(*m);
        if (log->find(part) != std::string::npos) return;
      }
      std::this_thread::yield();
    }
  }
  void kill9() {
    if (pid <= 0) return; // never kill(-1) or waitpid(-1): that reaches every process and child
    ::kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
  int terminate() {
    BOOST_REQUIRE(pid > 0);
    ::kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
  ~worker_process() {
    if (pid > 0) kill9();
  }
};

/// How many requests `device` completed for `cm` (REQUESTS_SERVED: "DEV:N,DEV:N").
inline uint64_t served_by(CompiledModel& cm, const std::string& device) {
  const auto served = served_counts(cm);
  const auto it = served.find(device);
  return it == served.end() ? 0 : it->second;
}

/// Waits, without a clock, until `cm` serves from exactly `devices` (a state that never comes
/// is CTest's timeout).
inline void wait_serving(CompiledModel& cm, const std::string& devices) {
  while (cm.get_property("EXECUTION_DEVICES").as_string() != devices) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

/// MULTI of `remote` (a node's device) and the local CPU for `model`: the remote device alone
/// serves 10 requests, then both are in the priorities and the CPU serves too (at least the
/// request that measures it: how the rest split depends on timing); every output right.
inline void check_multi_serves_both(Core& client, const std::string& remote, const std::string& model) {
  auto cm = client.compile_model(model, "MULTI:" + remote + ",CPU");
  cm.set_property({{"DEVICE_PRIORITIES", remote}});
  BOOST_TEST(run_many(cm, 10).wrong == 0);
  BOOST_TEST(served_by(cm, remote) == 10u, cm.get_property("REQUESTS_SERVED").as_string());
  cm.set_property({{"DEVICE_PRIORITIES", "CPU," + remote}});
  BOOST_TEST(run_many(cm, 10).wrong == 0);
  BOOST_TEST(served_by(cm, "CPU") >= 1u, cm.get_property("REQUESTS_SERVED").as_string());
  BOOST_TEST(served_by(cm, remote) + served_by(cm, "CPU") == 20u, cm.get_property("REQUESTS_SERVED").as_string());
}

} // namespace troupe::tests
