/// Prints the generated sections of docs/ from the code's own tables, so they cannot drift:
///   properties-matrix, properties-cpu, properties-gpu, properties-reference, compiled-model-properties
///     runtime/device_properties.cpp: property_table(), compiled_model_property_table()
///   ops, gpu-op-conditions
///     kernels/reference registry (supported_ops), kernels/cpu (onednn_op_types),
///     kernels/vulkan (op_rules and each rule's conditions)
/// A page holds a section between `<!-- BEGIN GENERATED: name -->` and `<!-- END GENERATED: name -->`.
///
///   troupe_docgen print NAME   the section's Markdown
///   troupe_docgen update DIR   rewrites every section in DIR/*.md in place (scripts/gen_docs.sh)
///   troupe_docgen check DIR    exits 1 when a section differs from what `print` gives, a section is
///                              missing or unknown, or a device here answers properties the table
///                              lacks (the docs_up_to_date test)
///
/// The output never depends on the machine: no device is opened to print (GPU facts come from
/// the table, not from Vulkan), so a machine without a GPU prints the same pages. It documents
/// internals, so it links the internal libraries; tools/ may use only the public API.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <troupe/core.hpp>
#include <troupe/exception.hpp>

#include "graph/op_domain.hpp"
#include "kernels/cpu/cpu_device.hpp"
#include "kernels/reference/kernels.hpp"
#include "kernels/vulkan/lowering.hpp"
#include "runtime/device_properties.hpp"

namespace {

using troupe::device_kind;

/// A Markdown table cell: no line breaks, pipes escaped.
std::string cell(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '|') r += "\\|";
    else if (c == '\n') r += ' ';
    else r += c;
  }
  return r;
}

std::string code(const std::string& s) { return "`" + s + "`"; }

struct kind_info {
  device_kind kind;
  const char* title;
};
const kind_info kinds[] = {{device_kind::cpu, "CPU"}, {device_kind::gpu, "GPU.N"}, {device_kind::reference, "REFERENCE"}};

/// Property names in table order, each once.
std::vector<std::string> property_names() {
  std::vector<std::string> r;
  for (const auto& row : troupe::property_table())
    if (std::find(r.begin(), r.end(), row.name) == r.end()) r.push_back(row.name);
  return r;
}

std::string properties_matrix() {
  std::ostringstream o;
  o << "| property | CPU | GPU.N | REFERENCE |\n|---|---|---|---|\n";
  for (const auto& name : property_names()) {
    o << "| " << code(name);
    for (const auto& k : kinds) {
      const auto* row = troupe::find_property(k.kind, name);
      o << " | " << (!row ? "-" : row->writable ? "read-write" : "read-only");
    }
    o << " |\n";
  }
  return o.str();
}

std::string properties_of(device_kind kind) {
  std::ostringstream o;
  o << "| property | access | values | default | what it does |\n|---|---|---|---|---|\n";
  for (const auto& row : troupe::property_table()) {
    if (!(row.kinds & troupe::kind_bit(kind))) continue;
    o << "| " << code(row.name) << " | " << (row.writable ? "read-write" : "read-only") << " | " << cell(row.values)
      << " | "
      << (!row.writable ? std::string("-") : row.computed_default ? cell(row.default_value) : code(row.default_value))
      << " | " << cell(row.meaning) << " |\n";
  }
  return o.str();
}

std::string compiled_model_properties() {
  std::ostringstream o;
  o << "| property | devices | what it answers |\n|---|---|---|\n";
  for (const auto& row : troupe::compiled_model_property_table())
    o << "| " << code(row.name) << " | " << row.on << " | " << cell(row.meaning) << " |\n";
  return o.str();
}

