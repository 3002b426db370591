#include "tools/input_data.hpp"

#include "tools/args.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "tools/element_convert.hpp"
#include "tools/file_io.hpp"
#include "tools/input_shapes.hpp"
#include "tools/npy_io.hpp"
#include "tools/seeded_generator.hpp"

namespace fs = std::filesystem;

namespace troupe::cli {

namespace {

bool is_input(const std::vector<Port>& ports, const std::string& name) {
  return std::any_of(ports.begin(), ports.end(), [&](const Port& p) { return p.get_any_name() == name; });
}

/// A file, or a folder's data files in name order.
void expand(const std::string& spec, const std::string& path, std::vector<std::string>& out) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(path, ec)) {
      if (!e.is_regular_file()) continue;
      auto ext = e.path().extension().string();
      std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
      if (ext == ".npy" || ext == ".bin" || ext == ".raw" || ext == ".f32") found.push_back(e.path().string());
    }
    if (ec) throw Exception("-i '" + spec + "': cannot list folder '" + path + "': " + ec.message());
    if (found.empty()) throw Exception("-i '" + spec + "': folder '" + path + "' has no .npy, .bin, .raw or .f32 files");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
    return;
  }
  if (!fs::exists(path, ec)) throw Exception("-i '" + spec + "': no file or folder '" + path + "'");
  out.push_back(path);
}

/// Fills `item` (one batch item of input `in`) from `path`.
void read_item(const input_info& in, element_type data_type, const std::string& path, std::size_t item_index,
               std::size_t items, Tensor& dst) {
  const Shape& full = dst.get_shape();
  const auto item_elems = static_cast<std::size_t>(dst.get_size()) / items;
  const auto item_bytes = dst.get_byte_size() / items;
  auto what = [&] {
    return items > 1 ? "one of " + std::to_string(items) + " batch items of " + to_string(full) : to_string(full);
  };
  Tensor data;
  if (is_npy_path(path)) {
    data = read_npy(path);
    if (static_cast<std::size_t>(data.get_size()) != item_elems)
      throw Exception("input '" + in.name + "' from file '" + path + "': expected " + std::to_string(item_elems) +
                      " elements (" + what() + "), the .npy file holds " + std::to_string(data.get_size()) + " (" +
                      to_string(data.get_shape()) + " " + to_string(data.get_element_type()) + ")");
  } else {
    auto bytes = read_file(path);
    const auto expected = item_elems * element_size(data_type);
    if (bytes.size() != expected)
      throw Exception("input '" + in.name + "' from file '" + path + "': expected " + std::to_string(expected) +
                      " bytes (" + what() + " " + to_string(data_type) + "), got " + std::to_string(bytes.size()) +
                      " bytes");
    data = Tensor(data_type, Shape{static_cast<int64_t>(item_elems)});
    std::memcpy(data.data(), bytes.data(), bytes.size());
  }
  auto converted = convert(data, in.type);
  std::memcpy(static_cast<char*>(dst.data()) + item_index * item_bytes, converted.data(), item_bytes);
}

} // namespace

std::map<std::string, std::vector<std::string>> parse_input_files(const std::vector<std::string>& specs,
                                                                  const std::vector<Port>& ports) {
  std::map<std::string, std::vector<std::string>> r;
  for (const auto& spec : specs) {
    std::string name, rest = spec;
    // benchmark_app's "name:files" first, then troupe's "name=file".
    for (char sep : {':', '='}) {
      auto at = spec.find(sep);
      if (at != std::string::npos && at > 0 && is_input(ports, spec.substr(0, at))) {
        name = spec.substr(0, at);
        rest = spec.substr(at + 1);
        break;
      }
    }
    if (name.empty()) {
      std::error_code ec;
      auto sep = spec.find_first_of(":=");
      if (sep != std::string::npos && sep > 0 && !fs::exists(spec, ec))
        throw Exception("-i '" + spec + "': the model has no input '" + spec.substr(0, sep) + "'; its inputs: " +
                        names_of(ports));
      if (ports.size() != 1)
        throw Exception("-i '" + spec + "': the model has " + std::to_string(ports.size()) + " inputs (" +
                        names_of(ports) + "); name the one the files are for (NAME:FILES)");
      name = ports[0].get_any_name();
    }
    if (rest.empty()) throw Exception("-i '" + spec + "': no file after the input name");
    for (const auto& path : comma_items(rest)) {
      if (path.empty()) throw Exception("-i '" + spec + "': an empty file name");
      expand(spec, path, r[name]);
    }
  }
  return r;
}

input_sets make_input_sets(const input_setup& setup, const std::map<std::string, std::vector<std::string>>& files,
                           const io_types& types) {
  auto items_of = [](const input_info& in, const Shape& s) {
    const int n = in.batch_index();
    return n < 0 ? std::size_t{1} : static_cast<std::size_t>(s[static_cast<std::size_t>(n)]);
  };
  std::size_t count = setup.configurations;
  for (const auto& in : setup.inputs)
    if (auto it = files.find(in.name); it != files.end()) {
      const auto per_set = std::max<std::size_t>(1, items_of(in, in.data_shapes.at(0)));
      count = std::max(count, (it->second.size() + per_set - 1) / per_set);
    }

  input_sets r;
  seeded_generator gen; // shared across inputs and sets, so draws continue as in bench.js
  std::map<std::string, std::size_t> next_file;
  for (std::size_t s = 0; s < count; ++s) {
    const std::size_t c = s % setup.configurations;
    std::vector<Tensor> set;
    std::vector<std::string> sources;
    for (const auto& in : setup.inputs) {
      const Shape& shape = in.data_shapes.at(c % in.data_shapes.size());
      const auto data_type = types.inputs.count(in.name) ? types.inputs.at(in.name) : in.type;
      Tensor t(in.type, shape);
      std::string source;
      if (auto it = files.find(in.name); it != files.end()) {
        const auto items = std::max<std::size_t>(1, items_of(in, shape));
        auto& at = next_file[in.name];
        for (std::size_t b = 0; b < items; ++b, ++at) {
          const auto& path = it->second[at % it->second.size()];
          read_item(in, data_type, path, b, items, t);
          source += (b ? ", " : "") + path;
        }
      } else {
        Tensor made(data_type, shape);
        gen.fill(made);
        if (data_type != in.type) made = convert(made, in.type);
        std::memcpy(t.data(), made.data(), t.get_byte_size());
        source = "seeded random (mulberry32, seed 12345)";
      }
      set.push_back(std::move(t));
      sources.push_back(std::move(source));
    }
    r.sets.push_back(std::move(set));
    r.configuration.push_back(c);
    r.sources.push_back(std::move(sources));
  }
  return r;
}

} // namespace troupe::cli
