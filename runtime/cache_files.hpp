#pragma once
/// What the files troupe keeps in CACHE_DIR (HETERO's calibrations) and exports are made of:
/// a hash for keys and checksums, the settings text, atomic writes, and the library's warnings.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "kernels/device.hpp"

namespace troupe {

/// 128 bits of a fast non-cryptographic hash (8 bytes per step): cache keys and checksums of
/// megabytes of weights cost a millisecond or two, not ten.
std::array<uint64_t, 2> hash128(std::string_view bytes);

/// The compile settings a compiled model depends on, as text ("precision=f32;f16_arithmetic=0").
std::string compile_settings(const kernels::compile_config& cfg);

/// "<dir>/<32 hex digits of key><suffix>": where an entry of that key lies.
std::filesystem::path cache_entry_path(const std::string& dir, const std::array<uint64_t, 2>& key, std::string_view suffix);
/// Writes `bytes` to a temporary file beside `path` and renames it there, so that readers see
/// the old file or the new one, never half; throws naming the file it cannot write.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

/// "troupe: warning: ..." on stderr: what the library corrected by itself.
void library_warning(const std::string& text);

} // namespace troupe
