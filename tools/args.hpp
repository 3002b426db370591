#pragma once
/// Command-line flags as benchmark_app (gflags) reads them: `-name value`, `-name=value`,
/// `--name` for `-name`, switches (`-pc`, `-pc=false`), and `-i` taking every argument up to
/// the next flag. Mistakes are usage errors that name the flag and what it takes.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace troupe::cli {

/// A usage mistake: the command prints its usage on stderr and exits with 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One flag a command knows.
struct flag_spec {
  std::string name;  ///< "-niter"
  std::string takes; ///< what its value is, for messages ("an integer >= 0"); empty for a switch
  bool multi = false; ///< takes every following argument up to the next flag (benchmark_app's -i)
};

/// The flags of one command line, as given.
class args {
public:
  bool has(const std::string& flag) const { return values_.count(flag) != 0; }
  /// The last value given (gflags: the last one wins).
  std::string get(const std::string& flag, const std::string& def = "") const;
  /// Every value given, in order (for flags that may repeat, as -i).
  std::vector<std::string> all(const std::string& flag) const;
  /// A switch: false when absent; `-pc`, `-pc=true` or `-pc=false` otherwise.
  bool on(const std::string& flag) const;
  uint64_t get_uint(const std::string& flag, uint64_t def) const;
  double get_double(const std::string& flag, double def) const;
  /// Flags in the order given with their (last) values; switches read "true"/"false".
  const std::vector<std::pair<std::string, std::string>>& given() const { return given_; }

  /// A usage_error naming the flag, what it takes and what it got.
  [[noreturn]] void bad_value(const std::string& flag, const std::string& got) const;

private:
  friend args parse_args(int, char**, int, const std::vector<flag_spec>&);
  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, std::string> takes_;
  std::vector<std::pair<std::string, std::string>> given_;
};

/// Parses argv[first..]; anything not in `flags` is a usage error naming it.
args parse_args(int argc, char** argv, int first, const std::vector<flag_spec>& flags);

/// A flag value's ','-separated entries, empty ones kept ("a,,b" -> a, "", b; "" -> one "").
std::vector<std::string> comma_items(const std::string& text);

} // namespace troupe::cli
