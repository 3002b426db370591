/// `troupe run`: one inference, every output written as .npy (its own type) and .f32.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "tools/args.hpp"
#include "tools/bench_options.hpp"
#include "tools/commands.hpp"
#include "tools/config_io.hpp"
#include "tools/element_convert.hpp"
#include "tools/file_io.hpp"
#include "tools/input_data.hpp"
#include "tools/log.hpp"
#include "tools/npy_io.hpp"

namespace troupe::cli {

namespace {

/// Output names may hold '/' or '\', which cannot be part of a file name.
std::string file_name_of(std::string name) {
  for (auto& c : name)
    if (c == '/' || c == '\\') c = '_';
  return name;
}

} // namespace

int cmd_run(int argc, char** argv) {
  auto a = parse_args(argc, argv, 2,
                      {{"-m", "a model file (.onnx)"},
                       {"-o", "an output folder"},
                       {"-d", "a device: CPU, GPU or GPU.<n>"},
                       {"-i", "input files: [NAME:]FILE|FOLDER[,FILE...] (also NAME=FILE)", true},
                       {"-shape", "shapes: NAME[1,3,48,192],NAME2[...] or [1,3,48,192]"},
                       {"-data_shape", "data shapes: NAME[1,3,48,192],NAME2[...] or [1,3,48,192]"},
                       {"-layout", "layouts: NAME[NCHW],NAME2[NC] or [NCHW]"},
                       {"-b", "a batch size, an integer >= 0"},
                       {"-ip", "an element type (u8, f16, f32, i64, ...)"},
                       {"-op", "an element type (u8, f16, f32, i64, ...)"},
                       {"-iop", "NAME:TYPE entries separated by ',', e.g. \"x:f16, y:f32\""},
                       {"-infer_precision", "f32, bf16 or f16, or per device: CPU:bf16,GPU:f16"},
                       {"-load_config", "a JSON file to read"}});
  if (!a.has("-m")) throw usage_error("-m is required: the model file (.onnx)");
  if (!a.has("-o")) throw usage_error("-o is required: the folder the outputs are written to");
  const auto path = a.get("-m");
  const auto device = a.get("-d", "CPU");
  const auto dir = a.get("-o");
  shape_flags shapes{a.get("-shape"), a.get("-data_shape"), a.get("-layout"), a.get_uint("-b", 0), false};
  if (a.has("-shape")) parse_per_input("-shape", shapes.shape);
  if (a.has("-data_shape")) parse_per_input("-data_shape", shapes.data_shape);
  if (a.has("-layout"))
    for (const auto& e : parse_per_input("-layout", shapes.layout))
      for (const auto& v : e.values) parse_layout("-layout", v);
  if (a.has("-ip")) parse_io_type("-ip", a.get("-ip"));
  if (a.has("-op")) parse_io_type("-op", a.get("-op"));
  if (a.has("-iop")) parse_iop(a.get("-iop"));
  std::string precision;
  if (a.has("-infer_precision")) precision = value_for_device("-infer_precision", a.get("-infer_precision"), device);

  Core core;
  AnyMap props;
  if (a.has("-load_config")) {
    auto configs = load_config(a.get("-load_config"));
    // The device's own section, else its type's ("GPU" for "GPU.0").
    std::string section = configs.count(device) ? device : device_type(device);
    if (configs.count(section)) props = configs.at(section);
    check_config(core, device, props, a.get("-load_config"), section);
  }
  if (!precision.empty()) props["INFERENCE_PRECISION_HINT"] = precision;

  auto model = core.read_model(path);
  auto setup = resolve_inputs(model.inputs(), shapes, true);
  if (!setup.reshape.empty()) model.reshape(setup.reshape);
  auto types = resolve_io_types(a.get("-ip"), a.get("-op"), a.get("-iop"), model.inputs(), model.outputs());
  auto files = parse_input_files(a.all("-i"), model.inputs());
  auto cm = core.compile_model(model, device, props);
  auto sets = make_input_sets(setup, files, types);
  if (sets.sets.size() > 1)
    warn("-i/-data_shape give %zu input sets; troupe run infers the first", sets.sets.size());
  auto req = cm.create_infer_request();
  for (std::size_t k = 0; k < sets.sets[0].size(); ++k) req.set_input_tensor(k, sets.sets[0][k]);
  req.infer();

  make_folder(dir, "-o");
  nlohmann::json outputs = nlohmann::json::array();
  auto ports = cm.outputs();
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const auto& name = ports[i].get_any_name();
    auto t = req.get_output_tensor(i);
    if (auto it = types.outputs.find(name); it != types.outputs.end()) t = convert(t, it->second);
    const auto base = file_name_of(name);
    auto values = to_floats(t);
    write_file(dir + "/" + base + ".f32", values.data(), values.size() * sizeof(float));
    write_npy(dir + "/" + base + ".npy", t);
    outputs.push_back({{"name", name},
                       {"file", base + ".f32"},
                       {"npy", base + ".npy"},
                       {"npy_dtype", npy_dtype(t.get_element_type())},
                       {"shape", t.get_shape()},
                       {"element_type", to_string(t.get_element_type())}});
    std::printf("%s %s %s -> %s/%s.npy\n", name.c_str(), to_string(t.get_element_type()).c_str(),
                to_string(t.get_shape()).c_str(), dir.c_str(), base.c_str());
  }
  write_file(dir + "/outputs.json", nlohmann::json{{"outputs", outputs}}.dump(2) + "\n");
  return 0;
}

} // namespace troupe::cli
