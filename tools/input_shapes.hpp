#pragma once
/// -shape, -data_shape, -layout and -b, resolved against a model's inputs as benchmark_app
/// resolves them: the model's new shapes, each input's layout, and the concrete shapes of
/// the tensors fed to it (one per test configuration).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

namespace troupe::cli {

/// 'a', 'b': the ports' names, for error messages.
std::string names_of(const std::vector<Port>& ports);

/// One "name[...]" entry of a per-input flag; `name` is empty for "[...]" (every input).
/// -data_shape may give several bracket groups per input: "x[1,3,48,192][1,3,48,320]".
struct per_input_value {
  std::string name;
  std::vector<std::string> values; ///< the bracket contents, in order
};

/// Syntax only (usage_error naming the flag); names are checked against a model later.
std::vector<per_input_value> parse_per_input(const std::string& flag, const std::string& text);

/// A per-input flag's bracket groups by input name, checked against the model ("[...]"
/// without a name: every input).
std::map<std::string, std::vector<std::string>> by_input(const std::string& flag, const std::string& text,
                                                         const std::vector<Port>& ports);

/// "NCHW", "N,C,H,W", "NC?W" ('?' an unnamed dim) -> one letter per dim; usage_error otherwise.
std::string parse_layout(const std::string& flag, const std::string& text);

struct shape_flags {
  std::string shape, data_shape, layout; ///< the flags' text; empty when not given
  uint64_t batch = 0;                    ///< -b; 0 when not given
  bool warn_default_layout = true;       ///< benchmark_app warns of each guessed layout
};

struct input_info {
  std::string name;
  element_type type;               ///< the model's element type
  PartialShape shape;              ///< after -shape and -b
  std::string layout;              ///< one letter per dim, "" when unknown
  bool layout_defaulted = false;   ///< guessed from the rank, as benchmark_app guesses it
  std::vector<Shape> data_shapes;  ///< per test configuration; empty when not needed (-niter 0)

  /// Index of 'N' in the layout, or -1.
  int batch_index() const;
};

struct input_setup {
  std::vector<input_info> inputs;
  std::map<std::string, PartialShape> reshape; ///< for Model::reshape; empty when nothing changes
  std::size_t configurations = 1;              ///< distinct data shapes (-data_shape groups)

  bool dynamic() const;
  /// The batch of configuration `c`: the N of its data shapes (1 when no input has N);
  /// throws when inputs disagree.
  int64_t batch(std::size_t c = 0) const;
  /// "x[1,3,48,192],y[1,4]" of configuration `c`.
  std::string data_shapes_text(std::size_t c) const;
};

/// `need_data` false (bench -niter 0: compile only) lets dynamic inputs go without data shapes.
/// Errors name the flag and the input; warnings (defaulted layouts, -b ignored) are printed.
input_setup resolve_inputs(const std::vector<Port>& ports, const shape_flags& flags, bool need_data);

/// "[?,3,48,?]": dynamic dims as '?' (PartialShape::to_string prints ONNX's dim names).
std::string shape_text(const PartialShape& s);

/// "[N,C,H,W]" as OpenVINO prints a layout; "[...]" when unknown.
std::string layout_text(const std::string& layout);

} // namespace troupe::cli

namespace troupe::cli {

/// -shape alone applied to a model (troupe query): unknown inputs are errors naming them.
void apply_shapes(Model& model, const std::string& text);

} // namespace troupe::cli
