#include "kernels/vulkan/pipeline_cache_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <vulkan/vulkan.h>

#include <troupe/exception.hpp>

#include "graph/byte_io.hpp"
#include "graph/wire.hpp"

namespace troupe::kernels::vulkan {

namespace {

constexpr char magic[8] = {'t', 'r', 'o', 'u', 'p', 'e', 'V', 'C'};
/// 2: the checksum is graph::content_hash, FNV-1a 64 proper (1 used a mistyped offset basis).
constexpr uint32_t format_version = 2;
/// magic, format version, blob size (u64), FNV-1a 64 of the blob.
constexpr std::size_t header_bytes = sizeof magic + 4 + 8 + 8;

uint64_t fnv1a(const std::vector<uint8_t>& blob) {
  return graph::content_hash({reinterpret_cast<const char*>(blob.data()), blob.size()});
}

template <class T> void put(uint8_t* at, T v) { std::memcpy(at, &v, sizeof(T)); }
template <class T> T get(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

std::string hex(const uint8_t* p, std::size_t n) {
  std::string s;
  char b[3];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", p[i]);
    s += b;
  }
  return s;
}

} // namespace

std::string cache_file_path(const std::string& dir, const cache_identity& id) {
  char ids[32];
  std::snprintf(ids, sizeof ids, "%04x-%04x", id.vendor_id, id.device_id);
  return (std::filesystem::path(dir) / ("troupe-vulkan-" + std::string(ids) + "-" + hex(id.uuid.data(), 16) + ".cache"))
      .string();
}

std::vector<uint8_t> wrap_cache_blob(const std::vector<uint8_t>& blob) {
  std::vector<uint8_t> out(header_bytes + blob.size());
  std::memcpy(out.data(), magic, sizeof magic);
  put<uint32_t>(out.data() + sizeof magic, format_version);
  put<uint64_t>(out.data() + sizeof magic + 4, blob.size());
  put<uint64_t>(out.data() + sizeof magic + 12, fnv1a(blob));
  if (!blob.empty()) std::memcpy(out.data() + header_bytes, blob.data(), blob.size());
  return out;
}

std::optional<std::vector<uint8_t>> read_cache_file(const std::string& path, const cache_identity& id,
                                                    std::string& why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "no cache file " + path;
    return std::nullopt;
  }
  const std::string bytes = graph::read_all(in);
  const auto* f = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < header_bytes || std::memcmp(f, magic, sizeof magic) != 0) {
    why = path + " is not a troupe pipeline cache file";
    return std::nullopt;
  }
  const uint8_t* h = f + sizeof magic;
  if (get<uint32_t>(h) != format_version) {
    why = path + " has cache format " + std::to_string(get<uint32_t>(h)) + ", this troupe writes " +
          std::to_string(format_version);
    return std::nullopt;
  }
  const uint64_t size = get<uint64_t>(h + 4);
  if (size != bytes.size() - header_bytes) {
    why = path + " is truncated: " + std::to_string(bytes.size() - header_bytes) + " of " + std::to_string(size) +
          " bytes";
    return std::nullopt;
  }
  std::vector<uint8_t> blob(f + header_bytes, f + bytes.size());
  if (fnv1a(blob) != get<uint64_t>(h + 12)) {
    why = path + " fails its checksum";
    return std::nullopt;
  }
  // VkPipelineCacheHeaderVersionOne: length, version, vendorID, deviceID, pipelineCacheUUID.
  if (blob.size() < 16 + VK_UUID_SIZE || get<uint32_t>(blob.data()) < 16 + VK_UUID_SIZE ||
      get<uint32_t>(blob.data() + 4) != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) {
    why = path + " holds no Vulkan pipeline cache header";
    return std::nullopt;
  }
  if (get<uint32_t>(blob.data() + 8) != id.vendor_id || get<uint32_t>(blob.data() + 12) != id.device_id ||
      std::memcmp(blob.data() + 16, id.uuid.data(), VK_UUID_SIZE) != 0) {
    why = path + " was written by another device or driver";
    return std::nullopt;
  }
  return blob;
}

void write_cache_file(const std::string& path, const std::vector<uint8_t>& blob) {
  static std::atomic<unsigned> serial{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  const auto bytes = wrap_cache_blob(blob);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      const int err = errno;
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw Exception("CACHE_DIR: cannot write the GPU pipeline cache " + tmp + ": " + std::strerror(err));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Exception("CACHE_DIR: cannot rename " + tmp + " to " + path + ": " + ec.message());
  }
}

} // namespace troupe::kernels::vulkan
