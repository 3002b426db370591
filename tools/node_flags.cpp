#include "tools/node_flags.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>

#include <troupe/exception.hpp>

#include "tools/args.hpp"

namespace troupe::cli {

void take_node_flags(int& argc, char** argv) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0) a = a.substr(1);
    std::string name = a, value;
    const auto eq = a.find('=');
    if (eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
    }
    const char* var = name == "-nodes"            ? "TROUPE_NODES"
                      : name == "-node_token_file" ? "TROUPE_NODE_TOKEN_FILE"
                      : name == "-node_tls_cert"   ? "TROUPE_NODE_TLS_CERT"
                      : name == "-node_tls_key"    ? "TROUPE_NODE_TLS_KEY"
                      : name == "-node_tls_ca"     ? "TROUPE_NODE_TLS_CA"
                                                   : nullptr;
    if (!var) {
      argv[out++] = argv[i];
      continue;
    }
    if (eq == std::string::npos) {
      if (i + 1 >= argc) throw usage_error(name + " needs a value");
      value = argv[++i];
    }
    setenv(var, value.c_str(), 1);
  }
  argc = out;
  argv[argc] = nullptr;
}

std::string read_token_file(const std::string& path) {
  std::ifstream f(path);
  std::string token;
  if (!f || !std::getline(f, token)) throw Exception("token file " + path + ": cannot read it");
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) throw Exception("token file " + path + ": its first line is empty");
  return token;
}

} // namespace troupe::cli
