#include "runtime/cache_files.hpp"

#include <troupe/exception.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

namespace troupe {

namespace {

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
uint64_t fmix(uint64_t k) { // MurmurHash3's finalizer: every input bit moves every output bit
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  return k ^ (k >> 33);
}

std::string hex(const std::array<uint64_t, 2>& k) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(k[0]),
                static_cast<unsigned long long>(k[1]));
  return buf;
}

} // namespace

std::filesystem::path cache_entry_path(const std::string& dir, const std::array<uint64_t, 2>& key, std::string_view suffix) {
  return std::filesystem::path(dir) / (hex(key) + std::string(suffix));
}

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  // A name of its own per writer, then one rename: readers see the old file or the new one.
  std::random_device rd;
  const auto tmp = path.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  try {
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      f.close();
      if (!f) throw Exception("cannot write " + tmp + ": " + std::strerror(errno));
    }
    std::filesystem::rename(tmp, path);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

std::array<uint64_t, 2> hash128(std::string_view bytes) {
  uint64_t h1 = 0x9e3779b97f4a7c15ull, h2 = 0x6a09e667f3bcc909ull;
  const std::size_t words = bytes.size() / 8;
  for (std::size_t i = 0; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + 8 * i, 8);
    h1 = rotl(h1 ^ (w * 0x87c37b91114253d5ull), 31) * 0x4cf5ad432745937full;
    h2 = rotl(h2 ^ (w * 0x52dce729da3ed7b5ull), 29) * 0x38495ab5ull + h1;
  }
  uint64_t tail = 0;
  if (bytes.size() > 8 * words) std::memcpy(&tail, bytes.data() + 8 * words, bytes.size() - 8 * words);
  h1 = fmix(h1 ^ tail ^ bytes.size());
  h2 = fmix(h2 ^ rotl(tail, 17) ^ h1);
  return {h1, h2};
}

std::string compile_settings(const kernels::compile_config& cfg) {
  return "precision=" + to_string(cfg.inference_precision) + ";f16_arithmetic=" + (cfg.f16_arithmetic ? "1" : "0");
}

void library_warning(const std::string& text) { std::fprintf(stderr, "troupe: warning: %s\n", text.c_str()); }

} // namespace troupe
