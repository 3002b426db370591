#include "tests/support/ort_case.hpp"


#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

namespace fs = std::filesystem;

namespace troupe::tests {

namespace {

fs::path folder_of(const ort_case& c) { return data_path("ort/" + c.model + "_" + c.tag); }

nlohmann::json meta_of(const ort_case& c) {
  const fs::path p = folder_of(c) / "meta.json";
  std::ifstream in(p);
  if (!in) throw Exception("cannot open " + p.string());
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Exception(p.string() + ": " + e.what());
  }
}

/// meta.json's entry as a tensor of its element type and shape, from its raw little-endian file.
Tensor tensor_of(const ort_case& c, const nlohmann::json& entry) {
  const std::string name = entry.at("name"), type = entry.at("element_type");
  Tensor t(element_type_from_string(type), entry.at("shape").get<Shape>());
  const fs::path file = folder_of(c) / entry.at("file").get<std::string>();
  std::ifstream in(file, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && in.fail()) throw Exception("cannot read " + file.string());
  if (bytes.size() != t.get_byte_size())
    throw Exception(c.model + ": " + file.string() + " has " + std::to_string(bytes.size()) + " bytes; '" + name + "', " +
                    type + " " + to_string(t.get_shape()) + ", takes " + std::to_string(t.get_byte_size()));
  std::memcpy(t.data(), bytes.data(), bytes.size());
  return t;
}

} // namespace

std::vector<data_item> data_of(const ort_case& c) {
  const std::string of = " of " + c.model + " at " + c.tag;
  std::vector<data_item> items{fetched_item(data_path("models/" + c.model + ".onnx"), "the model " + c.model),
                               // `expect` writes meta.json after the tensors: the folder is complete.
                               fetched_item(folder_of(c) / "meta.json", "onnxruntime's outputs" + of)};
  if (!fs::exists(items.back().path)) return items;
  const auto meta = meta_of(c);
  for (const char* kind : {"inputs", "outputs"})
    for (const auto& e : meta.at(kind))
      items.push_back(fetched_item(folder_of(c) / e.at("file").get<std::string>(),
                                   "onnxruntime's " + e.at("name").get<std::string>() + of));
  return items;
}

needs_data needs_ort_case(const ort_case& c) {
  return needs_data([&c] { return data_of(c); });
}

ort_case_tensors load_ort_case(const ort_case& c) {
  require_data(data_of(c));
  const auto meta = meta_of(c);
  ort_case_tensors r;
  for (const auto& e : meta.at("inputs")) r.inputs.emplace_back(e.at("name"), tensor_of(c, e));
  for (const auto& e : meta.at("outputs")) r.outputs.emplace_back(e.at("name"), tensor_of(c, e));
  return r;
}

ort_case_run run_ort_case(Core& core, const ort_case& c, const std::string& device, const AnyMap& props,
                          const std::function<void(Model&)>& edit) {
  require_data(data_of(c));
  const auto meta = meta_of(c);
  Model model = core.read_model(data_path("models/" + c.model + ".onnx").string());

  std::map<std::string, PartialShape> shapes;
  std::map<std::string, Tensor> inputs;
  for (const auto& e : meta.at("inputs")) {
    Tensor t = tensor_of(c, e);
    shapes[e.at("name")] = PartialShape(t.get_shape());
    inputs[e.at("name")] = t;
  }
  model.reshape(shapes);
  if (edit) edit(model);

  CompiledModel compiled = core.compile_model(model, device, props);
  ort_case_run r{compiled, compiled.create_infer_request(), {}, {}};
  for (const auto& [name, t] : inputs) r.request.set_tensor(name, t);
  r.request.infer();
  for (const auto& e : meta.at("outputs")) {
    const Tensor ref = tensor_of(c, e);
    const std::string name = e.at("name");
    Tensor got = r.request.get_tensor(name);
    if (got.get_element_type() != ref.get_element_type() || got.get_shape() != ref.get_shape())
      throw Exception(c.model + " on " + device + ": output '" + name + "' is " + to_string(got.get_element_type()) +
                      " " + to_string(got.get_shape()) + ", onnxruntime's " + to_string(ref.get_element_type()) + " " +
                      to_string(ref.get_shape()));
    r.outputs.emplace_back(name, got);
    r.expected.push_back(ref);
  }
  return r;
}

namespace {
std::vector<float> as_floats(const Tensor& t) {
  auto d = to_doubles(t);
  return std::vector<float>(d.begin(), d.end());
}
} // namespace

std::vector<output_comparison> compare_with_ort(const ort_case_run& run, double rel, double abs) {
  std::vector<output_comparison> r;
  for (std::size_t i = 0; i < run.outputs.size(); ++i)
    r.push_back({run.outputs[i].first,
                 compare_scaled(as_floats(run.outputs[i].second), as_floats(run.expected[i]), rel, abs)});
  return r;
}

} // namespace troupe::tests
