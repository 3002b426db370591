#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/input_shapes.hpp"

namespace troupe::cli {

namespace {

/// Each .dot of `folder` also as .svg and .png when Graphviz's dot is installed.
void render_dots(const std::string& folder) {
  std::printf("HETERO's pictures: %s/hetero_affinity_*.dot, %s/hetero_subgraphs_*.dot\n", folder.c_str(), folder.c_str());
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    std::printf("(install graphviz for .svg and .png)\n");
    return;
  }
  for (const auto& e : std::filesystem::directory_iterator(folder)) {
    const auto p = e.path();
    if (p.extension() != ".dot" || p.filename().string().rfind("hetero_", 0) != 0) continue;
    for (const char* fmt : {"svg", "png"}) {
      auto out = p;
      out.replace_extension(fmt);
      const std::string cmd = std::string("dot -T") + fmt + " '" + p.string() + "' -o '" + out.string() + "'";
      if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "troupe: warning: %s failed\n", cmd.c_str());
    }
  }
}

} // namespace

int cmd_query(int argc, char** argv) {
  auto a = parse_args(argc, argv, 2,
                      {{"-m", "a model file (.onnx)"},
                       {"-d", "a device: CPU, GPU, GPU.<n> or HETERO:<devices>"},
                       {"-shape", "shapes: NAME[1,3,48,192],NAME2[...] or [1,3,48,192]"},
                       {"-dot", "a folder for HETERO's .dot pictures (and .svg/.png with Graphviz)"},
                       {"-placement", "HETERO_PLACEMENT: PRIORITY (the default), COST (measured on the devices) or COST_NOMINAL (the devices' nominal rates)"}});
  if (!a.has("-m")) throw usage_error("-m is required: the model file (.onnx)");
  if (!a.has("-d")) throw usage_error("-d is required: the device to ask (CPU, GPU or GPU.<n>)");
  auto path = a.get("-m");
  auto device = a.get("-d");
  Core core;
  auto model = core.read_model(path);
  if (a.has("-shape")) apply_shapes(model, a.get("-shape"));
  if (device.rfind("HETERO", 0) == 0) {
    // Where each op goes and why, then how many per device.
    AnyMap props;
    if (a.has("-dot")) props["HETERO_DUMP_GRAPH_DOT"] = a.get("-dot");
    if (a.has("-placement")) props["HETERO_PLACEMENT"] = a.get("-placement");
    auto placed = core.query_placement(model, device, props);
    std::map<std::string, std::size_t> per_device;
    for (const auto& op : model.get_ops()) {
      const auto& p = placed[op.get_friendly_name()];
      ++per_device[p.device];
      std::printf("%-40s %-22s %-8s %s\n", op.get_friendly_name().c_str(), op.get_type_name().c_str(),
                  p.device.c_str(), p.why.c_str());
    }
    std::string summary;
    for (const auto& [dev, n] : per_device) summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " on " + dev;
    std::printf("%zu ops on %s: %s\n", model.get_ops().size(), device.c_str(), summary.c_str());
    if (a.has("-dot")) render_dots(a.get("-dot"));
    return 0;
  }
  auto supported = core.query_model(model, device);
  auto why_not = core.query_model_unsupported(model, device);
  // Both answer after constant folding and fusion: ops folded away run as part of the model.
  std::size_t count = 0, total = 0;
  for (const auto& op : model.get_ops()) {
    ++total;
    auto name = op.get_friendly_name();
    bool ok = supported.count(name) != 0;
    count += ok;
    std::string verdict = "supported";
    if (!ok) {
      auto it = why_not.find(name);
      verdict = "not supported: " + (it != why_not.end() ? it->second : std::string("no answer from the device"));
    }
    std::printf("%-40s %-22s %s\n", name.c_str(), op.get_type_name().c_str(), verdict.c_str());
  }
  std::printf("%zu of %zu ops supported by %s\n", count, total, device.c_str());
  return 0;
}

} // namespace troupe::cli
