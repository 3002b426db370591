#include <troupe/any.hpp>
#include <troupe/exception.hpp>

#include <cstdio>
#include <limits>

namespace troupe {

namespace {

[[noreturn]] void bad(const std::string& text, const char* what) {
  throw Exception("property value '" + text + "' is not " + what);
}

long long parse_integer(const std::string& text, long long lo, long long hi, const char* what) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (...) {
    bad(text, what);
  }
  if (used != text.size() || v < lo || v > hi) bad(text, what);
  return v;
}

} // namespace

Any::Any(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  text_ = buf;
}

Any::Any(const std::vector<std::string>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) text_ += ",";
    text_ += v[i];
  }
}

template <> std::string Any::as<std::string>() const { return text_; }

template <> int Any::as<int>() const {
  return static_cast<int>(parse_integer(text_, std::numeric_limits<int>::min(), std::numeric_limits<int>::max(),
                                        "an int"));
}

template <> int64_t Any::as<int64_t>() const {
  return parse_integer(text_, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                       "an integer");
}

template <> uint32_t Any::as<uint32_t>() const {
  return static_cast<uint32_t>(parse_integer(text_, 0, std::numeric_limits<uint32_t>::max(), "an unsigned int"));
}

template <> double Any::as<double>() const {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text_, &used);
  } catch (...) {
    bad(text_, "a number");
  }
  if (used != text_.size()) bad(text_, "a number");
  return v;
}

template <> bool Any::as<bool>() const {
  if (text_ == "YES" || text_ == "true" || text_ == "TRUE" || text_ == "1") return true;
  if (text_ == "NO" || text_ == "false" || text_ == "FALSE" || text_ == "0") return false;
  bad(text_, "a boolean (YES, NO, true, false)");
}

template <> element_type Any::as<element_type>() const {
  try {
    return element_type_from_string(text_);
  } catch (const Exception&) {
    bad(text_, "an element type");
  }
}

template <> std::vector<std::string> Any::as<std::vector<std::string>>() const {
  std::vector<std::string> r;
  if (text_.empty()) return r;
  std::size_t start = 0;
  while (true) {
    auto comma = text_.find(',', start);
    r.push_back(text_.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return r;
}

} // namespace troupe
