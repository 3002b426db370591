/// Remote devices over TLS (CAF's OpenSSL layer): a `troupe worker -tls-cert -tls-key -tls-ca`
/// in a child process and client Cores with NODE_TLS_* options. Both sides must show a
/// certificate the other trusts; nothing of the token or the data is readable on the wire;
/// clients without TLS or with a stranger's certificate are refused; bad files are named
/// before CAF loads them; a restarted TLS worker rejoins.
#define BOOST_TEST_MODULE remote_tls_tests
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <unistd.h>

#include "tests/support/add_relu_model.hpp"
#include "tests/support/expect_error.hpp"
#include "benchmarks/link_proxy.hpp"
#include "tests/support/worker_process.hpp"

namespace fs = std::filesystem;
using namespace troupe;
using tests::expect_error;
using tests::run_many;
using tests::worker_process;

namespace {

std::string add_relu_model() { return tests::add_relu_model("remote_tls"); }

/// Certificates made with the openssl command for this process: a CA, a worker and a client
/// certificate signed by it, a stranger's self-signed one, and an encrypted key.
struct pki {
  fs::path dir = fs::temp_directory_path() / ("troupe_tls_" + std::to_string(::getpid()));
  pki() {
    fs::create_directories(dir);
    const std::string d = dir.string();
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    run("openssl req -x509" + ec + " -keyout " + d + "/ca.key -out " + d + "/ca.pem -days 2 -subj /CN=troupe-test-ca");
    for (const char* n : {"worker", "client"}) {
      const std::string p = d + "/" + n;
      run("openssl req" + ec + " -keyout " + p + ".key -out " + p + ".csr -subj /CN=" + n);
      run("openssl x509 -req -in " + p + ".csr -CA " + d + "/ca.pem -CAkey " + d + "/ca.key -CAcreateserial -out " +
          p + ".pem -days 2");
    }
    run("openssl req -x509" + ec + " -keyout " + d + "/stranger.key -out " + d + "/stranger.pem -days 2 -subj /CN=stranger");
    run("openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:prime256v1 -aes256 -pass pass:x -out " + d +
        "/encrypted.key");
    std::ofstream(dir / "not_pem.txt") << "this is not a certificate\n";
  }
  ~pki() { fs::remove_all(dir); }
  static void run(const std::string& cmd) {
    BOOST_REQUIRE_MESSAGE(std::system((cmd + " >/dev/null 2>&1").c_str()) == 0, "failed: " << cmd);
  }
  std::string at(const std::string& name) const { return (dir / name).string(); }
  /// The flags of a worker whose certificate the CA signed, trusting clients the CA signed.
  std::string worker_flags() const {
    return "-tls-cert " + at("worker.pem") + " -tls-key " + at("worker.key") + " -tls-ca " + at("ca.pem");
  }
  /// A client's options with the certificate the CA signed; `more` adds to or overrides them.
  AnyMap client(AnyMap more = {}) const {
    more.emplace("NODE_TLS_CERT", at("client.pem"));
    more.emplace("NODE_TLS_KEY", at("client.key"));
    more.emplace("NODE_TLS_CA", at("ca.pem"));
    return more;
  }
};

const std::string token = "troupe-tls-token-7c1e9a";

/// Runs requests against CPU@`address` through a client with `options`; the proxy's record.
void serve_through(const std::string& address, const AnyMap& options) {
  Core client;
  client.add_node(address, options);
  auto cm = client.compile_model(add_relu_model(), "CPU@" + address);
  const auto o = run_many(cm, 20);
  BOOST_TEST(o.wrong == 0);
  BOOST_TEST(o.errors.empty());
}

} // namespace

BOOST_AUTO_TEST_CASE(a_tls_worker_serves_a_tls_client_and_neither_token_nor_model_is_readable_on_the_wire) {
  pki keys;
  const auto token_file = keys.at("token");
  std::ofstream(token_file) << token << "\n";
  // The control: without TLS the token crosses in clear (so the check below can fail).
  {
    worker_process plain("-token-file " + token_file);
    bench::link_proxy tap(plain.address);
    serve_through(tap.address(), {{"NODE_TOKEN", token}});
    BOOST_TEST(tap.seen().find(token) != std::string::npos);
    BOOST_TEST(tap.seen().find("relu") != std::string::npos); // a node name of the model
  }
  worker_process w("-token-file " + token_file + " " + keys.worker_flags());
  bench::link_proxy tap(w.address);
  serve_through(tap.address(), keys.client({{"NODE_TOKEN", token}}));
  const auto seen = tap.seen();
  BOOST_TEST(seen.size() > 1000u);
  BOOST_TEST(seen.find(token) == std::string::npos);
  BOOST_TEST(seen.find("relu") == std::string::npos);
  w.wait_logged("connected");
}

BOOST_AUTO_TEST_CASE(multi_spreads_over_a_local_device_and_a_tls_node) {
  pki keys;
  worker_process w(keys.worker_flags());
  Core client;
  client.add_node(w.address, keys.client());
  tests::check_multi_serves_both(client, "CPU@" + w.address, add_relu_model());
}

