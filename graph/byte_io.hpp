#pragma once
/// The little-endian byte streams of troupe's binary formats: the wire format (graph/wire.cpp)
/// and a compiled model (runtime/compiled_blob.cpp). The reader treats the bytes as hostile:
/// every length is checked against what is left before it is used, and a failure throws
/// troupe::Exception "<what>: <part>: <reason>" (the part: what byte_part says is being read).
#include <bit>
#include <cstdint>
#include <cstring>
#include <istream>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <troupe/exception.hpp>

namespace troupe::graph {

// Numbers and tensor bytes are copied as they lie in memory, so the host order must be the
// formats' own.
static_assert(std::endian::native == std::endian::little, "troupe's binary formats are little-endian");

/// Everything left in `in`, read in blocks (istreambuf_iterator goes a byte at a time: 3 ms
/// for a 4.6 MB cache entry, a tenth of a CPU compile). in.bad() tells a failed read.
inline std::string read_all(std::istream& in) {
  std::string out;
  char block[1 << 16];
  while (in.read(block, sizeof block) || in.gcount() > 0) out.append(block, static_cast<std::size_t>(in.gcount()));
  return out;
}

class byte_writer {
public:
  std::string out;

  template <class T> void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
  }
  void u8(uint8_t v) { put(v); }
  void u32(uint32_t v) { put(v); }
  void i32(int32_t v) { put(v); }
  void i64(int64_t v) { put(v); }
  void u64(uint64_t v) { put(v); }
  void f32(float v) { put(std::bit_cast<uint32_t>(v)); }

  void count(std::size_t n, std::string_view of) {
    if (n > std::numeric_limits<uint32_t>::max())
      throw Exception("encode: " + std::string(of) + ": " + std::to_string(n) + " does not fit the wire format");
    u32(static_cast<uint32_t>(n));
  }
  void str(std::string_view s) {
    count(s.size(), "a string of that many bytes");
    out.append(s);
  }
};

class byte_reader {
public:
  byte_reader(std::string_view bytes, const std::string& what) : b_(bytes), what_(what) {}

  /// "<what>: <part>: <reason>", the part being the innermost one being read.
  [[noreturn]] void fail(const std::string& reason) const {
    std::string where;
    for (const auto& p : parts_) where += (where.empty() ? "" : " ") + p;
    throw Exception(what_ + ": " + (where.empty() ? "header" : where) + ": " + reason);
  }

  std::string_view bytes() const { return b_; }
  std::size_t left() const { return b_.size() - pos_; }
  std::size_t offset() const { return pos_; }

  const char* take(std::size_t n) {
    if (n > left())
      fail("needs " + std::to_string(n) + " bytes at byte " + std::to_string(pos_) + ", the blob has " +
           std::to_string(left()) + " left (truncated?)");
    const char* p = b_.data() + pos_;
    pos_ += n;
    return p;
  }
  template <class T> T get() {
    T v;
    std::memcpy(&v, take(sizeof(T)), sizeof(T));
    return v;
  }
  uint8_t u8() { return get<uint8_t>(); }
  uint32_t u32() { return get<uint32_t>(); }
  int32_t i32() { return get<int32_t>(); }
  int64_t i64() { return get<int64_t>(); }
  uint64_t u64() { return get<uint64_t>(); }
  float f32() { return std::bit_cast<float>(get<uint32_t>()); }

  bool flag(std::string_view of) {
    const uint8_t v = u8();
    if (v > 1) fail(std::string(of) + " is " + std::to_string(v) + ", not 0 or 1");
    return v == 1;
  }
  /// A list's length, refused when the bytes left cannot hold that many items.
  uint32_t count(std::size_t min_item, std::string_view of) {
    const uint32_t n = u32();
    if (n > left() / min_item)
      fail("a count of " + std::to_string(n) + " " + std::string(of) + " cannot fit the " + std::to_string(left()) +
           " bytes left");
    return n;
  }
  /// A string's bytes where they lie (no copy: a graph inside a compiled model is megabytes).
  std::string_view str_view() {
    const uint32_t n = u32();
    if (n > left()) fail("a string of " + std::to_string(n) + " bytes, " + std::to_string(left()) + " left (truncated?)");
    return {take(n), n};
  }
  std::string str() { return std::string(str_view()); }
  void end(std::string_view kind) {
    if (left()) fail(std::to_string(left()) + " bytes after the end of the " + std::string(kind));
  }

  std::vector<std::string> parts_; ///< what is being read, outermost first (byte_part pushes them)

private:
  std::string_view b_;
  std::size_t pos_ = 0;
  const std::string& what_;
};

/// Names what the reader reads while it lives: "op #12 'conv1'", then "attribute 'pads'".
class byte_part {
public:
  byte_part(byte_reader& r, std::string name) : r_(r) { r_.parts_.push_back(std::move(name)); }
  ~byte_part() { r_.parts_.pop_back(); }
  byte_part(const byte_part&) = delete;
  byte_part& operator=(const byte_part&) = delete;
  void rename(std::string name) { r_.parts_.back() = std::move(name); }

private:
  byte_reader& r_;
};

} // namespace troupe::graph
