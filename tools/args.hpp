#pragma once
/// Command-line parsing for the troupe command: flags of the form `-name value` (benchmark_app
/// style), errors for usage mistakes, and the shared helpers (shape lists, seeded inputs).
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

namespace troupe::cli {

/// A usage mistake: the command prints the usage text and exits with 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct args {
  std::map<std::string, std::vector<std::string>> values; ///< flag -> values in order
  std::map<std::string, bool> switches;

  bool has(const std::string& flag) const { return values.count(flag) || switches.count(flag); }
  std::string get(const std::string& flag, const std::string& def = "") const;
  std::string need(const std::string& flag) const; ///< usage_error when missing
  int get_int(const std::string& flag, int def) const;
  double get_double(const std::string& flag, double def) const;
};

/// `value_flags` take a value; `switch_flags` do not. Anything else is a usage_error.
args parse_args(int argc, char** argv, int first, const std::vector<std::string>& value_flags,
                const std::vector<std::string>& switch_flags);

/// "x[1,3,48,192]", "[1,3,48,192]" (the only input, name ""), "a[1,2],b[3]".
std::map<std::string, PartialShape> parse_shapes(const std::string& text);

/// Applies -shape to a model: unknown names are errors naming them.
void apply_shapes(Model& model, const std::string& text);

/// The seeded inputs of tools/ort/bench.js: mulberry32(12345), one draw per element in
/// row-major order over inputs in model order, value = (u32 >> 8) / 2^24. Non-float inputs
/// take the same draw converted to their type (always 0 for integers and false for booleans,
/// since draws lie in [0,1)).
class seeded_generator {
public:
  explicit seeded_generator(uint32_t seed = 12345) : state_(seed) {}
  uint32_t next_u32();
  float next_float() { return static_cast<float>(next_u32() >> 8) / 16777216.0f; }
  void fill(Tensor& t);

private:
  uint32_t state_;
};

/// Concrete shape of a port after -shape; throws naming the input when still dynamic.
Shape concrete_shape(const Port& p);

/// Writes/reads whole files; errors name the file.
void write_file(const std::string& path, const void* data, std::size_t size);
std::string read_file(const std::string& path);

} // namespace troupe::cli
