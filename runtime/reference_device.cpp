#include "runtime/reference_device.hpp"

#include <chrono>

#include <troupe/exception.hpp>

#include "kernels/reference/kernels.hpp"

namespace troupe {

namespace {

class reference_executable : public kernels::executable {
public:
  reference_executable(std::shared_ptr<const graph::Graph> g, bool profiling)
      : graph_(std::move(g)), profiling_(profiling) {}

  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    const auto& g = *graph_;
    if (inputs.size() != g.inputs.size())
      throw Exception("REFERENCE: expected " + std::to_string(g.inputs.size()) + " inputs, got " +
                      std::to_string(inputs.size()));
    std::vector<Tensor> vals(g.values.size());
    for (std::size_t i = 0; i < g.values.size(); ++i)
      if (g.values[i].constant) vals[i] = *g.values[i].constant;
    for (std::size_t i = 0; i < inputs.size(); ++i) vals[static_cast<std::size_t>(g.inputs[i])] = inputs[i];
    if (profiling_) profile_.assign(g.ops.size(), {});
    for (std::size_t k = 0; k < g.ops.size(); ++k) {
      const auto& op = g.ops[k];
      auto t0 = std::chrono::steady_clock::now();
      std::vector<Tensor> in;
      in.reserve(op.inputs.size());
      for (auto id : op.inputs) in.push_back(id == graph::no_value ? Tensor() : vals[static_cast<std::size_t>(id)]);
      std::vector<Tensor> out;
      out.reserve(op.outputs.size());
      for (auto id : op.outputs) {
        if (id == graph::no_value) { out.emplace_back(); continue; }
        const auto& v = g.value(id);
        out.emplace_back(v.type, v.shape.to_shape());
      }
      kernels::reference::evaluate(op, in, out, g.opset);
      for (std::size_t j = 0; j < op.outputs.size(); ++j)
        if (op.outputs[j] != graph::no_value) vals[static_cast<std::size_t>(op.outputs[j])] = std::move(out[j]);
      if (profiling_) {
        auto& p = profile_[k];
        p.node_name = op.name;
        p.node_type = op.type;
        p.exec_type = "ref";
        p.real_time_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      }
    }
    outputs.clear();
    for (auto id : g.outputs) outputs.push_back(vals[static_cast<std::size_t>(id)]);
  }

  std::vector<kernels::op_profile> profile() const override { return profile_; }
  std::unique_ptr<kernels::executable> clone() const override {
    return std::make_unique<reference_executable>(graph_, profiling_);
  }

private:
  std::shared_ptr<const graph::Graph> graph_;
  bool profiling_;
  std::vector<kernels::op_profile> profile_;
};

class reference_device : public kernels::device {
public:
  std::string name() const override { return "REFERENCE"; }
  std::map<std::string, std::string> info() const override {
    return {{"FULL_DEVICE_NAME", "troupe reference kernels (plain C++, one op at a time)"},
            {"OPTIMIZATION_CAPABILITIES", "FP32"}};
  }
  kernels::support query(const graph::Graph& g, const graph::Op& op) const override {
    if (!op.domain.empty() && op.domain != "ai.onnx") return {false, "no reference kernel for domain '" + op.domain + "'"};
    if (!kernels::reference::find_kernel(op.type)) return {false, "no reference kernel for op type '" + op.type + "'"};
    for (auto id : op.outputs)
      if (id != graph::no_value && !g.value(id).shape.is_static())
        return {false, "output '" + g.value(id).name + "' has dynamic shape " + g.value(id).shape.to_string()};
    return {true, {}};
  }
  std::unique_ptr<kernels::executable> compile(const graph::Graph& g, const kernels::compile_config& cfg) const override {
    for (const auto& op : g.ops) {
      auto s = query(g, op);
      if (!s.supported) throw Exception("REFERENCE cannot compile " + graph::describe(op) + ": " + s.reason);
    }
    return std::make_unique<reference_executable>(std::make_shared<const graph::Graph>(g), cfg.profiling);
  }
};

} // namespace

std::unique_ptr<kernels::device> make_reference_device() { return std::make_unique<reference_device>(); }

} // namespace troupe
