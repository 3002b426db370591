#include "runtime/basp_gate.hpp"

#include <troupe/exception.hpp>

#include "base/rate_limited_log.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace troupe {

namespace {

using gate_clock = std::chrono::steady_clock;
constexpr std::size_t header_size = 32;
/// Bytes a link queues towards one side before it stops reading from the other.
constexpr std::size_t queue_cap = std::size_t(1) << 20;

void nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

std::string peer_of(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    getnameinfo(reinterpret_cast<sockaddr*>(&a), len, host, sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV);
  return std::string(host) + ":" + port;
}

/// Bytes on their way to one socket: written from `pos` on, so that a large frame leaving in
/// many partial writes is not moved down the buffer after each.
struct byte_queue {
  std::string data;
  std::size_t pos = 0;
  std::size_t size() const { return data.size() - pos; }
  bool empty() const { return size() == 0; }
  void append(const char* p, std::size_t n) {
    if (pos > 0 && pos == data.size()) data.clear(), pos = 0;
    data.append(p, n);
  }
  void append(std::string&& s) {
    if (empty()) data = std::move(s), pos = 0;
    else data.append(s);
  }
};

/// One client's connection and its twin to CAF's port.
struct link {
  int client = -1, inner = -1;
  std::string peer, host; ///< "HOST:PORT", and HOST alone
  byte_queue to_inner, to_client; ///< bytes read from one side, not yet written to the other
  unsigned char header[header_size] = {};
  std::size_t header_got = 0;
  uint64_t payload_left = 0;
  bool holding = false;
  std::string held; ///< a large frame, header first, until all of it has arrived
  bool first_frame = false;
  bool client_eof = false, inner_eof = false;
  gate_clock::time_point opened = gate_clock::now(), heard = opened;

