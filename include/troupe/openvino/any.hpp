#pragma once
/// ov::Any and ov::AnyMap. troupe's property values are text (troupe::Any); ov::Any is that text
/// with OpenVINO's conversions: any value with an operator<< goes in (ov's enums, element types,
/// shapes), and as<T>() reads it back with troupe's parser or operator>>. is<T>() says whether
/// as<T>() would succeed (every value is text, so is<std::string>() is always true).
#include <cstdint>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <troupe/any.hpp>
#include <troupe/openvino/element_type.hpp>
#include <troupe/openvino/exception.hpp>

namespace ov {

class Any;
using AnyMap = std::map<std::string, Any>;

namespace detail {
template <class T>
inline constexpr bool troupe_reads =
    std::is_same_v<T, int> || std::is_same_v<T, int64_t> || std::is_same_v<T, uint32_t> ||
    std::is_same_v<T, double> || std::is_same_v<T, bool> || std::is_same_v<T, troupe::element_type>;

template <class T> struct is_string_vector : std::false_type {};
template <class S>
struct is_string_vector<std::vector<S>> : std::bool_constant<std::is_convertible_v<const S&, std::string>> {};

template <class T> troupe::Any to_text(const T& v) {
  if constexpr (std::is_same_v<T, bool> || std::is_floating_point_v<T>) return troupe::Any(v);
  else if constexpr (std::is_integral_v<T>) return troupe::Any(std::to_string(v));
  else if constexpr (std::is_convertible_v<const T&, std::string>) return troupe::Any(std::string(v));
  else if constexpr (std::is_same_v<T, troupe::element_type> || std::is_same_v<T, element::Type>)
    return troupe::Any(troupe::element_type(v));
  else if constexpr (is_string_vector<T>::value) {
    std::string s;
    for (const auto& e : v) {
      if (!s.empty()) s.push_back(',');
      s.append(std::string(e));
    }
    return troupe::Any(s);
  } else {
    // OpenVINO's enums and value types (streams::Num, PerformanceMode, shapes) print their text.
    std::ostringstream os;
    os << v;
    return troupe::Any(os.str());
  }
}
} // namespace detail

class Any : public troupe::Any {
public:
  Any() = default;
  Any(const troupe::Any& a) : troupe::Any(a) {}
  template <class T>
    requires(!std::is_base_of_v<troupe::Any, std::decay_t<T>>)
  Any(const T& v) : troupe::Any(detail::to_text(v)) {}

  /// The value as T: troupe's own parser for its types (an error names the value), a list
  /// split at ',' and spaces for std::vector<std::string>, operator>> for the rest.
  template <class T> T as() const {
    if constexpr (std::is_same_v<T, std::string>) return as_string();
    else if constexpr (std::is_same_v<T, Any> || std::is_same_v<T, troupe::Any>) return *this;
    else if constexpr (detail::troupe_reads<T>) return troupe::Any::as<T>();
    else if constexpr (std::is_same_v<T, element::Type>) return troupe::Any::as<troupe::element_type>();
    else if constexpr (detail::is_string_vector<T>::value) {
      T r;
      std::string item;
      for (char c : as_string() + ",") {
        if (c == ',' || c == ' ') {
          if (!item.empty()) r.emplace_back(item);
          item.clear();
        } else item += c;
      }
      return r;
    } else {
      std::istringstream is(as_string());
      T v{};
      if (!(is >> v) || !(is >> std::ws).eof())
        OPENVINO_THROW("the value '", as_string(), "' cannot be read as the type asked for");
      return v;
    }
  }
  template <class T> bool is() const {
    if constexpr (std::is_same_v<T, std::string>) return true;
    else {
      try {
        (void)as<T>();
        return true;
      } catch (const Exception&) {
        return false;
      }
    }
  }
  void print(std::ostream& os) const { os << as_string(); }
};

inline std::ostream& operator<<(std::ostream& os, const Any& a) { return os << a.as_string(); }

namespace detail {
/// What troupe's API takes: the same text values.
inline troupe::AnyMap to_troupe(const AnyMap& m) { return troupe::AnyMap(m.begin(), m.end()); }
} // namespace detail

} // namespace ov
