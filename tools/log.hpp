#pragma once
/// benchmark_app's console shape: `[Step n/11] ...` headers and `[ INFO ]` / `[ WARNING ]` lines
/// on stdout, so a log of troupe reads like a log of benchmark_app.
#include <cstdarg>
#include <string>

namespace troupe::cli {

/// printf into a std::string.
std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

void info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// The next of benchmark_app's 11 steps, with `extra` in parentheses when given.
void next_step(const std::string& extra = "");

/// "12.35": benchmark_app prints times with two decimals.
std::string ms2(double ms);

} // namespace troupe::cli