  /// The client's bytes as frames; "" or why the connection must close.
  std::string feed(const char* p, std::size_t n, const basp_gate_limits& lim) {
    while (n > 0) {
      if (header_got < header_size) {
        const std::size_t take = std::min(header_size - header_got, n);
        std::memcpy(header + header_got, p, take);
        header_got += take, p += take, n -= take;
        if (header_got < header_size) break;
        const uint64_t len = (uint64_t(header[4]) << 24) | (uint64_t(header[5]) << 16) | (uint64_t(header[6]) << 8) | header[7];
        if (len > lim.max_frame)
          return "a frame of " + std::to_string(len) + " bytes (the limit is " + std::to_string(lim.max_frame) + ")";
        payload_left = len;
        holding = len > lim.stream_frame;
        if (holding) held.assign(reinterpret_cast<const char*>(header), header_size);
        else to_inner.append(reinterpret_cast<const char*>(header), header_size);
      } else {
        const std::size_t take = static_cast<std::size_t>(std::min<uint64_t>(payload_left, n));
        if (holding) held.append(p, take);
        else to_inner.append(p, take);
        payload_left -= take, p += take, n -= take;
      }
      if (header_got == header_size && payload_left == 0) { // a whole frame
        if (holding) {
          to_inner.append(std::move(held));
          std::string().swap(held);
          holding = false;
        }
        header_got = 0;
        first_frame = true;
      }
    }
    return {};
  }
};

/// Writes what it can of `q` to `fd`; false when the socket failed.
bool flush(int fd, byte_queue& q) {
  while (!q.empty()) {
    const ssize_t w = ::send(fd, q.data.data() + q.pos, q.size(), MSG_NOSIGNAL);
    if (w < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    q.pos += std::min(static_cast<std::size_t>(w), q.size());
  }
  if (q.data.capacity() > queue_cap) std::string().swap(q.data); // a large frame's bytes go back at once
  else q.data.clear();
  q.pos = 0;
  return true;
}

/// Reads what is there from `fd` into `q`; false at the end of the stream or on an error.
template <class Q> bool fill(int fd, Q& q, std::size_t cap) {
  char buf[65536];
  while (q.size() < cap) {
    const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
    if (r == 0) return false;
    if (r < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    q.append(buf, static_cast<std::size_t>(r));
  }
  return true;
}

} // namespace

struct basp_gate::state {
  basp_gate_limits lim;
  std::unique_ptr<rate_limited_log> log; ///< by client host: a flood of connections is not one of lines
  int listener = -1;
  int wake[2] = {-1, -1};
  uint16_t port = 0, inner_port = 0;
  std::atomic<bool> stopping{false}, accepting{true};
  std::list<link> links;
  std::thread thread;

  void say(const std::string& host, const std::string& line) { (*log)("connections from " + host, line); }

  void close_link(std::list<link>::iterator it, const std::string& why) {
    if (!why.empty()) say(it->host, "closed the connection from " + it->peer + ": " + why);
    ::close(it->client);
    if (it->inner >= 0) ::close(it->inner);
    links.erase(it);
  }

  /// The oldest link that has not sent a whole first frame (of `host`, or any when empty).
  std::list<link>::iterator oldest_silent(const std::string& host) {
    for (auto it = links.begin(); it != links.end(); ++it) // in the order they were opened
      if (!it->first_frame && (host.empty() || it->host == host)) return it;
    return links.end();
  }

  /// Takes a new connection. Where its host, or the gate, is full, the oldest connection that
  /// never sent a handshake makes room (a flood of silent connections cannot lock a client
  /// out); where every one has, the new one is refused.
  void accept_one() {
    const int c = ::accept(listener, nullptr, nullptr);
    if (c < 0) return;
    const std::string peer = peer_of(c), host = peer.substr(0, peer.rfind(':'));
    const auto of_host = static_cast<std::size_t>(
        std::count_if(links.begin(), links.end(), [&](const link& l) { return l.host == host; }));
    const bool host_full = of_host >= lim.max_per_host, full = links.size() >= lim.max_connections;
    if (host_full || full) {
      const auto room = oldest_silent(host_full ? host : std::string());
      if (room == links.end()) {
        say(host, "refused a connection from " + peer + ": " +
                      (host_full ? std::to_string(lim.max_per_host) + " from " + host : std::to_string(lim.max_connections)) +
                      " are open and have sent their handshake");
        ::close(c);
        return;
      }
      close_link(room, "no handshake yet, and a new connection needed its place");
    }
    const int in = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(inner_port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (in < 0 || ::connect(in, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      say(host, "could not pass the connection from " + peer + " on: " + std::strerror(errno));
      if (in >= 0) ::close(in);
      ::close(c);
      return;
    }
    const int one = 1;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(in, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    nonblocking(c);
    nonblocking(in);
    link l;
    l.client = c, l.inner = in, l.peer = peer, l.host = host;
    links.push_back(std::move(l));
  }

  void run() {
    std::vector<pollfd> fds;
    while (!stopping) {
      if (!accepting && listener >= 0) {
        ::close(listener);
        listener = -1;
      }
      fds.clear();
      fds.push_back({wake[0], POLLIN, 0});
      fds.push_back({listener, static_cast<short>(listener >= 0 ? POLLIN : 0), 0});
      for (const auto& l : links) {
        short c = 0, i = 0;
        if (!l.client_eof && l.to_inner.size() < queue_cap) c |= POLLIN;
        if (!l.to_client.empty()) c |= POLLOUT;
        if (!l.inner_eof && l.to_client.size() < queue_cap) i |= POLLIN;
        if (!l.to_inner.empty()) i |= POLLOUT;
        fds.push_back({l.client, c, 0});
        fds.push_back({l.inner, i, 0});
      }
      if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) break;
      if (fds[0].revents) {
        char b[64];
        while (::read(wake[0], b, sizeof b) > 0) {
        }
      }
      // Links first (their pollfds follow in order), then new connections.
      const auto now = gate_clock::now();
      std::size_t k = 2;
      for (auto it = links.begin(); it != links.end(); k += 2) {
        auto& l = *it;
        const auto cr = fds[k].revents, ir = fds[k + 1].revents;
        std::string why;
        if (cr & (POLLIN | POLLHUP | POLLERR)) {
          std::string got;
          if (!fill(l.client, got, queue_cap)) l.client_eof = true;
          if (!got.empty()) {
            l.heard = now;
            why = l.feed(got.data(), got.size(), lim);
          }
        }
        if (why.empty() && (ir & (POLLIN | POLLHUP | POLLERR)) && !fill(l.inner, l.to_client, queue_cap)) l.inner_eof = true;
        const bool broken = why.empty() && (!flush(l.inner, l.to_inner) || !flush(l.client, l.to_client));
        if (why.empty() && !l.first_frame && now - l.opened > lim.handshake_timeout)
          why = "no handshake within " + std::to_string(lim.handshake_timeout.count()) + " ms";
        if (why.empty() && now - l.heard > lim.idle_timeout)
          why = "silent for " + std::to_string(lim.idle_timeout.count()) + " ms";
        const bool done = (l.client_eof && l.to_inner.empty()) || (l.inner_eof && l.to_client.empty());
        if (!why.empty() || broken || done) {
          const auto next = std::next(it);
          close_link(it, why);
          it = next;
        } else {
          ++it;
        }
      }
      if (listener >= 0 && (fds[1].revents & POLLIN)) accept_one();
    }
    while (!links.empty()) close_link(links.begin(), {});
    if (listener >= 0) ::close(listener);
  }
};

basp_gate::basp_gate(const std::string& host, uint16_t port, uint16_t inner_port, basp_gate_limits limits,
                     std::function<void(const std::string&)> log)
    : s_(std::make_unique<state>()) {
  s_->lim = limits;
  s_->log = std::make_unique<rate_limited_log>(std::move(log));
  s_->inner_port = inner_port;
  std::string h = host;
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string where = host + ":" + std::to_string(port);
  if (const int e = getaddrinfo(h.c_str(), std::to_string(port).c_str(), &hints, &res); e != 0)
    throw Exception("cannot listen at " + where + ": " + gai_strerror(e));
  std::string error = "no address";
  for (auto* a = res; a && s_->listener < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      s_->listener = fd;
    } else {
      error = std::strerror(errno);
      ::close(fd);
    }
  }
  freeaddrinfo(res);
  if (s_->listener < 0) throw Exception("cannot listen at " + where + ": " + error);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(s_->listener, reinterpret_cast<sockaddr*>(&bound), &len);
  s_->port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  nonblocking(s_->listener);
  if (::pipe(s_->wake) != 0) {
    ::close(s_->listener);
    throw Exception("cannot listen at " + where + ": pipe failed");
  }
  nonblocking(s_->wake[0]);
  s_->thread = std::thread([s = s_.get()] { s->run(); });
}

basp_gate::~basp_gate() {
  s_->stopping = true;
  [[maybe_unused]] auto w = ::write(s_->wake[1], "x", 1);
  s_->thread.join();
  ::close(s_->wake[0]);
  ::close(s_->wake[1]);
}

uint16_t basp_gate::port() const { return s_->port; }

void basp_gate::stop_accepting() {
  s_->accepting = false;
  [[maybe_unused]] auto w = ::write(s_->wake[1], "x", 1);
}

} // namespace troupe
