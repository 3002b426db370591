#pragma once
/// A property value. Properties travel as text (as in OpenVINO's string form: "4", "LATENCY",
/// "f32", "YES"); `as<T>()` parses and names the value when it cannot.
#include <troupe/export.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <troupe/element_type.hpp>

namespace troupe {

class TROUPE_API Any {
public:
  Any() = default;
  Any(const char* v) : text_(v) {}
  Any(std::string v) : text_(std::move(v)) {}
  Any(int v) : text_(std::to_string(v)) {}
  Any(int64_t v) : text_(std::to_string(v)) {}
  Any(uint32_t v) : text_(std::to_string(v)) {}
  Any(double v);
  Any(bool v) : text_(v ? "YES" : "NO") {}
  Any(element_type v) : text_(to_string(v)) {}
  Any(const std::vector<std::string>& v); ///< joined with ','

  const std::string& as_string() const { return text_; }
  /// int, int64_t, uint32_t, double, bool, std::string, element_type, std::vector<std::string>.
  template <class T> T as() const;
  bool empty() const { return text_.empty(); }
  bool operator==(const Any& o) const { return text_ == o.text_; }

private:
  std::string text_;
};

using AnyMap = std::map<std::string, Any>;

/// A typed property key: `troupe::num_streams(2)` makes a {"NUM_STREAMS", "2"} pair.
template <class T> struct Property {
  const char* name;
  std::pair<const std::string, Any> operator()(T v) const { return {name, Any(v)}; }
  operator std::string() const { return name; }
};

} // namespace troupe
