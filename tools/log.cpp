#include "tools/log.hpp"

#include <cstdio>
#include <vector>

namespace troupe::cli {

namespace {

std::string vstrf(const char* fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string r(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(r.data(), r.size() + 1, fmt, ap);
  return r;
}

void line(const char* tag, const char* fmt, va_list ap) {
  auto text = vstrf(fmt, ap);
  std::printf("[ %s ] %s\n", tag, text.c_str());
  std::fflush(stdout);
}

} // namespace

std::string strf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  auto r = vstrf(fmt, ap);
  va_end(ap);
  return r;
}

void info(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  line("INFO", fmt, ap);
  va_end(ap);
}

void warn(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  line("WARNING", fmt, ap);
  va_end(ap);
}

void next_step(const std::string& extra) {
  static const std::vector<const char*> names = {"Parsing and validating input arguments",
                                                 "Loading troupe runtime",
                                                 "Setting device configuration",
                                                 "Reading model files",
                                                 "Resizing model to match image sizes and given batch",
                                                 "Configuring input of the model",
                                                 "Loading the model to the device",
                                                 "Querying optimal runtime parameters",
                                                 "Creating infer requests and preparing input tensors",
                                                 "Measuring performance",
                                                 "Dumping statistics report"};
  static std::size_t step = 0;
  if (step >= names.size()) return;
  std::printf("[Step %zu/%zu] %s%s\n", step + 1, names.size(), names[step],
              extra.empty() ? "" : (" (" + extra + ")").c_str());
  std::fflush(stdout);
  ++step;
}

std::string ms2(double ms) { return strf("%.2f", ms); }

} // namespace troupe::cli
