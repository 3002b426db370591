/// The members of troupe/openvino.hpp (namespace ov) that are compiled once, here, rather than in
/// every program: the ones each OpenVINO-style program calls and whose bodies are more than a
/// forwarding call (messages, property maps, port records). scripts/compile_time.sh measures
/// what a program pays for the header against troupe/troupe.hpp.
#include <troupe/openvino.hpp>

namespace ov {

namespace detail {

void raise(const char* check, const char* file, int line, const std::string& message) {
  std::string text = check ? "Check '" : "Exception from ";
  if (check) text.append(check).append("' failed at ");
  text.append(file).append(":").append(std::to_string(line)).append(":\n").append(message);
  throw Exception(text);
}

} // namespace detail

Output<const Node>::Output(const troupe::Port& p, bool is_output)
    : name_(p.get_any_name()), type_(p.get_element_type()), shape_(p.get_partial_shape()), index_(p.get_index()),
      is_output_(is_output), layout_(p.get_layout()) {}

Tensor::Tensor(const element::Type& type, const Shape& shape) : troupe::Tensor(type, troupe::Shape(shape)) {}

Tensor::Tensor(const element::Type& type, const Shape& shape, void* host_ptr, const Strides& strides)
    : troupe::Tensor(type, troupe::Shape(shape), host_ptr) {
  OPENVINO_ASSERT(strides.empty() || strides == dense_strides(type, shape),
                  "ov::Tensor: troupe tensors are dense; strides other than the dense ones are not supported");
}

Strides Tensor::dense_strides(const element::Type& type, const Shape& shape) {
  Strides s(shape.size());
  std::size_t step = type.size();
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = step;
    step *= shape[i];
  }
  return s;
}

Tensor InferRequest::get_input_tensor() {
  OPENVINO_ASSERT(compiled_.inputs().size() == 1, "get_input_tensor() without an index needs a model with one input; this one has ",
                  compiled_.inputs().size());
  return request_.get_input_tensor(0);
}

Tensor InferRequest::get_output_tensor() { return request_.get_output_tensor(only_output().get_index()); }

troupe::Port InferRequest::only_output() const {
  auto outs = compiled_.outputs();
  OPENVINO_ASSERT(outs.size() == 1, "an output without an index needs a model with one output; this one has ", outs.size());
  return outs[0];
}

Core::Core(const std::string& xml_config_file) : core_(std::make_shared<troupe::Core>()) {
  OPENVINO_ASSERT(xml_config_file.empty(), "ov::Core('", xml_config_file,
                  "'): troupe has no plugin configuration file; its devices are built in");
}

std::shared_ptr<Model> Core::read_model(const std::string& model_path, const std::string& bin_path, const AnyMap& properties) const {
  OPENVINO_ASSERT(properties.empty(), "read_model: troupe takes no reading properties (got ", properties.begin()->first, ")");
  return std::make_shared<Model>(core_->read_model(model_path, bin_path));
}

CompiledModel Core::compile_model(const std::shared_ptr<const Model>& model, const std::string& device_name, const AnyMap& properties) {
  return CompiledModel(core_->compile_model(checked(model)->troupe_model(), device_name, detail::to_troupe(properties)));
}

CompiledModel Core::compile_model(const std::string& model_path, const std::string& device_name, const AnyMap& properties) {
  return CompiledModel(core_->compile_model(model_path, device_name, detail::to_troupe(properties)));
}

namespace preprocess {

namespace {
const std::shared_ptr<Model>& checked(const std::shared_ptr<Model>& m) {
  OPENVINO_ASSERT(m != nullptr, "PrePostProcessor: the model is a null std::shared_ptr<ov::Model>");
  return m;
}
} // namespace

PrePostProcessor::PrePostProcessor(const std::shared_ptr<Model>& model) : model_(model), ppp_(checked(model)->troupe_model()) {}

PrePostProcessor::~PrePostProcessor() = default;

std::shared_ptr<Model> PrePostProcessor::build() {
  ppp_.build();
  return model_;
}

} // namespace preprocess

} // namespace ov
