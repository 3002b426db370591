#pragma once
/// The Vulkan implementation of kernels::device (exposed for tests that inspect memory use).
#include <memory>
#include <string>

#include "kernels/device.hpp"
#include "kernels/vulkan/context.hpp"

namespace troupe::kernels::vulkan {

class vulkan_device final : public kernels::device {
public:
  vulkan_device(std::string name, std::shared_ptr<gpu_context> ctx) : name_(std::move(name)), ctx_(std::move(ctx)) {}
  std::string name() const override { return name_; }
  std::map<std::string, std::string> info() const override;
  support query(const graph::Graph& g, const graph::Op& op) const override;
  support query_pending(const graph::Graph& g, const graph::Op& op) const override;
  std::unique_ptr<executable> compile(const graph::Graph& g, const compile_config& cfg) const override;
  gpu_context& context() const { return *ctx_; }

private:
  std::string name_;
  std::shared_ptr<gpu_context> ctx_;
};

} // namespace troupe::kernels::vulkan
