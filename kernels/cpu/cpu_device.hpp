#pragma once
/// The CPU device: oneDNN primitives for the compute-heavy ops, the reference kernels for
/// data movement and everything oneDNN does not cover.
#include <memory>
#include <string>
#include <vector>

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

/// The op types the CPU tries oneDNN primitives for (f32 inputs, static shapes, attributes
/// oneDNN can express); every other op, and these where oneDNN cannot, runs a reference kernel.
std::vector<std::string> onednn_op_types();

} // namespace troupe::kernels::cpu
