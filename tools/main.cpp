/// The troupe command: devices, query, run, bench, worker, convert.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include <troupe/version.hpp>

#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/node_flags.hpp"
#include "tools/usage.hpp"

namespace {

bool is_help(const char* a) { return !std::strcmp(a, "-h") || !std::strcmp(a, "--help") || !std::strcmp(a, "-help"); }

} // namespace

int main(int argc, char** argv) {
  using troupe::cli::usage;
  if (argc < 2) {
    std::fputs(usage("").c_str(), stderr);
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "--version" || cmd == "-version" || cmd == "version") {
    std::printf("troupe %s\n", troupe::version());
    return 0;
  }
  if (is_help(argv[1]) || cmd == "help") {
    std::fputs(usage(argc > 2 ? argv[2] : "").c_str(), stdout);
    return 0;
  }
  const bool known = cmd == "devices" || cmd == "query" || cmd == "run" || cmd == "bench" || cmd == "worker" ||
                     cmd == "convert";
  for (int i = 2; known && i < argc; ++i)
    if (is_help(argv[i])) {
      std::fputs(usage(cmd).c_str(), stdout);
      return 0;
    }
  try {
    troupe::cli::take_node_flags(argc, argv);
    if (cmd == "worker") return troupe::cli::cmd_worker(argc, argv);
    if (cmd == "devices") return troupe::cli::cmd_devices(argc, argv);
    if (cmd == "query") return troupe::cli::cmd_query(argc, argv);
    if (cmd == "run") return troupe::cli::cmd_run(argc, argv);
    if (cmd == "bench") return troupe::cli::cmd_bench(argc, argv);
    if (cmd == "convert") return troupe::cli::cmd_convert(argc, argv);
    throw troupe::cli::usage_error("unknown command '" + cmd + "'");
  } catch (const troupe::cli::usage_error& e) {
    std::fflush(stdout);
    // The error, then the command's usage line (its whole help is a screen long).
    const std::string text = usage(known ? cmd : "");
    const std::string first_line = known ? text.substr(0, text.find('\n') + 1) : text;
    std::fprintf(stderr, "troupe%s: %s\n%s%s", known ? (" " + cmd).c_str() : "", e.what(), first_line.c_str(),
                 known ? ("(troupe " + cmd + " -h lists every flag)\n").c_str() : "");
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "troupe: error: %s\n", e.what());
    return 1;
  }
}
