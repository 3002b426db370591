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

dim_range PartialShape::range(std::size_t i) const {
  if (i < dims.size() && dims[i] >= 0) return {dims[i], dims[i]};
  return i < ranges.size() ? ranges[i] : dim_range{};
}

void PartialShape::set_range(std::size_t i, dim_range r) {
  if (i >= dims.size()) throw Exception("dimension " + std::to_string(i) + " of a shape of rank " + std::to_string(dims.size()));
  if (r.min < 0) r.min = 0;
  if (r.max < -1 || (r.max >= 0 && r.max < r.min))
    throw Exception("the range " + std::to_string(r.min) + ".." + std::to_string(r.max) + " of dimension " +
                    std::to_string(i) + " is empty");
  if (r.min == r.max) {
    dims[i] = r.min;
    return;
  }
  dims[i] = -1;
  if (!r.bounded() && ranges.empty()) return;
  ranges.resize(dims.size());
  ranges[i] = r;
}

std::string PartialShape::dim_text(int64_t dim, dim_range r) {
  if (dim >= 0) return std::to_string(dim);
  if (!r.bounded()) return "?";
  return (r.min > 0 ? std::to_string(r.min) : std::string()) + ".." + (r.max >= 0 ? std::to_string(r.max) : std::string());
}

bool PartialShape::operator==(const PartialShape& o) const {
  if (dims != o.dims || rank_known != o.rank_known) return false;
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (range(i) != o.range(i)) return false;
  return true;
}

std::string PartialShape::to_string() const {
  if (!rank_known) return "[...]";
  std::string r = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) r += ",";
    if (dims[i] < 0 && !range(i).bounded() && i < symbols.size() && !symbols[i].empty()) r += symbols[i];
    else r += dim_text(dims[i], range(i));
  }
  return r + "]";
}

PartialShape PartialShape::parse(const std::string& text) {
  PartialShape p;
  std::string cur;
  auto number = [&](const std::string& t) -> int64_t {
    std::size_t used = 0;
    long long v = -1;
    try { v = std::stoll(t, &used); } catch (...) { used = 0; }
    if (used != t.size() || v < 0) throw Exception("bad dimension '" + cur + "' in shape '" + text + "'");
    return v;
  };
  auto flush = [&] {
    if (cur.empty()) return;
    if (cur == "?" || cur == "-1") {
      p.dims.push_back(-1);
    } else if (auto dots = cur.find(".."); dots != std::string::npos) {
      std::string lo = cur.substr(0, dots), hi = cur.substr(dots + 2);
      dim_range r{lo.empty() ? 0 : number(lo), hi.empty() ? -1 : number(hi)};
      p.dims.push_back(-1);
      try {
        p.set_range(p.dims.size() - 1, r);
      } catch (const Exception&) {
        throw Exception("bad dimension '" + cur + "' in shape '" + text + "': an empty range");
      }
    } else {
      p.dims.push_back(number(cur));
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
