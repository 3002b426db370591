#include "base/rate_limited_log.hpp"

#include <cstdio>
#include <vector>

namespace troupe {

namespace {
/// Kinds remembered at most: a flood of distinct kinds (client hosts) forgets the quiet ones.
constexpr std::size_t max_kinds = 1024;
} // namespace

rate_limited_log::rate_limited_log(sink_type sink, int per_second) : sink_(std::move(sink)), per_second_(per_second) {}

rate_limited_log::~rate_limited_log() { flush(); }

std::string rate_limited_log::summary(const std::string& kind, const window& w, clock::time_point now) {
  if (w.left_out == 0) return {};
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f", std::chrono::duration<double>(now - w.start).count());
  return "... and " + std::to_string(w.left_out) + " more like it in " + secs + " s (" + kind + "), not logged";
}

void rate_limited_log::say_due(clock::time_point now, bool all) {
  std::vector<std::string> lines;
  for (auto it = kinds_.begin(); it != kinds_.end();) {
    if (all || now - it->second.start >= std::chrono::seconds(1)) {
      if (auto s = summary(it->first, it->second, now); !s.empty()) lines.push_back(std::move(s));
      it = kinds_.erase(it);
    } else {
      ++it;
    }
  }
  last_sweep_ = now;
  if (sink_)
    for (const auto& l : lines) sink_(l);
}

void rate_limited_log::operator()(const std::string& kind, const std::string& line) {
  std::lock_guard lock(m_);
  const auto now = clock::now();
  // Windows that are over say what they left out (a kind that went quiet included), at most
  // once a second: a flood's calls do not walk the map each.
  if (now - last_sweep_ >= std::chrono::seconds(1) || kinds_.size() >= max_kinds) say_due(now, kinds_.size() >= max_kinds);
  auto it = kinds_.find(kind);
  if (it != kinds_.end() && now - it->second.start >= std::chrono::seconds(1)) {
    if (auto s = summary(kind, it->second, now); !s.empty() && sink_) sink_(s);
    kinds_.erase(it);
    it = kinds_.end();
  }
  if (it == kinds_.end()) it = kinds_.emplace(kind, window{now, 0, 0}).first;
  if (it->second.printed < per_second_) {
    ++it->second.printed;
    if (sink_) sink_(line);
  } else {
    ++it->second.left_out;
    ++left_out_total_;
  }
}

void rate_limited_log::flush() {
  std::lock_guard lock(m_);
  say_due(clock::now(), true);
}

uint64_t rate_limited_log::left_out() const {
  std::lock_guard lock(m_);
  return left_out_total_;
}

} // namespace troupe
