/// Einsum on shaders/einsum.comp: any equation of 1 to 3 f32 (or f64, on the einsum_f64 variant)
/// inputs over at most 8 labels (transposes, contractions, sums over repeated or omitted
/// labels, diagonals, ellipses).
#include <troupe/exception.hpp>

#include <optional>
#include <utility>

#include "graph/einsum.hpp"
#include <limits>

#include "kernels/vulkan/lowering.hpp"

namespace troupe::kernels::vulkan {

namespace {

constexpr int max_labels = 8;

struct einsum_geom {
  graph::einsum_plan plan;
  std::vector<int64_t> size;
};

einsum_geom geometry(const graph::Graph& g, const graph::Op& op) {
  std::vector<std::size_t> ranks;
  std::vector<std::vector<int64_t>> dims;
  for (auto v : op.inputs) {
    Shape s = shape_of(g, v);
    ranks.push_back(s.size());
    dims.emplace_back(s.begin(), s.end());
  }
  einsum_geom e;
  e.plan = graph::parse_einsum(op.attr_string("equation", ""), ranks);
  e.size = graph::einsum_sizes(e.plan, dims);
  return e;
}

/// The output's elements (one invocation each) and the terms each one sums; nullopt when
/// either product reaches 2^32 (guarded: the plain product of large dims wraps).
std::optional<std::pair<int64_t, int64_t>> term_counts(const einsum_geom& e) {
  constexpr int64_t limit = int64_t{1} << 32;
  const int no = static_cast<int>(e.plan.output.size());
  int64_t total = 1, sums = 1;
  for (int l = 0; l < e.plan.labels; ++l) {
    int64_t& n = l < no ? total : sums;
    const int64_t s = e.size[static_cast<std::size_t>(l)];
    if (s > 0 && n > (limit - 1) / s) return std::nullopt;
    n *= s;
  }
  return std::make_pair(total, sums);
}

std::string check(const graph::Graph& g, const graph::Op& op) {
  if (op.inputs.empty() || op.inputs.size() > 3) return "only 1 to 3 inputs have a Vulkan shader";
  const auto t = g.value(op.outputs.at(0)).type;
  if (t != element_type::f32 && t != element_type::f64) return "the output is " + to_string(t) + "; the shader takes f32 or f64";
  for (std::size_t i = 0; i < op.inputs.size(); ++i)
    if (op.inputs[i] == graph::no_value || g.value(op.inputs[i]).type != t)
      return "input " + std::to_string(i) + " is not " + to_string(t) + " as the output is";
  einsum_geom e;
  try {
    e = geometry(g, op);
  } catch (const Exception& ex) {
    return std::string(ex.what());
  }
  if (e.plan.labels > max_labels)
    return "equation has " + std::to_string(e.plan.labels) + " labels; the shader takes at most " + std::to_string(max_labels);
  const auto counts = term_counts(e);
  if (!counts) return std::string("more than 2^32 output elements or summed terms");
  constexpr int64_t max_sums = int64_t{1} << 20;
  const int64_t sums = counts->second;
  if (sums > max_sums)
    return "each output element sums " + std::to_string(sums) +
           " terms in one invocation; the shader takes at most 2^20 (a reduction this long belongs to ReduceSum)";
  return "";
}

void lower(op_builder& b) {
  const auto& g = b.graph();
  const auto& op = b.op();
  einsum_geom e = geometry(g, op);
  const auto& p = e.plan;
  int no = static_cast<int>(p.output.size());
  const auto [total, sums] = *term_counts(e); // check() refused what overflows
  spec_map spec;
  spec[0] = static_cast<uint32_t>(total);
  spec[1] = static_cast<uint32_t>(sums);
  spec[2] = static_cast<uint32_t>(no);
  spec[3] = static_cast<uint32_t>(p.labels);
  spec[4] = static_cast<uint32_t>(op.inputs.size());
  for (int l = 0; l < p.labels; ++l) spec[static_cast<uint32_t>(8 + l)] = static_cast<uint32_t>(e.size[static_cast<std::size_t>(l)]);
  std::vector<buffer_ref> args;
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    const auto stride = graph::einsum_strides(p, k, shape_of(g, op.inputs[k]));
    for (int l = 0; l < max_labels; ++l)
      spec[static_cast<uint32_t>(16 + 8 * k + static_cast<std::size_t>(l))] =
          l < p.labels ? static_cast<uint32_t>(stride[static_cast<std::size_t>(l)]) : 0u;
    args.push_back(b.input(k));
  }
  while (args.size() < 3) args.push_back(args.front());
  args.push_back(b.output(0));
  const bool f64 = g.value(op.outputs.at(0)).type == element_type::f64;
  if (total > 0) b.dispatch(f64 ? "einsum_f64" : "einsum", std::move(spec), std::move(args), static_cast<uint64_t>(total));
}

} // namespace

bool needs_shader_float64(const graph::Graph& g, const graph::Op& op) {
  return op.type == "Einsum" && !op.outputs.empty() && g.value(op.outputs[0]).type == element_type::f64;
}

void add_einsum_rules(rule_table& t) {
  t["Einsum"] = {check, lower,
                 "1 to 3 f32 or f64 inputs (f64: the device has shaderFloat64), at most 8 labels (ellipsis dims count as labels), "
                 "output elements < 2^32, at most 2^20 summed terms per output element"};
  // Each output element loops over its summed terms, each over the summed labels.
  t["Einsum"].trips = [](const graph::Graph& g, const graph::Op& op) {
    const auto e = geometry(g, op);
    const auto c = term_counts(e);
    const auto inner = static_cast<uint64_t>(e.plan.labels - static_cast<int>(e.plan.output.size())) + 1;
    return c ? static_cast<uint64_t>(c->second) * (inner + 1) + 16 : std::numeric_limits<uint64_t>::max();
  };
}

} // namespace troupe::kernels::vulkan
