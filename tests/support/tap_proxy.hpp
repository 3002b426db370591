#pragma once
/// A TCP proxy on loopback that forwards every connection to a target and keeps a copy of
/// every byte, both ways: lets a test see what crosses the wire (a token in clear, or not).
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace troupe::tests {

class tap_proxy {
public:
  /// Forwards to `target` ("host:port", IPv4).
  explicit tap_proxy(const std::string& target) {
    const auto colon = target.rfind(':');
    to_.sin_family = AF_INET;
    to_.sin_port = htons(static_cast<uint16_t>(std::stoi(target.substr(colon + 1))));
    BOOST_REQUIRE(inet_pton(AF_INET, target.substr(0, colon).c_str(), &to_.sin_addr) == 1);
    listen_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(bind(listen_, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    BOOST_REQUIRE(::listen(listen_, 16) == 0);
    socklen_t len = sizeof at;
    getsockname(listen_, reinterpret_cast<sockaddr*>(&at), &len);
    address_ = "127.0.0.1:" + std::to_string(ntohs(at.sin_port));
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~tap_proxy() {
    shutdown(listen_, SHUT_RDWR); // ends accept()
    acceptor_.join();
    close(listen_);
  }
  tap_proxy(const tap_proxy&) = delete;
  tap_proxy& operator=(const tap_proxy&) = delete;

  /// Where clients connect.
  const std::string& address() const { return address_; }
  /// Every byte forwarded so far, both directions, in arrival order.
  std::string seen() const {
    std::lock_guard lock(shared_->m);
    return shared_->bytes;
  }

private:
  struct shared {
    mutable std::mutex m;
    std::string bytes;
  };
  /// Copies `from` to `to` until either closes; then closes both directions of both. Runs
  /// detached with the record shared, so it may outlive the proxy.
  static void pump(int from, int to, std::shared_ptr<shared> rec) {
    char buf[4096];
    for (ssize_t n; (n = read(from, buf, sizeof buf)) > 0;) {
      {
        std::lock_guard lock(rec->m);
        rec->bytes.append(buf, static_cast<std::size_t>(n));
      }
      // MSG_NOSIGNAL: a peer that has gone must not raise SIGPIPE, which ends the test process.
      if (send(to, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) break;
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
      // Each direction's thread closes its reading end; the pair's last one closes both.
      auto closer = std::shared_ptr<void>(nullptr, [client, server](void*) {
        close(client);
        close(server);
      });
      std::thread([=, rec = shared_] { pump(client, server, rec); (void)closer; }).detach();
      std::thread([=, rec = shared_] { pump(server, client, rec); (void)closer; }).detach();
    }
  }

  sockaddr_in to_{};
  int listen_ = -1;
  std::string address_;
  std::shared_ptr<shared> shared_ = std::make_shared<shared>();
  std::thread acceptor_;
};

} // namespace troupe::tests