BOOST_AUTO_TEST_CASE(clients_without_tls_or_a_trusted_certificate_are_refused_and_the_worker_serves_on) {
  pki keys;
  worker_process w(keys.worker_flags());
  {
    Core plain;
    expect_error([&] { plain.add_node(w.address, {{"NODE_TIMEOUT_MS", "3000"}}); },
                 {"node " + w.address, "cannot connect", "without TLS"});
  }
  {
    Core stranger; // a certificate no CA the worker trusts has signed
    expect_error(
        [&] {
          stranger.add_node(w.address, {{"NODE_TLS_CERT", keys.at("stranger.pem")},
                                        {"NODE_TLS_KEY", keys.at("stranger.key")},
                                        {"NODE_TIMEOUT_MS", "3000"}});
        },
        {"node " + w.address, "over TLS", "trust"});
  }
  {
    Core distrustful; // the client's certificate is fine, but it trusts only the stranger
    expect_error([&] { distrustful.add_node(w.address, keys.client({{"NODE_TLS_CA", keys.at("stranger.pem")},
                                                                    {"NODE_TIMEOUT_MS", "3000"}})); },
                 {"node " + w.address, "over TLS"});
  }
  serve_through(w.address, keys.client());
  // A TLS client at a worker without TLS is refused too.
  worker_process plain_worker;
  Core client;
  expect_error([&] { client.add_node(plain_worker.address, keys.client({{"NODE_TIMEOUT_MS", "3000"}})); },
               {"node " + plain_worker.address, "over TLS"});
}

BOOST_AUTO_TEST_CASE(one_self_signed_certificate_shared_by_worker_and_client_is_enough) {
  pki keys;
  worker_process w("-tls-cert " + keys.at("stranger.pem") + " -tls-key " + keys.at("stranger.key"));
  serve_through(w.address, {{"NODE_TLS_CERT", keys.at("stranger.pem")}, {"NODE_TLS_KEY", keys.at("stranger.key")}});
}

BOOST_AUTO_TEST_CASE(a_tls_worker_restarted_rejoins_over_tls) {
  pki keys;
  auto first = std::make_unique<worker_process>(keys.worker_flags());
  const std::string address = first->address;
  Core client;
  client.add_node(address, keys.client());
  const std::string remote_cpu = "CPU@" + address;
  auto multi = client.compile_model(add_relu_model(), "MULTI:" + remote_cpu + ",CPU");
  BOOST_TEST(run_many(multi, 8).wrong == 0);
  first->kill9();
  tests::wait_serving(multi, "CPU");
  const auto meanwhile = run_many(multi, 8);
  BOOST_TEST(meanwhile.wrong == 0);
  BOOST_TEST(meanwhile.errors.empty());
  worker_process second(keys.worker_flags(), address);
  tests::wait_serving(multi, remote_cpu + ",CPU");
  multi.set_property({{"DEVICE_PRIORITIES", remote_cpu}});
  const auto before = tests::served_by(multi, remote_cpu);
  const auto o = run_many(multi, 10);
  BOOST_TEST(o.wrong == 0);
  BOOST_TEST(o.errors.empty());
  BOOST_TEST(tests::served_by(multi, remote_cpu) == before + 10);
}

BOOST_AUTO_TEST_CASE(bad_tls_files_and_options_are_refused_naming_file_and_reason) {
  pki keys;
  Core core;
  auto worker_with = [&](const AnyMap& options) { Worker w(core, "127.0.0.1:0", options); };
  expect_error([&] { worker_with({{"NODE_TLS_CERT", keys.at("nothing.pem")}, {"NODE_TLS_KEY", keys.at("worker.key")}}); },
               {"NODE_TLS_CERT", "nothing.pem", "cannot read"});
  expect_error([&] { worker_with({{"NODE_TLS_CERT", keys.at("not_pem.txt")}, {"NODE_TLS_KEY", keys.at("worker.key")}}); },
               {"NODE_TLS_CERT", "not_pem.txt", "not a PEM certificate"});
  expect_error([&] { worker_with({{"NODE_TLS_CERT", keys.at("worker.pem")}, {"NODE_TLS_KEY", keys.at("client.key")}}); },
               {"NODE_TLS_KEY", "client.key", "not the key of certificate", "worker.pem"});
  expect_error([&] { worker_with({{"NODE_TLS_CERT", keys.at("worker.pem")}, {"NODE_TLS_KEY", keys.at("encrypted.key")}}); },
               {"NODE_TLS_KEY", "encrypted.key", "unencrypted"});
  expect_error([&] { worker_with({{"NODE_TLS_CERT", keys.at("worker.pem")}}); }, {"NODE_TLS_KEY", "no key"});
  expect_error([&] { worker_with({{"NODE_TLS_CERT", keys.at("worker.pem")}, {"NODE_TLS_KEY", keys.at("worker.key")},
                                  {"NODE_TLS_CA", keys.at("not_pem.txt")}}); },
               {"NODE_TLS_CA", "not_pem.txt"});
  expect_error([&] { core.add_node("127.0.0.1:1", {{"NODE_TLS_KEY", keys.at("client.key")}}); },
               {"node 127.0.0.1:1", "NODE_TLS_CERT"});
  // One TLS identity per Core (CAF keeps it per actor system): a second one is refused.
  worker_process w(keys.worker_flags());
  core.add_node(w.address, keys.client());
  worker_process other(keys.worker_flags());
  expect_error([&] { core.add_node(other.address, {{"NODE_TLS_CERT", keys.at("stranger.pem")},
                                                   {"NODE_TLS_KEY", keys.at("stranger.key")}}); },
               {"already uses certificate", "client.pem", "stranger.pem", "one per Core"});
  // The same identity again is fine.
  core.add_node(other.address, keys.client());
  auto cm = core.compile_model(add_relu_model(), "MULTI:CPU@" + w.address + ",CPU@" + other.address);
  BOOST_TEST(run_many(cm, 10).wrong == 0);
}
