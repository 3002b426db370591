#include <troupe/layout.hpp>

#include <cctype>

#include <troupe/exception.hpp>

namespace troupe {

Layout::Layout(const std::string& text) {
  auto bad = [&](const std::string& why) { return Exception("layout '" + text + "': " + why); };
  std::string body = text;
  bool bracketed = !body.empty() && body.front() == '[';
  if (bracketed) {
    if (body.back() != ']') throw bad("a '[' without its ']'");
    body = body.substr(1, body.size() - 2);
  }
  for (std::size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (bracketed && c == ',') continue;
    if (bracketed && c == ' ') continue;
    if (c != '?' && !std::isalpha(static_cast<unsigned char>(c)))
      throw bad("'" + std::string(1, c) + "' is not a dimension name (one letter per dimension, '?' for an unnamed one)");
    char name = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (name != '?' && names_.find(name) != std::string::npos)
      throw bad("dimension '" + std::string(1, name) + "' is named twice");
    names_ += name;
  }
}

long Layout::index_of(char name) const {
  auto i = names_.find(static_cast<char>(std::toupper(static_cast<unsigned char>(name))));
  return i == std::string::npos ? -1 : static_cast<long>(i);
}

std::string Layout::to_string() const {
  std::string r = "[";
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (i) r += ',';
    r += names_[i];
  }
  return r + "]";
}

} // namespace troupe
