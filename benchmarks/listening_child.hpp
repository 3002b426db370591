#pragma once
/// A child process whose first stdout line says where it listens ("listening on H:P, ..."), as
/// `troupe worker` does: started, killed, restarted at the same address; the rest of its log is
/// drained in the background so that it never blocks on the pipe (kept in $TROUPE_CHILD_LOG
/// where that is set).
#include <troupe/exception.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace troupe::bench {

struct listening_child {
  pid_t pid = -1;
  std::string address;

  explicit listening_child(const std::vector<std::string>& argv) { start(argv); }
  listening_child(const listening_child&) = delete;
  listening_child& operator=(const listening_child&) = delete;
  ~listening_child() { stop(); }

  void start(const std::vector<std::string>& argv) {
    // Made before fork: the child of a threaded process may only call async-signal-safe
    // functions (no malloc) until it execs.
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int out[2];
    if (pipe(out) != 0) throw Exception("pipe failed");
    pid = fork();
    if (pid < 0) throw Exception("fork failed");
    if (pid == 0) {
      dup2(out[1], 1);
      close(out[0]);
      execv(args[0], args.data());
      _exit(127);
    }
    close(out[1]);
    std::string line;
    char c;
    do { // the first line past its warnings (-insecure's) says where it listens
      line.clear();
      while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
    } while (line.rfind("warning: ", 0) == 0);
    // TROUPE_CHILD_LOG=FILE keeps what the children log (appended), for a run to be explained.
    std::FILE* keep = std::getenv("TROUPE_CHILD_LOG") ? std::fopen(std::getenv("TROUPE_CHILD_LOG"), "a") : nullptr;
    std::thread([fd = out[0], keep] {
      char buf[256];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
        if (keep) std::fwrite(buf, 1, static_cast<std::size_t>(n), keep), std::fflush(keep);
      if (keep) std::fclose(keep);
      close(fd);
    }).detach();
    const std::string head = "listening on ";
    if (line.rfind(head, 0) != 0) {
      kill9();
      throw Exception(argv[0] + " said: '" + line + "'");
    }
    address = line.substr(head.size(), line.find(',') - head.size());
  }

  void kill9() { end(SIGKILL); }
  void stop() { end(SIGTERM); }

private:
  void end(int sig) {
    if (pid <= 0) return; // never kill(-1) or waitpid(-1): that reaches every process
    ::kill(pid, sig);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
};

} // namespace troupe::bench
