#pragma once
/// The flags every troupe command takes for remote devices: -nodes host:port,...,
/// -node_token_file F and -node_tls_cert/-node_tls_key/-node_tls_ca F, the same as the
/// TROUPE_NODES, TROUPE_NODE_TOKEN_FILE and TROUPE_NODE_TLS_* variables (which every Core reads).
#include <string>

namespace troupe::cli {

/// Takes those flags out of argv (any command, any position) and sets the
/// variables they stand for. A usage_error when one lacks its value.
void take_node_flags(int& argc, char** argv);

/// The token in file `path` (its first line): an Exception naming the file when unreadable or empty.
std::string read_token_file(const std::string& path);

} // namespace troupe::cli
