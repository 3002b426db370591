#include <algorithm>

#include <troupe/exception.hpp>

#include "graph/sequence.hpp"
#include "kernels/vulkan/lowering.hpp"

namespace troupe::kernels::vulkan {

const std::map<std::string, op_rule>& op_rules() {
  static const rule_table t = [] {
    rule_table r;
    add_eltwise_rules(r);
    add_typed_eltwise_rules(r);
    add_conv_rules(r);
    add_matmul_rules(r);
    add_pool_rules(r);
    add_movement_rules(r);
    add_pad_rules(r);
    add_indexing_rules(r);
    add_reduce_rules(r);
    add_loss_rules(r);
    add_einsum_rules(r);
    add_cast_rules(r);
    add_quantize_rules(r);
    add_conv_integer_rules(r);
    add_attention_rules(r);
    add_post_affine_rules(r);
    add_int8_epilogue_rules(r);
    return r;
  }();
  return t;
}

namespace {
/// Domain, rule and attribute checks: what query_op and query_op_pending share.
support query_attrs(const graph::Op& op) {
  auto no = [&](const std::string& why) { return support{false, graph::describe(op) + ": " + why}; };
  if (!op.domain.empty() && op.domain != "ai.onnx") return no("no Vulkan shader for domain '" + op.domain + "'");
  if (op.has_subgraphs()) return no("control flow (an op with subgraphs) runs on the CPU, not the GPU");
  if (graph::is_sequence_op(op.type)) return no("sequence ops run on the CPU, not the GPU");
  auto it = op_rules().find(op.type);
  if (it == op_rules().end()) return no("no Vulkan shader for op type '" + op.type + "'");
  if (it->second.check_attrs)
    if (auto why = it->second.check_attrs(op); !why.empty()) return no(why);
  return {true, ""};
}
} // namespace

support query_op_pending(const graph::Graph& g, const graph::Op& op) {
  if (auto s = query_attrs(op); !s.supported) return s;
  const auto& rule = op_rules().at(op.type);
  if (rule.check_waiting)
    if (auto why = rule.check_waiting(g, op); !why.empty()) return {false, graph::describe(op) + ": " + why};
  return {true, ""};
}

support query_op(const graph::Graph& g, const graph::Op& op) {
  auto no = [&](const std::string& why) { return support{false, graph::describe(op) + ": " + why}; };
  for (const auto* ids : {&op.inputs, &op.outputs})
    for (auto v : *ids)
      if (v != graph::no_value && g.value(v).type == element_type::string)
        return no("'" + g.value(v).name + "' is a string tensor; GPU buffers hold numbers only");
  if (auto pending = query_attrs(op); !pending.supported) return pending;
  auto it = op_rules().find(op.type);
  for (auto v : op.outputs) {
    if (v == graph::no_value) continue;
    const auto& val = g.value(v);
    if (!val.shape.rank_known || !val.shape.is_static()) return no("output '" + val.name + "' has a dynamic shape");
  }
  for (auto v : op.inputs) {
    if (v == graph::no_value || g.is_constant(v)) continue;
    const auto& val = g.value(v);
    if (!val.shape.rank_known || !val.shape.is_static()) return no("input '" + val.name + "' has a dynamic shape");
  }
  std::string why = it->second.check(g, op);
  if (!why.empty()) return no(why);
  return {true, ""};
}

support check_loops(const graph::Graph& g, const graph::Op& op, uint64_t loop_limit, const std::string& device_name) {
  if (loop_limit == 0) return {true, ""};
  const auto it = op_rules().find(op.type);
  if (it == op_rules().end() || !it->second.trips) return {true, ""};
  const uint64_t n = it->second.trips(g, op);
  if (n <= loop_limit) return {true, ""};
  return {false, graph::describe(op) + ": its shader would loop " + std::to_string(n) + " times in one invocation; " +
                     device_name + " (llvmpipe) ends a shader's loops after " + std::to_string(loop_limit) +
                     " iterations, so this size is refused rather than computed wrong"};
}

int element_kind(element_type t) {
  switch (t) {
  case element_type::f32: return 0;
  case element_type::i32: return 1;
  case element_type::u32: return 2;
  case element_type::i64: return 3;
  case element_type::u8: return 4;
  case element_type::i8: return 5;
  case element_type::boolean: return 6;
  case element_type::f16: return 7;
  case element_type::u16: return 8;
  case element_type::i16: return 9;
  case element_type::u64: return 10;
  default: return -1;
  }
}

Shape shape_of(const graph::Graph& g, graph::ValueId v) {
  const auto& val = g.value(v);
  if (val.constant) return val.constant->get_shape();
  return val.shape.to_shape();
}

namespace {
const std::map<std::string, int>& activation_codes() {
  static const std::map<std::string, int> m = {{"Relu", 1},        {"Sigmoid", 2}, {"Tanh", 3},     {"HardSigmoid", 4},
                                                 {"HardSwish", 5}, {"Clip", 6},    {"LeakyRelu", 7}};
  return m;
}
} // namespace

std::string check_activation(const graph::Op& op) {
  if (!op.has_attr("activation")) return "";
  auto name = op.attr_string("activation", "");
  if (!activation_codes().count(name)) return "fused activation '" + name + "' has no Vulkan shader";
  return "";
}

void add_activation(const graph::Op& op, spec_map& spec) {
  if (op.has_attr(post_affine_attr)) {
    auto ab = op.attr_floats(post_affine_attr);
    spec[63] = 1;
    spec[64] = float_bits(ab.at(0));
    spec[65] = float_bits(ab.at(1));
  }
  if (!op.has_attr("activation")) return;
  auto name = op.attr_string("activation", "");
  int code = activation_codes().at(name);
  auto p = op.attr_floats("activation_params");
  float a = 0, b = 0;
  if (name == "HardSigmoid") { a = p.size() > 0 ? p[0] : 0.2f; b = p.size() > 1 ? p[1] : 0.5f; }
  if (name == "Clip") {
    a = p.size() > 0 ? p[0] : -std::numeric_limits<float>::max();
    b = p.size() > 1 ? p[1] : std::numeric_limits<float>::max();
  }
  if (name == "LeakyRelu") a = p.size() > 0 ? p[0] : 0.01f;
  spec[60] = static_cast<uint32_t>(code);
  spec[61] = float_bits(a);
  spec[62] = float_bits(b);
}

std::vector<int64_t> const_ints(const graph::Graph& g, const graph::Op& op, std::size_t i) {
  if (i >= op.inputs.size() || op.inputs[i] == graph::no_value) return {};
  const auto& c = g.value(op.inputs[i]).constant;
  if (!c) throw Exception(graph::describe(op) + ": input " + std::to_string(i) + " must be a constant");
  std::vector<int64_t> r(static_cast<std::size_t>(c->get_size()));
  for (std::size_t k = 0; k < r.size(); ++k) {
    switch (c->get_element_type()) {
    case element_type::i64: r[k] = c->data<int64_t>()[k]; break;
    case element_type::i32: r[k] = c->data<int32_t>()[k]; break;
    default: throw Exception(graph::describe(op) + ": input " + std::to_string(i) + " must be int32/int64");
    }
  }
  return r;
}

std::vector<float> const_floats(const graph::Graph& g, const graph::Op& op, std::size_t i) {
  if (i >= op.inputs.size() || op.inputs[i] == graph::no_value) return {};
  const auto& c = g.value(op.inputs[i]).constant;
  if (!c) throw Exception(graph::describe(op) + ": input " + std::to_string(i) + " must be a constant");
  if (c->get_element_type() != element_type::f32)
    throw Exception(graph::describe(op) + ": input " + std::to_string(i) + " must be float32");
  return std::vector<float>(c->data<float>(), c->data<float>() + c->get_size());
}

std::vector<int64_t> window_pads(const graph::Op& op, const Shape& in, const Shape& out, const std::vector<int64_t>& k,
                                 const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
  const std::size_t n = k.size();
  std::vector<int64_t> p(2 * n, 0);
  auto auto_pad = op.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (std::size_t i = 0; i < n; ++i) {
      int64_t total = std::max<int64_t>(0, (out[2 + i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in[2 + i]);
      int64_t small = total / 2;
      p[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      p[n + i] = total - p[i];
    }
  } else if (auto_pad == "NOTSET") {
    auto pads = op.attr_ints("pads", p);
    if (pads.size() == 2 * n) p = pads;
  }
  return p;
}

std::vector<int64_t> transposed_pads(const graph::Op& op, const Shape& in, const Shape& out, const std::vector<int64_t>& k,
                                     const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
  const std::size_t n = k.size();
  auto p = op.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (p.size() != 2 * n) p.assign(2 * n, 0);
  auto opad = op.attr_ints("output_padding", std::vector<int64_t>(n, 0));
  auto ap = op.attr_string("auto_pad", "NOTSET");
  for (std::size_t i = 0; i < n; ++i) {
    int64_t total = s[i] * (in[2 + i] - 1) + (opad.size() == n ? opad[i] : 0) + (k[i] - 1) * d[i] + 1 - out[2 + i];
    int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); // floor(total / 2), as the reference
    int64_t begin = p[i];
    if (ap == "VALID") begin = 0;
    else if (ap == "SAME_UPPER") begin = half;
    else if (ap == "SAME_LOWER" || op.has_attr("output_shape")) begin = total - half;
    p[i] = begin;
    p[n + i] = total - begin;
  }
  return p;
}

} // namespace troupe::kernels::vulkan
