/// The troupe command: devices, query, run, bench.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "tools/args.hpp"
#include "tools/commands.hpp"

namespace {

const char* usage_text =
    "usage: troupe <command> [flags]\n"
    "  troupe devices\n"
    "      lists devices and their properties\n"
    "  troupe query -m MODEL -d DEVICE [-shape SHAPES]\n"
    "      which ops of the model the device supports\n"
    "  troupe run -m MODEL -d DEVICE [-shape SHAPES] [-i NAME=FILE ...] -o DIR\n"
    "      one inference; writes DIR/<output>.f32 (raw little-endian float32) and DIR/outputs.json;\n"
    "      inputs without -i come from mulberry32 seed 12345 (as tools/ort/bench.js)\n"
    "  troupe bench -m MODEL [-d DEVICE] [-hint latency|throughput] [-api sync|async] [-nireq N]\n"
    "               [-niter N] [-t SECONDS] [-shape SHAPES] [-nstreams N] [-nthreads N] [-ip f32|bf16|f16]\n"
    "               [-pc] [-json_stats FILE]\n"
    "      benchmark_app-style throughput and latency\n"
    "SHAPES: x[1,3,48,192] | [1,3,48,192] (the only input) | a[1,2],b[3,4]\n";

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(usage_text, stderr);
    return 2;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "devices") return troupe::cli::cmd_devices(argc, argv);
    if (cmd == "query") return troupe::cli::cmd_query(argc, argv);
    if (cmd == "run") return troupe::cli::cmd_run(argc, argv);
    if (cmd == "bench") return troupe::cli::cmd_bench(argc, argv);
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
      std::fputs(usage_text, stdout);
      return 0;
    }
    throw troupe::cli::usage_error("unknown command '" + cmd + "'");
  } catch (const troupe::cli::usage_error& e) {
    std::fprintf(stderr, "troupe: %s\n%s", e.what(), usage_text);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "troupe: error: %s\n", e.what());
    return 1;
  }
}
