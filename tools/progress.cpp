#include "tools/progress.hpp"

#include <cstdio>

#include <unistd.h>

namespace troupe::cli {

progress::progress(uint64_t niter, double seconds) : niter_(niter), seconds_(seconds), tty_(::isatty(STDERR_FILENO)) {}

void progress::update(uint64_t done) {
  auto now = clock::now();
  if (now - last_ < (tty_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(5000))) return;
  last_ = now;
  const double s = std::chrono::duration<double>(now - start_).count();
  const char* lead = tty_ ? "\r" : "";
  const char* tail = tty_ ? "" : "\n";
  if (seconds_ > 0)
    std::fprintf(stderr, "%s[ PROGRESS ] %.1f / %.1f s, %llu iterations   %s", lead, s, seconds_,
                 static_cast<unsigned long long>(done), tail);
  else
    std::fprintf(stderr, "%s[ PROGRESS ] %llu / %llu iterations, %.1f s   %s", lead, static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(niter_), s, tail);
  std::fflush(stderr);
  drawn_ = true;
}

void progress::finish() {
  if (drawn_ && tty_) std::fprintf(stderr, "\n");
}

} // namespace troupe::cli
