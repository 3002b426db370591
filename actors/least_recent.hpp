#pragma once
/// The eviction both per-shape caches use (actors/subgraph_actor, actors/shape_dispatch): their
/// entries carry a `last_use` tick; past `capacity` the least recently used go.
#include <cstddef>

namespace troupe::actors {

/// Erases the entries of `map` with the smallest `last_use` until at most `capacity` are left
/// (0: no bound), handing each to `gone(entry&&)` first.
template <class Map, class Gone>
void evict_least_recent(Map& map, std::size_t capacity, Gone&& gone) {
  while (capacity > 0 && map.size() > capacity) {
    auto oldest = map.begin();
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->second.last_use < oldest->second.last_use) oldest = it;
    gone(std::move(oldest->second));
    map.erase(oldest);
  }
}

} // namespace troupe::actors
