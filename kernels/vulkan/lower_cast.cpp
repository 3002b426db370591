/// Cast and CastLike on shaders/cast.comp: between f32, f16, i32, u32, i64, u8, i8 and bool,
/// reading and writing the raw words (a u8 frame is uploaded as it is, converted on the GPU).
#include "kernels/vulkan/lowering.hpp"

namespace troupe::kernels::vulkan {

namespace {

/// The shader's code for an element type; -1 when it has none (cast.comp knows kinds 0..7).
int kind_of(element_type t) {
  const int k = element_kind(t);
  return k <= 7 ? k : -1;
}

std::string check_cast(const graph::Graph& g, const graph::Op& op) {
  for (auto v : {op.inputs.at(0), op.outputs.at(0)})
    if (kind_of(g.value(v).type) < 0)
      return "element type " + to_string(g.value(v).type) + " has no Vulkan cast (f32, f16, i32, u32, i64, u8, i8, bool)";
  return "";
}

void lower_cast(op_builder& b) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const element_type from = g.value(op.inputs[0]).type, to = g.value(op.outputs[0]).type;
  if (from == to) return b.alias_output();
  const auto n = static_cast<uint64_t>(shape_size(shape_of(g, op.outputs[0])));
  if (n == 0) return;
  spec_map s;
  s[0] = static_cast<uint32_t>(n);
  s[1] = static_cast<uint32_t>(kind_of(from));
  s[2] = static_cast<uint32_t>(kind_of(to));
  if (from == element_type::i32 && to == element_type::f32 && n % 4 == 0) {
    b.dispatch("cast_i32_f32_v4", std::move(s), {word_texels(b.input(0), 4), texels(b.output(0), 4)}, n / 4);
    return;
  }
  // One invocation per output word: byte-sized outputs pack four elements into one.
  const uint64_t words = element_size(to) == 1 ? (n + 3) / 4 : n;
  b.dispatch("cast", std::move(s), {b.input(0), b.output(0)}, words);
}

} // namespace

void add_cast_rules(rule_table& t) {
  const char* types = "between f32, f16, i32, u32, i64, u8, i8 and bool";
  t["Cast"] = {check_cast, lower_cast, types};
  t["CastLike"] = {check_cast, lower_cast, types};
}

} // namespace troupe::kernels::vulkan
