#pragma once
/// The front door of a worker's plain-TCP port. CAF 0.17's BASP broker trusts every frame
/// header it reads: a client that connects and sends a header claiming a 2 GiB payload makes
/// the worker allocate 2 GiB before it has authenticated (or sent those bytes), and a
/// connection that never sends its handshake stays open forever. The gate listens where the
/// worker was asked to and relays each connection to CAF's port on loopback, reading the
/// client's byte stream as BASP frames (a 32-byte header whose bytes 4..7 give the payload
/// length, big-endian) on the way:
///   - a frame over `max_frame` bytes closes the connection, logged;
///   - a frame over `stream_frame` bytes is held in the gate until all of it has arrived and
///     only then passed on: what the worker holds for a client is what the client has sent;
///   - a connection that has not sent a whole first frame within `handshake_timeout`, or that
///     sends nothing for `idle_timeout` (troupe's clients send CAF heartbeats every 100 ms), is
///     closed, logged;
///   - at most `max_connections` at once, and `max_per_host` from one client host: past either,
///     the oldest connection that has not sent a whole first frame makes room (a flood of
///     silent connections cannot lock clients out), or, when every one has, the new one is
///     closed at once, logged;
///   - its log lines are limited per client host (base/rate_limited_log.hpp).
/// Each connection is its own relay: one client flooding frames waits on its own sockets only.
/// TLS ports need no gate: their clients must hold a certificate the worker's CA signed
/// before any BASP byte is read.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace troupe {

struct basp_gate_limits {
  std::size_t max_frame = std::size_t(2) << 30;
  std::size_t stream_frame = std::size_t(64) << 10;
  std::chrono::milliseconds handshake_timeout{10000};
  std::chrono::milliseconds idle_timeout{30000};
  std::size_t max_connections = 256;
  std::size_t max_per_host = 64;
};

class basp_gate {
public:
  /// Listens at host:port (port 0: any free one) and relays to 127.0.0.1:inner_port. An
  /// Exception naming the address when it cannot listen.
  basp_gate(const std::string& host, uint16_t port, uint16_t inner_port, basp_gate_limits limits,
            std::function<void(const std::string&)> log);
  ~basp_gate(); ///< closes the port and every connection
  basp_gate(const basp_gate&) = delete;
  basp_gate& operator=(const basp_gate&) = delete;

  uint16_t port() const;
  /// Takes no new connection; the open ones go on (their requests' replies still flow).
  void stop_accepting();

private:
  struct state;
  std::unique_ptr<state> s_;
};

} // namespace troupe
