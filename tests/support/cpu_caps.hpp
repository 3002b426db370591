#pragma once
/// Preconditions on what the CPU can do, for cases that only mean something where it can.
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

namespace troupe::tests {

/// Precondition of the bf16 cases: skipped, with the reason, on a CPU without bf16.
struct cpu_has_bf16 {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    Core core;
    const auto caps = core.get_property("CPU", "OPTIMIZATION_CAPABILITIES").as_string();
    if (caps.find("BF16") != std::string::npos) return true;
    boost::test_tools::assertion_result r(false);
    r.message() << "this CPU has no bf16 support (OPTIMIZATION_CAPABILITIES " << caps << ")";
    return r;
  }
};

} // namespace troupe::tests
