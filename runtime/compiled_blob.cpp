#include "runtime/compiled_blob.hpp"

#include <troupe/exception.hpp>

#include <cstring>

#include "graph/wire.hpp"
#include "runtime/model_cache.hpp"

namespace troupe {

namespace {

constexpr std::string_view magic = "troupe-compiled\n";
constexpr uint32_t blob_version = 1;

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_str(std::string& s, std::string_view v) {
  put_u32(s, static_cast<uint32_t>(v.size()));
  s.append(v);
}

class reader {
public:
  reader(std::string_view b, const std::string& what) : b_(b), what_(what) {}
  Exception bad(const std::string& why) const { return Exception(what_ + ": " + why); }
  std::string_view take(std::size_t n, const char* part) {
    if (n > b_.size() - at_) throw bad(std::string("truncated in the ") + part);
    auto r = b_.substr(at_, n);
    at_ += n;
    return r;
  }
  uint32_t u32(const char* part) {
    auto s = take(4, part);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(s[i])} << (8 * i);
    return v;
  }
  uint64_t u64(const char* part) {
    auto s = take(8, part);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<unsigned char>(s[i])} << (8 * i);
    return v;
  }
  std::string_view str(const char* part) { return take(u32(part), part); }
  std::size_t at() const { return at_; }

private:
  std::string_view b_;
  const std::string& what_;
  std::size_t at_ = 0;
};

} // namespace

std::string encode_blob(const compiled_blob& b) {
  std::string s(magic);
  put_u32(s, blob_version);
  put_str(s, b.troupe_version);
  put_str(s, b.device);
  put_str(s, b.device_name);
  put_str(s, b.settings);
  put_u64(s, b.key[0]);
  put_u64(s, b.key[1]);
  put_str(s, b.model_name);
  put_str(s, graph::encode_graph(b.graph));
  put_u64(s, hash128(s)[0]);
  return s;
}

compiled_blob decode_blob(std::string_view bytes, const std::string& what) {
  reader r(bytes, what);
  if (bytes.substr(0, magic.size()) != magic) throw r.bad("not a troupe compiled model (no 'troupe-compiled' header)");
  r.take(magic.size(), "header");
  if (auto v = r.u32("format version"); v != blob_version)
    throw r.bad("format version " + std::to_string(v) + ", this troupe reads version " + std::to_string(blob_version));
  compiled_blob b;
  b.troupe_version = r.str("troupe version");
  b.device = r.str("device");
  b.device_name = r.str("device name");
  b.settings = r.str("settings");
  b.key[0] = r.u64("key");
  b.key[1] = r.u64("key");
  b.model_name = r.str("model name");
  const auto graph_bytes = r.str("graph");
  const std::size_t covered = r.at();
  const uint64_t sum = r.u64("checksum");
  if (r.at() != bytes.size()) throw r.bad(std::to_string(bytes.size() - r.at()) + " bytes after the checksum");
  if (hash128(bytes.substr(0, covered))[0] != sum) throw r.bad("checksum mismatch (the file is damaged)");
  b.graph = graph::decode_graph(graph_bytes, what);
  return b;
}

} // namespace troupe
