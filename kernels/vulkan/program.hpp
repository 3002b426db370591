#pragma once
/// A compiled subgraph on one Vulkan device. The immutable part (pipelines, uploaded
/// constants, the dispatch list) is shared by clones; each clone owns its value buffers,
/// staging buffers, descriptor sets and ONE pre-recorded command buffer that uploads the
/// inputs, runs every dispatch (barriers between dependent ones) and downloads the outputs.
#include <functional>
#include <memory>
#include <string>

#include "kernels/device.hpp"
#include "kernels/vulkan/context.hpp"

namespace troupe::kernels::vulkan {

/// Throws troupe::Exception naming the op or value (and `device_name`) on anything it cannot run.
std::unique_ptr<executable> compile_program(std::shared_ptr<gpu_context> ctx, const graph::Graph& g,
                                            const compile_config& cfg, const std::string& device_name);

/// Unsupported when an input or output of `op` is larger than `max_range` bytes (the device's
/// largest storage buffer); the reason names the op, the value, its size, the limit and the device.
/// `float_bytes`: how many bytes a float32 tensor takes on the device (2 with f16 storage).
support check_sizes(const graph::Graph& g, const graph::Op& op, uint64_t max_range, const std::string& device_name,
                    std::size_t float_bytes = 4);

/// Records `fill` into a one-time command buffer, submits it and waits (used for uploads at compile time).
void run_once(gpu_context& ctx, const std::function<void(VkCommandBuffer)>& fill);

} // namespace troupe::kernels::vulkan
