#pragma once
/// TLS to worker nodes: the certificate, key and CA files a Core or Worker is given, checked
/// with OpenSSL before CAF sees them (CAF 0.17 throws from its network thread on a file it
/// cannot load, which ends the process).
#include <string>

#include <troupe/any.hpp>

namespace troupe {

struct tls_files {
  std::string cert, key, ca; ///< absolute paths; all empty: no TLS
  bool on() const { return !cert.empty(); }
};

/// NODE_TLS_CERT, NODE_TLS_KEY and NODE_TLS_CA from `options` (`what` names the caller in
/// errors). None: no TLS. Certificate and key come together; the CA defaults to the
/// certificate (one self-signed certificate shared by every machine). Each file must be
/// readable PEM, the key unencrypted and matching the certificate, the certificate not expired.
tls_files tls_from_options(const AnyMap& options, const std::string& what);

/// The TLS option names, for "unknown option" messages and checks.
bool is_tls_option(const std::string& name);

} // namespace troupe
