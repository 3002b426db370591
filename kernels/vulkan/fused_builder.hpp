#pragma once
/// What the lowering-level fusions share: an op_builder that lowers one op of a fused chain as
/// another op (a copy carrying the chain: attrs, extra inputs) writing the chain's last value.
#include <string>
#include <utility>

#include <troupe/exception.hpp>

#include "kernels/vulkan/lowering.hpp"

namespace troupe::kernels::vulkan {

class fused_builder final : public op_builder {
public:
  /// Lowers `op` through `inner`, its output 0 being value `y`.
  fused_builder(op_builder& inner, graph::Op op, graph::ValueId y) : inner_(inner), op_(std::move(op)), y_(y) {}
  const graph::Graph& graph() const override { return inner_.graph(); }
  const graph::Op& op() const override { return op_; }
  buffer_ref value(graph::ValueId v, std::size_t i) override { return inner_.value(v, i); }
  buffer_ref output(std::size_t i) override { return i == 0 ? buffer_ref{buffer_ref::kind::value, y_} : inner_.output(i); }
  buffer_ref constant(std::vector<float> data) override { return inner_.constant(std::move(data)); }
  void dispatch(const std::string& shader, spec_map spec, std::vector<buffer_ref> args, uint64_t invocations,
                uint32_t slices, uint32_t written) override {
    inner_.dispatch(shader, std::move(spec), std::move(args), invocations, slices, written);
  }
  void alias_output() override { throw Exception(graph::describe(op_) + ": a fused chain cannot alias its output"); }
  std::pair<buffer_ref, uint32_t> status(std::string text) override { return inner_.status(std::move(text)); }

private:
  op_builder& inner_;
  graph::Op op_;
  graph::ValueId y_;
};

/// The index of the op `b` lowers in its graph, or -1 when it lowers a copy (a fused chain).
inline int index_of(const op_builder& b) {
  const auto& g = b.graph();
  auto at = &b.op() - g.ops.data();
  return at >= 0 && at < static_cast<std::ptrdiff_t>(g.ops.size()) ? static_cast<int>(at) : -1;
}

} // namespace troupe::kernels::vulkan
