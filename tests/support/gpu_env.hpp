#pragma once
/// What GPU tests share: whether a GPU must be present (CI), a Boost precondition that runs
/// GPU cases where a GPU exists or is required (then a missing one fails, never skips), and
/// scoped environment variables for pointing the Vulkan loader at ICD files.
#include <boost/test/unit_test.hpp>

#include <troupe/core.hpp>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace troupe::tests {

/// CI=true or TROUPE_REQUIRE_GPU=1: a missing Vulkan device is a failure.
inline bool gpu_required() {
  auto is = [](const char* n, const char* v) {
    const char* e = std::getenv(n);
    return e && std::string(e) == v;
  };
  return is("CI", "true") || is("TROUPE_REQUIRE_GPU", "1");
}

inline std::vector<std::string> gpus_of(const Core& core) {
  std::vector<std::string> r;
  for (const auto& d : core.available_devices())
    if (d.rfind("GPU", 0) == 0) r.push_back(d);
  return r;
}

/// Precondition of GPU test cases.
struct gpu_present {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    static const bool have = [] {
      Core core;
      return !gpus_of(core).empty();
    }();
    if (have || gpu_required()) return true;
    boost::test_tools::assertion_result r(false);
    r.message() << "no Vulkan device here (install mesa-vulkan-drivers for lavapipe); "
                   "set CI=true or TROUPE_REQUIRE_GPU=1 to make this a failure";
    return r;
  }
};

/// Sets an environment variable for one scope (the Vulkan loader reads it at vkCreateInstance).
struct scoped_env {
  std::string name;
  std::optional<std::string> old;
  scoped_env(std::string n, const std::string& v) : name(std::move(n)) {
    if (const char* o = std::getenv(name.c_str())) old = o;
    setenv(name.c_str(), v.c_str(), 1);
  }
  ~scoped_env() {
    if (old) setenv(name.c_str(), old->c_str(), 1);
    else unsetenv(name.c_str());
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;
};

} // namespace troupe::tests
