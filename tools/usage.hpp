#pragma once
/// The help text of each command (`troupe <command> -h`) and of troupe itself.
#include <string>

namespace troupe::cli {

/// `command`: "bench", "run", "query", "devices"; anything else gives the overview.
std::string usage(const std::string& command);

} // namespace troupe::cli
