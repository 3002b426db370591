#include "tools/bench_preprocess.hpp"

#include "tools/args.hpp"
#include "tools/log.hpp"

namespace troupe::cli {

namespace {

/// -mean_values / -scale_values: input name -> values, for the inputs the flag names.
std::map<std::string, std::vector<float>> parse_values(const std::string& flag, const std::string& text,
                                                        const std::vector<Port>& ports) {
  std::map<std::string, std::vector<float>> r;
  for (const auto& [name, groups] : by_input(flag, text, ports)) {
    if (groups.size() != 1) throw usage_error(flag + " takes one [v1,v2,...] group per input, got '" + text + "'");
    auto& values = r[name];
    for (const auto& item : comma_items(groups[0])) {
      try {
        std::size_t used = 0;
        values.push_back(std::stof(item, &used));
        if (used != item.size()) throw std::invalid_argument(item);
      } catch (const std::exception&) {
        throw usage_error(flag + " takes numbers, got '" + item + "' in '" + text + "'");
      }
    }
  }
  return r;
}

const std::vector<float>* values_for(const std::map<std::string, std::vector<float>>& m, const std::string& name) {
  auto it = m.find(name);
  return it == m.end() ? nullptr : &it->second;
}

} // namespace

bool add_bench_preprocessing(Model& model, input_setup& setup, const std::map<std::string, element_type>& input_types,
                             const std::string& mean_values, const std::string& scale_values) {
  const auto mean = parse_values("-mean_values", mean_values, model.inputs());
  const auto scale = parse_values("-scale_values", scale_values, model.inputs());
  if (input_types.empty() && mean.empty() && scale.empty()) return false;
  preprocess::PrePostProcessor ppp(model);
  for (const auto& in : setup.inputs) {
    const auto* m = values_for(mean, in.name);
    const auto* s = values_for(scale, in.name);
    auto type = input_types.find(in.name);
    if (!m && !s && type == input_types.end()) continue;
    auto& info_of = ppp.input(in.name);
    if (type != input_types.end()) info_of.tensor().set_element_type(type->second);
    if (!in.layout.empty()) info_of.model().set_layout(Layout(in.layout));
    if ((m || s) && type != input_types.end() && type->second != element_type::f32 && in.type == element_type::f32)
      info_of.preprocess().convert_element_type(element_type::f32);
    if (m) info_of.preprocess().mean(*m);
    if (s) info_of.preprocess().scale(*s);
    std::string steps = type != input_types.end() ? "fed as " + to_string(type->second) + ", converted" : "";
    if (m) steps += std::string(steps.empty() ? "" : ", ") + "mean subtracted";
    if (s) steps += std::string(steps.empty() ? "" : ", ") + "divided by the scale";
    info("Input '%s': %s in the model (PrePostProcessor), on the device, inside the measurement", in.name.c_str(),
         steps.c_str());
  }
  model = ppp.build();
  for (auto& in : setup.inputs) in.type = model.input(in.name).get_element_type();
  return true;
}

} // namespace troupe::cli
