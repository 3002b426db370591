#include "json_out.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

namespace troupe::ocr {
namespace {

/// The double whose shortest form is the float's shortest form: 0.9876f prints 0.9876, not
/// 0.98760002851486206.
double shortest(float v) {
  if (!std::isfinite(v)) return 0; // JSON has no NaN or infinity
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf - 1, v);
  *r.ptr = '\0';
  return std::strtod(buf, nullptr);
}

nlohmann::ordered_json coordinate(float v) {
  if (std::isfinite(v) && v == std::round(v) && std::abs(v) < 1e9f) return static_cast<long long>(v);
  return shortest(v);
}

} // namespace

std::string to_json(const std::vector<image_result>& results) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const image_result& r : results) {
    nlohmann::ordered_json lines = nlohmann::ordered_json::array();
    for (const text_line& l : r.lines) {
      nlohmann::ordered_json box = nlohmann::ordered_json::array();
      for (const point& p : l.box) box.push_back({coordinate(p[0]), coordinate(p[1])});
      lines.push_back({{"text", l.text}, {"score", shortest(l.score)}, {"box", std::move(box)}});
    }
    out.push_back({{"image", r.image}, {"lines", std::move(lines)}, {"ms", std::round(r.ms * 1000) / 1000}});
  }
  return out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string to_plain(const image_result& result) {
  std::string out;
  for (const text_line& l : result.lines) {
    char score[32];
    std::snprintf(score, sizeof score, "%.4f", static_cast<double>(l.score));
    out += score;
    out += '\t';
    out += l.text;
    out += '\n';
  }
  return out;
}

} // namespace troupe::ocr
