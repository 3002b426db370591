#pragma once
/// CACHE_DIR's compiled models: one file per (model, device, settings) key,
/// "<32 hex digits>.troupe" holding a compiled_blob. Written to a temporary file and renamed,
/// so processes sharing a folder never read half an entry; a damaged or stale entry (another
/// troupe version, device or settings) is ignored with a warning on stderr and written anew.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/device.hpp"
#include "runtime/compiled_blob.hpp"

namespace troupe {

/// 128 bits of a fast non-cryptographic hash (8 bytes per step): cache keys and checksums of
/// megabytes of weights cost a millisecond or two, not ten.
std::array<uint64_t, 2> hash128(std::string_view bytes);

/// The compile settings a compiled model depends on, as text ("precision=f32;f16_arithmetic=0").
std::string compile_settings(const kernels::compile_config& cfg);

/// The entry's key: the model's bytes (its wire encoding), the device, and the settings.
std::array<uint64_t, 2> cache_key(std::string_view model_bytes, const compiled_blob& target);

/// The entry for `target`'s key (device, device_name, settings and key set), or nullopt:
/// none there, or one that is damaged or stale (then after a warning naming file and reason).
std::optional<compiled_blob> cache_load(const std::string& dir, const compiled_blob& target);
/// Writes the entry; a failure (full disk, read-only folder) is a warning, not an error.
void cache_store(const std::string& dir, const compiled_blob& b);

/// "<dir>/<32 hex digits of key><suffix>": where an entry of that key lies.
std::filesystem::path cache_entry_path(const std::string& dir, const std::array<uint64_t, 2>& key, std::string_view suffix);
/// Writes `bytes` to a temporary file beside `path` and renames it there, so that readers see
/// the old file or the new one, never half; throws naming the file it cannot write.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

/// "troupe: warning: ..." on stderr: what the library corrected by itself.
void library_warning(const std::string& text);

} // namespace troupe