std::string ops_table() {
  auto ref = troupe::kernels::reference::supported_ops();
  auto dnnl = troupe::kernels::cpu::onednn_op_types();
  const auto& gpu = troupe::kernels::vulkan::op_rules();
  std::set<std::string> all(ref.begin(), ref.end());
  all.insert(dnnl.begin(), dnnl.end());
  for (const auto& [name, rule] : gpu) all.insert(name);
  auto has = [](const std::vector<std::string>& v, const std::string& n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  std::size_t n_cpu = 0, n_gpu = 0, n_ref = 0, n_openvino = 0;
  std::ostringstream rows;
  for (const auto& op : all) {
    const bool openvino = troupe::graph::is_openvino_op(op);
    n_openvino += openvino;
    const bool r = has(ref, op), d = has(dnnl, op), cpu = r || d, g = gpu.count(op) > 0;
    n_cpu += cpu;
    n_gpu += g;
    n_ref += r;
    rows << "| " << op << (openvino ? " (" + std::string(troupe::graph::openvino_domain) + ")" : "") << " | " << (d ? "oneDNN or reference kernel" : r ? "reference kernel" : "-") << " | "
         << (g ? "yes" : "-") << " | " << (r ? "yes" : "-") << " |\n";
  }
  std::ostringstream o;
  o << all.size() << " op types (" << all.size() - n_openvino << " of ONNX domain `ai.onnx`, " << n_openvino << " of `"
    << troupe::graph::openvino_domain << "`): CPU " << n_cpu << ", GPU " << n_gpu << ", REFERENCE " << n_ref << ".\n\n| op | CPU | GPU | REFERENCE |\n|---|---|---|---|\n"
    << rows.str();
  return o.str();
}

std::string gpu_op_conditions() {
  std::ostringstream o;
  o << "| op | the GPU accepts it when |\n|---|---|\n";
  for (const auto& [name, rule] : troupe::kernels::vulkan::op_rules())
    o << "| " << name << " | " << cell(rule.conditions.empty() ? "(not stated)" : rule.conditions) << " |\n";
  return o.str();
}

const std::map<std::string, std::function<std::string()>>& sections() {
  static const std::map<std::string, std::function<std::string()>> s{
      {"properties-matrix", properties_matrix},
      {"properties-cpu", [] { return properties_of(device_kind::cpu); }},
      {"properties-gpu", [] { return properties_of(device_kind::gpu); }},
      {"properties-reference", [] { return properties_of(device_kind::reference); }},
      {"compiled-model-properties", compiled_model_properties},
      {"ops", ops_table},
      {"gpu-op-conditions", gpu_op_conditions},
  };
  return s;
}

const std::string begin_mark = "<!-- BEGIN GENERATED: ";
const std::string end_mark = "<!-- END GENERATED: ";
const std::string mark_tail = " -->";

/// What a section holds between its marker lines.
std::string body_of(const std::string& name) {
  std::string r(2, '\n'); // a blank line after the BEGIN marker and before the END marker
  r += sections().at(name)();
  r += '\n';
  return r;
}

/// `text` where it starts a line, from `from` on; npos when there is none. Markers count only
/// at the start of a line, so a page may quote them in its prose.
std::size_t find_at_line_start(const std::string& page, const std::string& text, std::size_t from) {
  for (auto at = page.find(text, from); at != std::string::npos; at = page.find(text, at + 1))
    if (at == 0 || page[at - 1] == '\n') return at;
  return std::string::npos;
}

struct page_result {
  std::string text;                ///< the page with every section regenerated
  std::vector<std::string> found;  ///< section names in the page
  std::vector<std::string> errors; ///< malformed or unknown markers
  std::vector<std::string> stale;  ///< sections whose text differs
};

page_result regenerate(const std::string& page, const std::string& file) {
  page_result r;
  std::size_t at = 0;
  while (true) {
    auto b = find_at_line_start(page, begin_mark, at);
    if (b == std::string::npos) {
      r.text += page.substr(at);
      break;
    }
    auto name_end = page.find(mark_tail, b);
    if (name_end == std::string::npos) {
      r.errors.push_back(file + ": an unterminated BEGIN GENERATED marker");
      r.text += page.substr(at);
      break;
    }
    std::string name = page.substr(b + begin_mark.size(), name_end - b - begin_mark.size());
    auto body_start = name_end + mark_tail.size();
    std::string close = end_mark + name + mark_tail;
    auto e = find_at_line_start(page, close, body_start);
    if (e == std::string::npos) {
      r.errors.push_back(file + ": section '" + name + "' has no line " + close);
      r.text += page.substr(at);
      break;
    }
    r.text += page.substr(at, body_start - at);
    if (!sections().count(name)) {
      r.errors.push_back(file + ": unknown section '" + name + "'");
      r.text += page.substr(body_start, e - body_start);
    } else {
      r.found.push_back(name);
      std::string want = body_of(name);
      if (page.compare(body_start, e - body_start, want) != 0) r.stale.push_back(name);
      r.text += want;
    }
    at = e;
  }
  return r;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> pages(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> r;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".md") r.push_back(e.path());
  std::sort(r.begin(), r.end());
  return r;
}

/// The devices here answer exactly the properties the table gives their kind (a device's
/// read-only facts come from its info(), which the generator cannot see without the device).
std::vector<std::string> live_property_errors() {
  std::vector<std::string> errors;
  troupe::Core core;
  auto names = core.available_devices();
  names.push_back("REFERENCE");
  for (const auto& dev : names) {
    const device_kind kind = dev.rfind("GPU", 0) == 0 ? device_kind::gpu
                             : dev == "REFERENCE"     ? device_kind::reference
                                                      : device_kind::cpu;
    std::set<std::string> answered, listed;
    for (const auto& p : core.get_property(dev, "SUPPORTED_PROPERTIES").as<std::vector<std::string>>())
      answered.insert(p);
    for (const auto& row : troupe::property_table())
      if (row.kinds & troupe::kind_bit(kind)) listed.insert(row.name);
    for (const auto& p : answered)
      if (!listed.count(p))
        errors.push_back(dev + " answers property " + p +
                         ", which property_table() in runtime/device_properties.cpp does not list for it");
    for (const auto& p : listed)
      if (!answered.count(p))
        errors.push_back("property_table() in runtime/device_properties.cpp lists " + p + " for " + dev +
                         ", which that device does not answer");
  }
  return errors;
}

int run(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "print" && argc == 3) {
    if (!sections().count(argv[2])) {
      std::fprintf(stderr, "unknown section '%s'\n", argv[2]);
      return 2;
    }
    std::fputs(sections().at(argv[2])().c_str(), stdout);
    return 0;
  }
  if ((cmd == "update" || cmd == "check") && argc == 3) {
    const std::filesystem::path dir = argv[2];
    bool bad = false;
    std::set<std::string> seen;
    for (const auto& p : pages(dir)) {
      const std::string text = read_file(p);
      auto r = regenerate(text, p.string());
      seen.insert(r.found.begin(), r.found.end());
      for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.c_str());
      bad = bad || !r.errors.empty();
      if (cmd == "update") {
        if (r.text != text) {
          std::ofstream(p, std::ios::binary) << r.text;
          std::printf("updated %s\n", p.string().c_str());
        }
      } else {
        for (const auto& s : r.stale)
          std::fprintf(stderr, "%s: generated section '%s' differs from what the code says\n", p.string().c_str(),
                       s.c_str());
        bad = bad || !r.stale.empty();
      }
    }
    for (const auto& [name, fn] : sections())
      if (!seen.count(name)) {
        std::fprintf(stderr, "no page in %s holds the generated section '%s'\n", dir.string().c_str(), name.c_str());
        bad = true;
      }
    if (cmd == "check") {
      for (const auto& [name, rule] : troupe::kernels::vulkan::op_rules())
        if (rule.conditions.empty()) {
          std::fprintf(stderr, "the GPU rule for %s has no conditions (kernels/vulkan/lower_*.cpp)\n", name.c_str());
          bad = true;
        }
      for (const auto& e : live_property_errors()) {
        std::fprintf(stderr, "%s\n", e.c_str());
        bad = true;
      }
      if (bad) std::fprintf(stderr, "docs are out of date: run scripts/gen_docs.sh (and fix the tables it names)\n");
      else std::printf("docs: every generated section is up to date\n");
    }
    return bad ? 1 : 0;
  }
  std::fprintf(stderr, "usage: troupe_docgen print SECTION | update DOCS_DIR | check DOCS_DIR\nsections:");
  for (const auto& [name, fn] : sections()) std::fprintf(stderr, " %s", name.c_str());
  std::fprintf(stderr, "\n");
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "troupe_docgen: %s\n", e.what());
    return 1;
  }
}
