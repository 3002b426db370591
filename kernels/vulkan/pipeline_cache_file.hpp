#pragma once
/// CACHE_DIR on a GPU: the device's VkPipelineCache kept in a file between runs, so a second
/// compile skips the driver's SPIR-V to machine code step. The file wraps Vulkan's own blob in
/// a header of ours (magic, size, checksum): drivers are only required to reject a foreign
/// device's blob, not a truncated or corrupted one, so nothing unchecked reaches the driver.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace troupe::kernels::vulkan {

/// What a pipeline cache blob must match: Vulkan's VkPipelineCacheHeaderVersionOne fields.
struct cache_identity {
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::array<uint8_t, 16> uuid{}; ///< pipelineCacheUUID: changes with the driver build
};

/// `<dir>/troupe-vulkan-<vendor>-<device>-<uuid>.cache`: one file per driver build and device model.
std::string cache_file_path(const std::string& dir, const cache_identity& id);

/// The Vulkan blob stored in `path`, or nullopt with `why` set: no file, not ours, truncated,
/// checksum mismatch, or a blob of another device or driver.
std::optional<std::vector<uint8_t>> read_cache_file(const std::string& path, const cache_identity& id,
                                                    std::string& why);

/// Writes `blob` to `path` through a temporary file and a rename, so a reader (another process
/// compiling at the same time) sees the old file or the new one, never half of one. Throws
/// troupe::Exception naming the file and the reason.
void write_cache_file(const std::string& path, const std::vector<uint8_t>& blob);

/// The wrapped file contents, exposed for tests that corrupt it on purpose.
std::vector<uint8_t> wrap_cache_blob(const std::vector<uint8_t>& blob);

} // namespace troupe::kernels::vulkan
