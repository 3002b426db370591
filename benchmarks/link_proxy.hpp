#pragma once
/// A TCP proxy on loopback in front of a worker: forwards every connection to its target, can
/// keep a copy of every byte (what crosses the wire: a token in clear, or not), and can hold
/// each chunk back for a delay each way, and "lose" a share of chunks the way TCP shows a lost
/// segment to the application: one retransmission timeout (200 ms) late, holding back what
/// follows (a slow, lossy link where tc netem is not to be had). Used by the tests
/// (remote_tests_delayed, the TLS tap) and troupe_soak (one worker's link).
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace troupe::bench {

class link_proxy {
public:
  /// Forwards to `target` ("host:port", IPv4), each chunk `delay` late in each direction, and
  /// `loss_percent` of them 200 ms later still (a seeded draw: the same run each time).
  /// `keep_bytes`: whether seen() has them (a long run's memory would grow with every byte).
  explicit link_proxy(const std::string& target, std::chrono::milliseconds delay = {}, double loss_percent = 0,
                      bool keep_bytes = true)
      : target_(target), delay_(delay), loss_percent_(loss_percent), keep_bytes_(keep_bytes) {
    const auto colon = target.rfind(':');
    to_.sin_family = AF_INET;
    to_.sin_port = htons(static_cast<uint16_t>(std::stoi(target.substr(colon + 1))));
    if (colon == std::string::npos || inet_pton(AF_INET, target.substr(0, colon).c_str(), &to_.sin_addr) != 1)
      throw std::runtime_error("link_proxy: '" + target + "' is not an IPv4 host:port");
    listen_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (listen_ < 0 || bind(listen_, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 || ::listen(listen_, 16) != 0) {
      if (listen_ >= 0) close(listen_);
      throw std::runtime_error("link_proxy: cannot listen on loopback");
    }
    socklen_t len = sizeof at;
    getsockname(listen_, reinterpret_cast<sockaddr*>(&at), &len);
    address_ = "127.0.0.1:" + std::to_string(ntohs(at.sin_port));
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~link_proxy() {
    shutdown(listen_, SHUT_RDWR); // ends accept()
    acceptor_.join();
    close(listen_);
  }
  link_proxy(const link_proxy&) = delete;
  link_proxy& operator=(const link_proxy&) = delete;

  /// Where clients connect.
  const std::string& address() const { return address_; }
  /// Where it forwards to.
  const std::string& target() const { return target_; }
  /// Every byte forwarded so far, both directions, in arrival order (none unless keep_bytes).
  std::string seen() const {
    std::lock_guard lock(record_->m);
    return record_->bytes;
  }

private:
  struct record {
    explicit record(bool k) : keep(k) {}
    mutable std::mutex m;
    std::string bytes;
    const bool keep;
  };
  using clock = std::chrono::steady_clock;
  /// Whether chunks wait in a lane for a writer thread (a delay or losses), or go straight on.
  static bool holds(std::chrono::milliseconds delay, double loss_percent) { return delay.count() > 0 || loss_percent > 0; }
  /// One direction of one connection: chunks read, each sent once its time has come.
  struct lane {
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::pair<clock::time_point, std::string>> chunks;
    bool ended = false;
  };
  /// Reads `from` until it closes, recording and queueing (or, without delay, sending) each chunk.
  static void read_side(int from, int to, std::chrono::milliseconds delay, double loss_percent, std::shared_ptr<lane> l,
                        std::shared_ptr<record> rec) {
    char buf[16384];
    uint64_t draw = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(from); // xorshift: one seeded stream per lane
    const bool held = holds(delay, loss_percent); // else sent here at once
    for (ssize_t n; (n = read(from, buf, sizeof buf)) > 0;) {
      if (rec->keep) {
        std::lock_guard lock(rec->m);
        rec->bytes.append(buf, static_cast<std::size_t>(n));
      }
      if (!held) {
        // MSG_NOSIGNAL: a peer that has gone must not raise SIGPIPE, which ends the test process.
        if (send(to, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) break;
        continue;
      }
      draw ^= draw << 13;
      draw ^= draw >> 7;
      draw ^= draw << 17;
      const bool lost = static_cast<double>(draw % 10000) < loss_percent * 100;
      std::lock_guard lock(l->m);
      l->chunks.emplace_back(clock::now() + delay + (lost ? std::chrono::milliseconds(200) : std::chrono::milliseconds(0)),
                             std::string(buf, static_cast<std::size_t>(n)));
      l->cv.notify_one();
    }
    {
      std::lock_guard lock(l->m);
      l->ended = true;
      l->cv.notify_one();
    }
    if (!held) {
      shutdown(from, SHUT_RDWR);
      shutdown(to, SHUT_RDWR);
    }
  }
  /// Sends the queued chunks of `l` to `to` on time; once the reading side has ended and all
  /// is sent, closes both directions of both sockets.
  static void write_side(int from, int to, std::shared_ptr<lane> l) {
    std::unique_lock lock(l->m);
    while (true) {
      l->cv.wait(lock, [&] { return l->ended || !l->chunks.empty(); });
      if (l->chunks.empty()) break;
      auto [due, bytes] = std::move(l->chunks.front());
      l->chunks.pop_front();
      lock.unlock();
      std::this_thread::sleep_until(due);
      const bool ok = send(to, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
      lock.lock();
      if (!ok) break;
    }
    shutdown(from, SHUT_RDWR);
    shutdown(to, SHUT_RDWR);
  }
  void accept_loop() {
    for (int client; (client = accept(listen_, nullptr, nullptr)) >= 0;) {
      const int server = socket(AF_INET, SOCK_STREAM, 0);
      if (connect(server, reinterpret_cast<const sockaddr*>(&to_), sizeof to_) != 0) {
        close(server);
        close(client);
        continue;
      }
      // The threads of a connection share `closer`; the last one to end closes both sockets.
      auto closer = std::shared_ptr<void>(nullptr, [client, server](void*) {
        close(client);
        close(server);
      });
      for (auto [from, to] : {std::pair{client, server}, std::pair{server, client}}) {
        auto l = std::make_shared<lane>();
        std::thread([=, d = delay_, p = loss_percent_, rec = record_] { read_side(from, to, d, p, l, rec); (void)closer; }).detach();
        if (holds(delay_, loss_percent_)) std::thread([=] { write_side(from, to, l); (void)closer; }).detach();
      }
    }
  }

  std::string target_;
  std::chrono::milliseconds delay_;
  double loss_percent_;
  bool keep_bytes_;
  sockaddr_in to_{};
  int listen_ = -1;
  std::string address_;
  std::shared_ptr<record> record_ = std::make_shared<record>(keep_bytes_);
  std::thread acceptor_;
};

} // namespace troupe::bench
