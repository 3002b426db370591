#pragma once
/// ov::Exception and OpenVINO's check macros. ov::Exception is troupe::Exception itself, so a
/// `catch (const ov::Exception&)` catches every error troupe raises, with troupe's message.
#include <sstream>
#include <string>
#include <type_traits>

#include <troupe/exception.hpp>
#include <troupe/export.hpp>

namespace ov {

using Exception = troupe::Exception;

namespace detail {
// Messages are built by appending, not streaming: a stream is instantiated only for a value
// that has nothing but operator<< (this keeps the umbrella header quick to compile).
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, const char* v) { s += v; }
inline void append(std::string& s, char v) { s += v; }
template <class T> void append(std::string& s, const T& v) {
  if constexpr (std::is_arithmetic_v<T>) s += std::to_string(v);
  else {
    std::ostringstream os;
    os << v;
    s += os.str();
  }
}

/// "Check 'cond' failed at file:line:\n<message>", as OpenVINO words a failed check (in the
/// library, runtime/openvino_api.cpp, as the other members below that a program would otherwise
/// compile itself: troupe/openvino.hpp costs a program little more to compile than troupe.hpp).
[[noreturn]] TROUPE_API void raise(const char* check, const char* file, int line, const std::string& message);

template <class... Args>
[[noreturn]] void fail(const char* check, const char* file, int line, const Args&... args) {
  std::string message;
  (append(message, args), ...);
  raise(check, file, line, message);
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
