#pragma once
/// A log that a flood cannot turn into a flood of lines. Lines come in kinds (the refusals of
/// one client host, the connections the gate closed for one reason); each kind prints at most
/// `per_second` lines in any one second. What it leaves out is counted and said in one line once
/// that second is over ("... and 3412 more like it in 1.0 s"): the first of a kind's next
/// lines, or any line a second later, or flush(), says it. A worker logs each bad message it
/// refuses; without this one client's flood costs it a line (and a write) per message.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace troupe {

class rate_limited_log {
public:
  using sink_type = std::function<void(const std::string&)>;
  explicit rate_limited_log(sink_type sink, int per_second = 10);
  ~rate_limited_log(); ///< flushes

  /// Logs `line` as one of `kind`, or counts it when its kind has had its share of this second.
  void operator()(const std::string& kind, const std::string& line);
  /// Says what was left out of every kind, now.
  void flush();
  /// How many lines were left out since the start, all kinds together.
  uint64_t left_out() const;

private:
  using clock = std::chrono::steady_clock;
  struct window {
    clock::time_point start;
    int printed = 0;
    uint64_t left_out = 0;
  };
  /// The summary line of a window whose lines were left out; "" when none were.
  static std::string summary(const std::string& kind, const window& w, clock::time_point now);
  void say_due(clock::time_point now, bool all); ///< under m_; says the windows that are over

  sink_type sink_;
  int per_second_;
  mutable std::mutex m_;
  std::map<std::string, window> kinds_;
  clock::time_point last_sweep_ = clock::now();
  uint64_t left_out_total_ = 0;
};

} // namespace troupe
