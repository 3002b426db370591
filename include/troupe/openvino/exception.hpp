#pragma once
/// ov::Exception and OpenVINO's check macros. ov::Exception is troupe::Exception itself, so a
/// `catch (const ov::Exception&)` catches every error troupe raises, with troupe's message.
#include <sstream>
#include <string>

#include <troupe/exception.hpp>

namespace ov {

using Exception = troupe::Exception;

namespace detail {
/// "Check 'cond' failed at file:line:\n<message>", as OpenVINO words a failed check.
template <class... Args>
[[noreturn]] void fail(const char* check, const char* file, int line, const Args&... args) {
  std::ostringstream os;
  if (check) os << "Check '" << check << "' failed at " << file << ":" << line << ":\n";
  else os << "Exception from " << file << ":" << line << ":\n";
  ((os << args), ...);
  throw Exception(os.str());
}
} // namespace detail

} // namespace ov

/// Throws ov::Exception with the streamed arguments when `cond` is false.
#define OPENVINO_ASSERT(cond, ...)                                                                               \
  do {                                                                                                           \
    if (!(cond)) ::ov::detail::fail(#cond, __FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__);                       \
  } while (false)

/// Throws ov::Exception with the streamed arguments.
#define OPENVINO_THROW(...) ::ov::detail::fail(nullptr, __FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__)
