#pragma once
/// A troupe worker: this machine's devices, served to clients on other machines that add it
/// with Core::add_node (the `troupe worker` command). troupe's own: OpenVINO and onnxruntime
/// have no remote devices.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <troupe/any.hpp>
#include <troupe/core.hpp>
#include <troupe/export.hpp>

namespace troupe {

class TROUPE_API Worker {
public:
  /// Publishes `core`'s devices at `listen` ("host:port"; port 0 picks a free one; host
  /// 127.0.0.1 serves this machine only). Options: NODE_TOKEN (clients must give it),
  /// NODE_MAX_MODEL_BYTES and NODE_MAX_REQUEST_BYTES (larger ones are refused; 2 GiB and
  /// 1 GiB by default), NODE_TLS_CERT, NODE_TLS_KEY and NODE_TLS_CA (PEM files: only TLS
  /// clients whose certificate the CA signed; the CA defaults to the certificate).
  /// `log` gets one line per connect, disconnect, refusal and rejected
  /// message. `core` must outlive the Worker.
  Worker(Core& core, const std::string& listen, const AnyMap& options = {},
         std::function<void(const std::string&)> log = {});
  ~Worker(); ///< stops listening; requests in flight are dropped (drain() first)
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// "host:port" it listens at (the port it got, when 0 was asked).
  std::string address() const;
  /// The devices it serves, as clients name them before "@host:port".
  std::vector<std::string> devices() const;
  /// Requests running now, and served so far.
  int64_t in_flight() const;
  uint64_t served() const;
  /// Stops taking new clients and waits until no request runs.
  void drain();

  struct TROUPE_INTERNAL Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace troupe
