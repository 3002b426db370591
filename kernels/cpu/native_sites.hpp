#pragma once
/// Patterns a native step runs whole (attention, RMS normalization): each claimed unless one of
/// its ops is taken by another site, the step placed at its last op, its other ops left without
/// a step of their own. A pattern has `members` (op indices) and `last`.
#include <cstddef>
#include <map>
#include <set>
#include <vector>

namespace troupe::kernels::cpu {

template <class Pattern> struct native_sites {
  std::map<std::size_t, Pattern> by_last; ///< by the pattern's last op: where the step goes
  std::set<std::size_t> inside;           ///< the patterns' other ops
};

template <class Pattern>
native_sites<Pattern> claim_sites(std::vector<Pattern> found, const std::set<std::size_t>& taken) {
  native_sites<Pattern> s;
  for (auto& p : found) {
    bool free = true;
    for (auto o : p.members) free = free && !taken.count(o);
    if (!free) continue;
    for (auto o : p.members)
      if (o != p.last) s.inside.insert(o);
    const std::size_t last = p.last;
    s.by_last.emplace(last, std::move(p));
  }
  return s;
}

} // namespace troupe::kernels::cpu
