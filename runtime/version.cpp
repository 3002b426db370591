#include <troupe/version.hpp>

namespace troupe {

const char* version() { return TROUPE_VERSION_STRING; }

} // namespace troupe
