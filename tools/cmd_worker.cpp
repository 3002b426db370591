/// troupe worker: serves this machine's devices to troupe clients on other machines
/// (Core::add_node, TROUPE_NODES, -nodes). Stops on SIGTERM or SIGINT after the requests in
/// flight have finished.
#include <csignal>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <pthread.h>

#include <troupe/troupe.hpp>

#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/node_flags.hpp"

namespace troupe::cli {

int cmd_worker(int argc, char** argv) {
  const auto a = parse_args(argc, argv, 2,
                            {{"-listen", "HOST:PORT (port 0: any free one)"},
                             {"-token-file", "a file whose first line is the token clients must give"},
                             {"-insecure", ""}, // listen beyond loopback without a token, knowingly
                             {"-max-model-bytes", "the largest model a client may send (default 2 GiB)"},
                             {"-max-request-bytes", "the largest inputs one request may bring (default 1 GiB)"},
                             {"-tls-cert", "TLS: this worker's PEM certificate (clients must trust it)"},
                             {"-tls-key", "TLS: its unencrypted PEM private key"},
                             {"-tls-ca", "TLS: the CA certificates clients' certificates must be signed by (default: -tls-cert)"}});
  // Signals are taken by this thread alone (sigwait below): block them before any thread starts.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  AnyMap options;
  if (a.has("-token-file")) options["NODE_TOKEN"] = read_token_file(a.get("-token-file"));
  if (a.on("-insecure")) options["NODE_INSECURE"] = std::string("YES");
  if (a.has("-max-model-bytes")) options["NODE_MAX_MODEL_BYTES"] = a.get("-max-model-bytes");
  if (a.has("-max-request-bytes")) options["NODE_MAX_REQUEST_BYTES"] = a.get("-max-request-bytes");
  if (a.has("-tls-cert")) options["NODE_TLS_CERT"] = a.get("-tls-cert");
  if (a.has("-tls-key")) options["NODE_TLS_KEY"] = a.get("-tls-key");
  if (a.has("-tls-ca")) options["NODE_TLS_CA"] = a.get("-tls-ca");
  std::mutex out;
  auto log = [&out](const std::string& line) {
    std::lock_guard lock(out);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  Core core;
  Worker worker(core, a.get("-listen", "127.0.0.1:7000"), options, log);
  std::string devices;
  for (const auto& d : worker.devices()) devices += (devices.empty() ? "" : ", ") + d;
  log("listening on " + worker.address() + ", devices: " + devices);
  if (a.has("-tls-cert"))
    log("TLS: certificate " + a.get("-tls-cert") + "; clients need a certificate signed by " +
        a.get("-tls-ca", a.get("-tls-cert")));
  int sig = 0;
  sigwait(&stop, &sig);
  log(std::string("stopping (") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + "): draining " +
      std::to_string(worker.in_flight()) + " requests in flight");
  worker.drain();
  log("stopped after serving " + std::to_string(worker.served()) + " requests");
  return 0;
}

} // namespace troupe::cli
