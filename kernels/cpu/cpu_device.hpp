#pragma once
/// The CPU device: oneDNN primitives for the compute-heavy ops, the reference kernels for
/// data movement and everything oneDNN does not cover.
#include <memory>

#include "kernels/device.hpp"

namespace troupe::kernels::cpu {

class cpu_device : public kernels::device {
public:
  std::string name() const override { return "CPU"; }
  std::map<std::string, std::string> info() const override;
  support query(const graph::Graph& g, const graph::Op& op) const override;
  std::unique_ptr<executable> compile(const graph::Graph& g, const compile_config& cfg) const override;
};

std::unique_ptr<kernels::device> make_cpu_device();

} // namespace troupe::kernels::cpu
