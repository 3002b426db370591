/// troupe convert: a model (ONNX or IR) written as OpenVINO IR v11 (.xml and .bin), as
/// OpenVINO's `ovc`; the IR reads back to the same outputs (tests/openvino_ir_tests.cpp).
#include <troupe/core.hpp>

#include <cstdio>

#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/input_shapes.hpp"

namespace troupe::cli {

int cmd_convert(int argc, char** argv) {
  auto a = parse_args(argc, argv, 2,
                      {{"-m", "a model file (.onnx or .xml)"},
                       {"-o", "the IR file to write (.xml; its .bin goes beside it)"},
                       {"-shape", "shapes: NAME[1,3,48,192],NAME2[...] or [1,3,48,192]"}});
  if (!a.has("-m")) throw usage_error("-m is required: the model file (.onnx or .xml)");
  if (!a.has("-o")) throw usage_error("-o is required: the IR file to write (.xml)");
  const std::string out = a.get("-o");
  if (out.size() < 4 || out.substr(out.size() - 4) != ".xml") throw usage_error("-o must name an .xml file, not '" + out + "'");
  Core core;
  auto model = core.read_model(a.get("-m"));
  if (a.has("-shape")) apply_shapes(model, a.get("-shape"));
  save_model(model, out);
  std::printf("wrote %s and %s.bin\n", out.c_str(), out.substr(0, out.size() - 4).c_str());
  return 0;
}

} // namespace troupe::cli
