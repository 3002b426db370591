#include "runtime/compiled_blob.hpp"

#include <troupe/exception.hpp>

#include "graph/byte_io.hpp"
#include "graph/wire.hpp"
#include "runtime/cache_files.hpp"

namespace troupe {

namespace {

constexpr std::string_view magic = "troupe-compiled\n";
constexpr uint32_t blob_version = 2; ///< 2: no cache key (CACHE_DIR keeps no compiled models)

} // namespace

std::string encode_blob(const compiled_blob& b) {
  graph::byte_writer w;
  w.out.append(magic);
  w.u32(blob_version);
  w.str(b.troupe_version);
  w.str(b.device);
  w.str(b.device_name);
  w.str(b.settings);
  w.str(b.model_name);
  w.str(graph::encode_graph(b.graph));
  w.u64(hash128(w.out)[0]);
  return std::move(w.out);
}

compiled_blob decode_blob(std::string_view bytes, const std::string& what) {
  graph::byte_reader r(bytes, what);
  if (bytes.substr(0, magic.size()) != magic) r.fail("not a troupe compiled model (no 'troupe-compiled' header)");
  r.take(magic.size());
  if (auto v = r.u32(); v != blob_version)
    r.fail("format version " + std::to_string(v) + ", this troupe reads version " + std::to_string(blob_version));
  compiled_blob b;
  std::string_view graph_bytes;
  {
    graph::byte_part p(r, "what it was compiled for");
    b.troupe_version = r.str();
    b.device = r.str();
    b.device_name = r.str();
    b.settings = r.str();
    b.model_name = r.str();
  }
  {
    graph::byte_part p(r, "graph");
    graph_bytes = r.str_view();
  }
  const std::size_t covered = r.offset();
  {
    graph::byte_part p(r, "checksum");
    if (hash128(bytes.substr(0, covered))[0] != r.u64()) r.fail("checksum mismatch (the file is damaged)");
  }
  r.end("compiled model");
  b.graph = graph::decode_graph(graph_bytes, what);
  return b;
}

} // namespace troupe
