#include "kernels/reference/common.hpp"

#include "graph/op_domain.hpp"

namespace troupe::kernels::reference {

namespace {
const kernel_map& kernels() {
  static const kernel_map m = [] {
    kernel_map k;
    register_unary(k);
    register_binary(k);
    register_matmul(k);
    register_conv(k);
    register_pooling(k);
    register_normalization(k);
    register_softmax(k);
    register_reduce(k);
    register_movement(k);
    register_indexing(k);
    register_generators(k);
    register_cast(k);
    register_resize(k);
    register_loss(k);
    register_selection(k);
    register_einsum(k);
    register_quantize(k);
    register_windows(k);
    register_grid_sample(k);
    register_recurrent(k);
    register_signal(k);
    register_roi_align(k);
    register_tfidf_vectorizer(k);
    register_sequence(k);
    register_control_flow(k);
    register_strings(k);
    register_detection(k);
    return k;
  }();
  return m;
}
} // namespace

kernel_fn find_kernel(const std::string& op_type) {
  auto it = kernels().find(op_type);
  return it == kernels().end() ? nullptr : it->second;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> r;
  for (const auto& [name, fn] : kernels()) r.push_back(name);
  return r; // std::map keeps them sorted
}

void apply_fused_activation(const graph::Op& op, Tensor& t) {
  if (!op.has_attr("activation")) return;
  std::string name = op.attr_string("activation", "");
  auto params = op.attr_floats("activation_params");
  static const char* known[] = {"Relu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Clip", "LeakyRelu"};
  bool ok = false;
  for (auto* k : known) ok = ok || name == k;
  if (!ok) throw Exception(graph::describe(op) + ": unknown fused activation '" + name + "'");
  dispatch(t.get_element_type(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      T* p = t.data<T>();
      for (int64_t i = 0; i < t.get_size(); ++i)
        p[i] = T(static_cast<calc_t<T>>(activation_value(name, static_cast<double>(static_cast<calc_t<T>>(p[i])), params)));
    } else {
      throw Exception(graph::describe(op) + ": fused activation on non-float type " + to_string(t.get_element_type()));
    }
  });
}

std::string kernel_refusal(const graph::Op& op) {
  if (auto why = graph::domain_refusal(op); !why.empty()) return "no reference kernel: " + why;
  if (!find_kernel(op.type)) return "no reference kernel for op type '" + op.type + "'";
  return "";
}

std::string refusal(const graph::Graph& g, const graph::Op& op) {
  if (auto why = kernel_refusal(op); !why.empty()) return why;
  if (auto why = unsupported_in_subgraphs(op); !why.empty()) return why;
  return string_refusal(g, op);
}

void evaluate(const graph::Op& op, const std::vector<Tensor>& in, std::vector<Tensor>& out, int64_t opset) {
  if (auto why = kernel_refusal(op); !why.empty()) throw Exception(graph::describe(op) + ": " + why);
  kernel_fn k = find_kernel(op.type);
  auto is_string = [](const Tensor& t) { return !t.empty() && t.get_element_type() == element_type::string; };
  if (std::any_of(in.begin(), in.end(), is_string) || std::any_of(out.begin(), out.end(), is_string)) {
    k = find_string_kernel(op.type);
    if (!k) throw Exception(graph::describe(op) + ": op type '" + op.type + "' takes no string tensors");
  }
  k(context(op, opset), in, out);
  if (op.has_attr("activation") && !out.empty() && !out[0].empty()) apply_fused_activation(op, out[0]);
}

} // namespace troupe::kernels::reference
