#pragma once
/// troupe's version for --version and the reports. TROUPE_VERSION is CMake's PROJECT_VERSION
/// (tools/CMakeLists.txt); switch to troupe::version() once include/troupe/version.hpp exists.
namespace troupe::cli {

inline const char* troupe_version() { return TROUPE_VERSION; }

} // namespace troupe::cli
