#include <cstdio>

#include <troupe/troupe.hpp>

#include "tools/args.hpp"
#include "tools/commands.hpp"

namespace troupe::cli {

int cmd_devices(int argc, char** argv) {
  parse_args(argc, argv, 2, {});
  Core core;
  for (const auto& d : core.available_devices()) {
    std::printf("%s\n", d.c_str());
    for (const auto& p : core.get_property(d, "SUPPORTED_PROPERTIES").as<std::vector<std::string>>()) {
      if (p == "SUPPORTED_PROPERTIES") continue;
      std::printf("  %-32s %s\n", p.c_str(), core.get_property(d, p).as_string().c_str());
    }
  }
  return 0;
}

} // namespace troupe::cli
