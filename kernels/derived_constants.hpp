#pragma once
/// What a device derives from a model's constants while compiling (weights re-laid out for its
/// kernels, quantized weights shifted and split, their column sums), kept for the next compile
/// of the same compiled model. A dynamic-shape model compiles once per new input shape; its
/// weights are the same every time, and deriving them again was most of each compile (a
/// 256x49152 int8 vocabulary head: 60 % of a new length's compile).
///
/// An entry is named by what it was made from (the source tensors' addresses) and how (`kind`,
/// which includes every parameter of the derivation). It keeps its sources alive, so no other
/// tensor can take their addresses while it lives.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <troupe/tensor.hpp>

namespace troupe::kernels {

class derived_constants {
public:
  /// Past this many entries the cache starts over (constants folded per shape could otherwise
  /// add entries without end; a model's own weights are far fewer).
  static constexpr std::size_t max_entries = 4096;

  /// The value `make` derives from `sources` by `kind`, made on the first call only. T must be
  /// the same type for every call with one `kind`.
  template <class T>
  std::shared_ptr<const T> get(const std::string& kind, const std::vector<Tensor>& sources,
                               const std::function<T()>& make) {
    key k{kind, {}};
    for (const auto& s : sources) k.second.emplace_back(s.data(), s.get_byte_size());
    {
      std::lock_guard lock(mutex_);
      if (auto it = entries_.find(k); it != entries_.end()) {
        ++hits_;
        return std::static_pointer_cast<const T>(it->second.value);
      }
    }
    // Made outside the lock: `make` may take long, and the compiles of one model do not race
    // for the same entry (two that do both make it; the first kept wins).
    auto made = std::make_shared<const T>(make());
    std::lock_guard lock(mutex_);
    if (entries_.size() >= max_entries) entries_.clear();
    auto it = entries_.emplace(std::move(k), entry{sources, made}).first;
    return std::static_pointer_cast<const T>(it->second.value);
  }

  /// Entries found made (for tests).
  std::size_t hits() const {
    std::lock_guard lock(mutex_);
    return hits_;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

private:
  using key = std::pair<std::string, std::vector<std::pair<const void*, std::size_t>>>;
  struct entry {
    std::vector<Tensor> sources; ///< kept alive: their addresses are the key
    std::shared_ptr<const void> value;
  };
  mutable std::mutex mutex_;
  std::map<key, entry> entries_;
  std::size_t hits_ = 0;
};

} // namespace troupe::kernels
