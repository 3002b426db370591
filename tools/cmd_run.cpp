#include <cstdio>
#include <filesystem>
#include <sstream>

#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/tensor_io.hpp"

namespace troupe::cli {

int cmd_run(int argc, char** argv) {
  auto a = parse_args(argc, argv, 2, {"-m", "-d", "-shape", "-i", "-o"}, {});
  auto path = a.need("-m");
  auto device = a.get("-d", "CPU");
  auto dir = a.need("-o");
  Core core;
  auto model = core.read_model(path);
  if (a.has("-shape")) apply_shapes(model, a.get("-shape"));
  auto cm = core.compile_model(model, device);
  std::vector<std::string> files;
  if (a.values.count("-i")) files = a.values.at("-i");
  auto inputs = make_inputs(cm, files);
  auto req = cm.create_infer_request();
  for (std::size_t i = 0; i < inputs.size(); ++i) req.set_input_tensor(i, inputs[i]);
  req.infer();

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Exception("cannot create output folder '" + dir + "': " + ec.message());
  std::ostringstream json;
  json << "{\n  \"outputs\": [";
  auto outs = cm.outputs();
  for (std::size_t i = 0; i < outs.size(); ++i) {
    auto t = req.get_output_tensor(i);
    auto name = outs[i].get_any_name();
    auto values = to_floats(t);
    // Output names may hold '/', which cannot be part of a file name.
    std::string file = name;
    for (auto& c : file)
      if (c == '/' || c == '\\') c = '_';
    write_file(dir + "/" + file + ".f32", values.data(), values.size() * sizeof(float));
    json << (i ? ",\n" : "\n") << "    {\"name\": \"" << json_escape(name) << "\", \"file\": \"" << json_escape(file)
         << ".f32\", \"shape\": [";
    const auto& s = t.get_shape();
    for (std::size_t k = 0; k < s.size(); ++k) json << (k ? ", " : "") << s[k];
    json << "], \"element_type\": \"" << to_string(t.get_element_type()) << "\"}";
  }
  json << "\n  ]\n}\n";
  auto text = json.str();
  write_file(dir + "/outputs.json", text.data(), text.size());
  for (std::size_t i = 0; i < outs.size(); ++i)
    std::printf("%s %s -> %s\n", outs[i].get_any_name().c_str(), to_string(req.get_output_tensor(i).get_shape()).c_str(),
                dir.c_str());
  return 0;
}

} // namespace troupe::cli
