#include <troupe/exception.hpp>
#include <troupe/partial_shape.hpp>

namespace troupe {

bool PartialShape::is_static() const {
  if (!rank_known) return false;
  for (auto d : dims)
    if (d < 0) return false;
  return true;
}

Shape PartialShape::to_shape() const {
  if (!is_static()) throw Exception("shape " + to_string() + " is not static");
  return dims;
}

std::string PartialShape::to_string() const {
  if (!rank_known) return "[...]";
  std::string r = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) r += ",";
    if (dims[i] >= 0) r += std::to_string(dims[i]);
    else r += (i < symbols.size() && !symbols[i].empty()) ? symbols[i] : "?";
  }
  return r + "]";
}

PartialShape PartialShape::parse(const std::string& text) {
  PartialShape p;
  std::string cur;
  auto flush = [&] {
    if (cur.empty()) return;
    if (cur == "?" || cur == "-1") {
      p.dims.push_back(-1);
    } else {
      std::size_t used = 0;
      long long v = -1;
      try { v = std::stoll(cur, &used); } catch (...) { used = 0; }
      if (used != cur.size() || v < 0) throw Exception("bad dimension '" + cur + "' in shape '" + text + "'");
      p.dims.push_back(v);
    }
    cur.clear();
  };
  for (char c : text) {
    if (c == '[' || c == ']' || c == ' ') continue;
    if (c == ',' || c == 'x' || c == 'X') flush();
    else cur += c;
  }
  flush();
  return p;
}

} // namespace troupe
