#pragma once
/// Checking the errors the library promises: a troupe::Exception whose message names what
/// went wrong.
#include <boost/test/unit_test.hpp>

#include <troupe/exception.hpp>

#include <functional>
#include <source_location>
#include <string>
#include <vector>

namespace troupe::tests {

/// Checks that `f` throws troupe::Exception whose message holds every piece. No exception is
/// a failure naming the caller's line (the case goes on); another exception type propagates.
inline void expect_error(const std::function<void()>& f, const std::vector<std::string>& pieces,
                         const std::source_location where = std::source_location::current()) {
  try {
    f();
  } catch (const Exception& e) {
    const std::string msg = e.what();
    for (const auto& p : pieces)
      BOOST_TEST(msg.find(p) != std::string::npos,
                 "'" << msg << "' lacks '" << p << "' (expect_error at line " << where.line() << ")");
    return;
  }
  BOOST_ERROR("no troupe::Exception thrown at " << where.file_name() << "(" << where.line() << ")");
}

} // namespace troupe::tests
