#pragma once
/// ov::Layout (troupe's Layout with OpenVINO's name lookups) and ov::layout::has_*/ *_idx.
/// Dimension names are single letters in troupe ("NCHW", "[N,C,H,W]", "N?HW").
#include <cstdint>
#include <ostream>
#include <string>

#include <troupe/layout.hpp>
#include <troupe/openvino/exception.hpp>

namespace ov {

class Layout : public troupe::Layout {
public:
  using troupe::Layout::Layout;
  Layout() = default;
  Layout(const troupe::Layout& l) : troupe::Layout(l) {}
  bool has_name(const std::string& name) const { return name.size() == 1 && has(name[0]); }
  std::int64_t get_index_by_name(const std::string& name) const {
    OPENVINO_ASSERT(has_name(name), "layout ", to_string(), " has no dimension '", name, "'");
    return index_of(name[0]);
  }
};

inline std::ostream& operator<<(std::ostream& os, const Layout& l) { return os << l.to_string(); }

namespace layout {
inline bool has_batch(const Layout& l) { return l.has_name("N"); }
inline bool has_channels(const Layout& l) { return l.has_name("C"); }
inline bool has_depth(const Layout& l) { return l.has_name("D"); }
inline bool has_height(const Layout& l) { return l.has_name("H"); }
inline bool has_width(const Layout& l) { return l.has_name("W"); }
inline std::int64_t batch_idx(const Layout& l) { return l.get_index_by_name("N"); }
inline std::int64_t channels_idx(const Layout& l) { return l.get_index_by_name("C"); }
inline std::int64_t depth_idx(const Layout& l) { return l.get_index_by_name("D"); }
inline std::int64_t height_idx(const Layout& l) { return l.get_index_by_name("H"); }
inline std::int64_t width_idx(const Layout& l) { return l.get_index_by_name("W"); }
} // namespace layout

} // namespace ov
