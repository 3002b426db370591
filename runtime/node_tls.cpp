#include "runtime/node_tls.hpp"

#include <filesystem>
#include <fstream>
#include <memory>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <troupe/exception.hpp>

namespace troupe {

namespace {

/// OpenSSL's reason for the last failure, and its error queue emptied.
std::string openssl_reason() {
  std::string why;
  while (const unsigned long e = ERR_get_error()) {
    if (!why.empty()) why += "; ";
    const char* r = ERR_reason_error_string(e);
    why += r ? r : "error " + std::to_string(e);
  }
  return why.empty() ? "unknown reason" : why;
}

std::string absolute_readable(const std::string& what, const std::string& option, const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Exception(what + ": " + option + " '" + path + "': cannot read the file");
  return std::filesystem::absolute(path).string();
}

/// Refuses a passphrase prompt: an encrypted key would make OpenSSL (and CAF) ask on stdin.
int no_passphrase(char*, int, int, void*) { return -1; }

using ssl_ctx = std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>;

ssl_ctx make_context(const std::string& what) {
  ssl_ctx ctx(SSL_CTX_new(TLS_method()), SSL_CTX_free);
  if (!ctx) throw Exception(what + ": TLS: OpenSSL cannot make a context: " + openssl_reason());
  SSL_CTX_set_default_passwd_cb(ctx.get(), no_passphrase);
  return ctx;
}

void check_with_openssl(const std::string& what, const tls_files& t) {
  ERR_clear_error();
  // The key alone first: OpenSSL checks a key against the certificate when both are loaded,
  // and a key that is no key deserves its own message.
  if (SSL_CTX_use_PrivateKey_file(make_context(what).get(), t.key.c_str(), SSL_FILETYPE_PEM) != 1)
    throw Exception(what + ": NODE_TLS_KEY '" + t.key + "' is not an unencrypted PEM private key: " + openssl_reason());
  auto ctx = make_context(what);
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), t.cert.c_str()) != 1)
    throw Exception(what + ": NODE_TLS_CERT '" + t.cert + "' is not a PEM certificate: " + openssl_reason());
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), t.key.c_str(), SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx.get()) != 1)
    throw Exception(what + ": NODE_TLS_KEY '" + t.key + "' is not the key of certificate '" + t.cert +
                    "': " + openssl_reason());
  if (X509* c = SSL_CTX_get0_certificate(ctx.get())) {
    if (X509_cmp_current_time(X509_get0_notAfter(c)) < 0)
      throw Exception(what + ": NODE_TLS_CERT '" + t.cert + "' has expired");
    if (X509_cmp_current_time(X509_get0_notBefore(c)) > 0)
      throw Exception(what + ": NODE_TLS_CERT '" + t.cert + "' is not valid yet");
  }
  if (SSL_CTX_load_verify_locations(ctx.get(), t.ca.c_str(), nullptr) != 1)
    throw Exception(what + ": NODE_TLS_CA '" + t.ca + "' holds no PEM CA certificate: " + openssl_reason());
}

} // namespace

bool is_tls_option(const std::string& name) {
  return name == "NODE_TLS_CERT" || name == "NODE_TLS_KEY" || name == "NODE_TLS_CA";
}

tls_files tls_from_options(const AnyMap& options, const std::string& what) {
  auto get = [&](const char* name) {
    auto it = options.find(name);
    return it == options.end() ? std::string() : it->second.as_string();
  };
  const auto cert = get("NODE_TLS_CERT"), key = get("NODE_TLS_KEY"), ca = get("NODE_TLS_CA");
  if (cert.empty() && key.empty() && ca.empty()) return {};
  if (cert.empty() || key.empty())
    throw Exception(what + ": TLS needs both NODE_TLS_CERT and NODE_TLS_KEY (" +
                    (cert.empty() ? "no certificate" : "no key") + " given)");
  tls_files t;
  t.cert = absolute_readable(what, "NODE_TLS_CERT", cert);
  t.key = absolute_readable(what, "NODE_TLS_KEY", key);
  t.ca = ca.empty() ? t.cert : absolute_readable(what, "NODE_TLS_CA", ca);
  check_with_openssl(what, t);
  return t;
}

} // namespace troupe
