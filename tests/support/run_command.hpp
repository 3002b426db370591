#pragma once
/// Runs a shell command and reads its standard output to the end, as the tests of the
/// command-line tool and the examples do.
#include <array>
#include <cstdio>
#include <optional>
#include <string>

#include <sys/wait.h>

namespace troupe::tests {

struct command_result {
  int code = -1; ///< the exit status; -1 when the command did not exit normally
  std::string out;
};

/// `cmd` through the shell (popen); nullopt when the shell cannot be started.
inline std::optional<command_result> run_command(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return std::nullopt;
  command_result r;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

} // namespace troupe::tests
