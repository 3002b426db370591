/// Element-wise ops on any element type, on shaders/eltwise_typed.comp: comparisons, logic,
/// Where, Mod, BitShift, IsInf/IsNaN, integer arithmetic and Clip with tensor bounds. An op the
/// f32 shader (lower_eltwise.cpp) takes keeps that rule; this one takes the rest.
#include <cstring>
#include <set>

#include <troupe/float16.hpp>

#include "kernels/vulkan/broadcast.hpp"
#include "kernels/vulkan/lowering.hpp"

namespace troupe::kernels::vulkan {

namespace {

/// The shader's op codes (shaders/eltwise_typed.comp).
enum code : uint32_t {
  copy_op = 0, neg = 1, abs_op = 2, sign = 3, relu = 4, not_op = 5, is_nan = 6, is_inf = 7,
  add = 10, sub = 11, mul = 12, div_op = 13, pow_op = 14, mod = 15, fmod = 16, min_op = 17, max_op = 18,
  eq = 19, lt = 20, le = 21, gt = 22, ge = 23, and_op = 24, or_op = 25, xor_op = 26, shl = 27, shr = 28,
  where = 30, clip = 31,
};

const char* kinds_text = "f32, f16, i8, i16, i32, i64, u8, u16, u32, u64, bool";

bool is_float(element_type t) { return t == element_type::f32 || t == element_type::f16; }
bool is_64(element_type t) { return t == element_type::i64 || t == element_type::u64; }
bool is_int(element_type t) { return element_kind(t) >= 0 && !is_float(t) && t != element_type::boolean; }

/// Each op type's operands and output, in words for the docs and for query's answers.
struct signature {
  enum class in { any, numeric, integer, floating, boolean } inputs;
  bool same_types = true;   ///< every data input of one type
  bool bool_output = false; ///< else the output has the inputs' type
  std::size_t min_inputs = 1, max_inputs = 1;
  const char* text;
};

const std::map<std::string, signature>& signatures() {
  using in = signature::in;
  static const std::map<std::string, signature> m = {
      {"Neg", {in::numeric, true, false, 1, 1, "one input of a numeric type"}},
      {"Abs", {in::numeric, true, false, 1, 1, "one input of a numeric type"}},
      {"Sign", {in::numeric, true, false, 1, 1, "one input of a numeric type"}},
      {"Relu", {in::numeric, true, false, 1, 1, "one input of a numeric type"}},
      {"Not", {in::boolean, true, false, 1, 1, "one bool input"}},
      {"IsNaN", {in::floating, true, true, 1, 1, "one f32 or f16 input"}},
      {"IsInf", {in::floating, true, true, 1, 1, "one f32 or f16 input; detect_positive, detect_negative"}},
      {"Add", {in::numeric, true, false, 2, 2, "two inputs of one numeric type (numpy broadcasting)"}},
      {"Sub", {in::numeric, true, false, 2, 2, "two inputs of one numeric type (numpy broadcasting)"}},
      {"Mul", {in::numeric, true, false, 2, 2, "two inputs of one numeric type (numpy broadcasting)"}},
      {"Div", {in::numeric, true, false, 2, 2, "two inputs of one numeric type (numpy broadcasting); integers truncate"}},
      {"Mod", {in::numeric, true, false, 2, 2, "two inputs of one numeric type (numpy broadcasting); fmod 0 or 1"}},
      {"Pow", {in::numeric, false, false, 2, 2, "base and exponent of numeric types (numpy broadcasting)"}},
      {"Min", {in::any, true, false, 1, 1000, "one or more inputs of one type (numpy broadcasting)"}},
      {"Max", {in::any, true, false, 1, 1000, "one or more inputs of one type (numpy broadcasting)"}},
      {"Sum", {in::numeric, true, false, 1, 1000, "one or more inputs of one numeric type (numpy broadcasting)"}},
      {"Equal", {in::any, true, true, 2, 2, "two inputs of one type (numpy broadcasting)"}},
      {"Less", {in::any, true, true, 2, 2, "two inputs of one type (numpy broadcasting)"}},
      {"LessOrEqual", {in::any, true, true, 2, 2, "two inputs of one type (numpy broadcasting)"}},
      {"Greater", {in::any, true, true, 2, 2, "two inputs of one type (numpy broadcasting)"}},
      {"GreaterOrEqual", {in::any, true, true, 2, 2, "two inputs of one type (numpy broadcasting)"}},
      {"And", {in::boolean, true, true, 2, 2, "two bool inputs (numpy broadcasting)"}},
      {"Or", {in::boolean, true, true, 2, 2, "two bool inputs (numpy broadcasting)"}},
      {"Xor", {in::boolean, true, true, 2, 2, "two bool inputs (numpy broadcasting)"}},
      {"BitShift", {in::integer, true, false, 2, 2, "two inputs of one integer type (numpy broadcasting); direction LEFT or RIGHT"}},
      {"Where", {in::any, true, false, 3, 3, "bool condition, X and Y of one type (numpy broadcasting)"}},
      {"Clip", {in::numeric, true, false, 1, 3, "input of a numeric type; min and max scalars of its type, tensors or constants"}},
  };
  return m;
}

const char* in_text(signature::in k) {
  switch (k) {
  case signature::in::numeric: return "a numeric type";
  case signature::in::integer: return "an integer type";
  case signature::in::floating: return "f32 or f16";
  case signature::in::boolean: return "bool";
  default: return "any type";
  }
}

bool accepts(signature::in k, element_type t) {
  switch (k) {
  case signature::in::numeric: return t != element_type::boolean;
  case signature::in::integer: return is_int(t);
  case signature::in::floating: return is_float(t);
  case signature::in::boolean: return t == element_type::boolean;
  default: return true;
  }
}

std::string check_typed(const graph::Graph& g, const graph::Op& op) {
  const auto& sig = signatures().at(op.type);
  const std::size_t n = op.input_count();
  if (n < sig.min_inputs || n > sig.max_inputs || op.inputs.empty() || op.inputs[0] == graph::no_value)
    return std::string("expects ") + std::to_string(sig.min_inputs) + (sig.max_inputs > sig.min_inputs ? " or more" : "") +
           " inputs";
  if (op.type != "Clip")
    for (auto v : op.inputs)
      if (v == graph::no_value) return std::string("an omitted input has no Vulkan shader");
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    auto v = op.inputs[i];
    if (v == graph::no_value) continue;
    const auto t = g.value(v).type;
    if (element_kind(t) < 0) return "input " + std::to_string(i) + " is " + to_string(t) + "; the typed shader takes " + kinds_text;
    // Data inputs: all but Where's condition.
    const bool data = !(op.type == "Where" && i == 0);
    if (!data && t != element_type::boolean) return "the condition is " + to_string(t) + ", not bool";
    if (data && !accepts(sig.inputs, t)) return "input " + std::to_string(i) + " is " + to_string(t) + "; the op takes " + in_text(sig.inputs);
    const auto first = g.value(op.inputs[op.type == "Where" ? 1 : 0]).type;
    if (data && sig.same_types && t != first)
      return "inputs of types " + to_string(first) + " and " + to_string(t) + " have no Vulkan shader";
  }
  const auto out = g.value(op.outputs.at(0)).type;
  const auto data_type = g.value(op.inputs[op.type == "Where" ? 1 : 0]).type;
  if (sig.bool_output ? out != element_type::boolean : out != data_type)
    return "output type " + to_string(out) + " does not match the op's inputs";
  if (op.has_attr("activation")) return "a fused activation on the typed shader has no Vulkan shader";
  if (op.type == "Mod" && op.attr_int("fmod", 0) != 0 && op.attr_int("fmod", 0) != 1) return "fmod must be 0 or 1";
  if (op.type == "BitShift") {
    auto d = op.attr_string("direction", "");
    if (d != "LEFT" && d != "RIGHT") return "direction '" + d + "' is neither LEFT nor RIGHT";
  }
  if (op.type == "Clip") {
    for (std::size_t i = 1; i < op.inputs.size(); ++i)
      if (op.inputs[i] != graph::no_value && shape_size(shape_of(g, op.inputs[i])) != 1)
        return "min and max must have one element";
    if ((op.has_attr("min") || op.has_attr("max")) && !is_float(data_type)) return "min/max attributes need a float input";
  }
  return check_rank(g, op);
}

/// One operand: a buffer, or a scalar constant the shader holds in specialization constants.
struct operand {
  buffer_ref ref;
  Shape shape;
  element_type type = element_type::f32;
  bool splat = false;
  uint32_t v0 = 0, v1 = 0;
};

/// A float as its f32 bits; an integer widened to 64 bits (low word, high word).
operand splat_of(element_type t, double f, int64_t i) {
  operand o;
  o.type = t;
  o.splat = true;
  if (is_float(t)) {
    o.v0 = float_bits(static_cast<float>(f));
  } else {
    const auto u = static_cast<uint64_t>(i);
    o.v0 = static_cast<uint32_t>(u);
    o.v1 = static_cast<uint32_t>(u >> 32);
  }
  return o;
}

operand scalar_constant(const Tensor& c) {
  const auto t = c.get_element_type();
  const auto* p = static_cast<const uint8_t*>(c.data());
  auto read = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t) {
  case element_type::f32: return splat_of(t, read(float{}), 0);
  case element_type::f16: return splat_of(t, half_bits_to_float(read(uint16_t{})), 0);
  case element_type::i8: return splat_of(t, 0, read(int8_t{}));
  case element_type::u8: return splat_of(t, 0, read(uint8_t{}));
  case element_type::boolean: return splat_of(t, 0, read(uint8_t{}) != 0);
  case element_type::i16: return splat_of(t, 0, read(int16_t{}));
  case element_type::u16: return splat_of(t, 0, read(uint16_t{}));
  case element_type::i32: return splat_of(t, 0, read(int32_t{}));
  case element_type::u32: return splat_of(t, 0, read(uint32_t{}));
  default: return splat_of(t, 0, read(int64_t{})); // i64, u64: the same bits
  }
}

operand input_operand(op_builder& b, std::size_t i) {
  const auto& g = b.graph();
  const auto v = b.op().inputs.at(i);
  const auto& c = g.value(v).constant;
  if (c && c->get_size() == 1) return scalar_constant(*c);
  operand o;
  o.ref = b.input(i);
  o.shape = shape_of(g, v);
  o.type = g.value(v).type;
  return o;
}

/// Emits one dispatch of `op_code` over 1 to 3 operands into output 0 of type `out_type`.
void emit(op_builder& b, uint32_t op_code, const std::vector<operand>& operands, uint32_t p0 = 0) {
  const auto& g = b.graph();
  const Shape out = shape_of(g, b.op().outputs[0]);
  const element_type out_type = g.value(b.op().outputs[0]).type;
  const auto total = static_cast<uint64_t>(shape_size(out));
  if (total == 0) return;
  spec_map spec;
  spec[0] = op_code;
  spec[1] = static_cast<uint32_t>(total);
  auto d = dims6(out);
  for (uint32_t i = 0; i < 6; ++i) spec[2 + i] = d[i];
  spec[29] = static_cast<uint32_t>(element_kind(out_type));
  bool wide = is_64(out_type);
  std::vector<buffer_ref> args;
  for (uint32_t k = 0; k < 3; ++k) {
    const operand& o = operands[std::min<std::size_t>(k, operands.size() - 1)];
    auto s = bstrides(o.shape);
    for (uint32_t i = 0; i < 6; ++i) spec[8 + 6 * k + i] = s[i];
    spec[26 + k] = !o.splat && o.shape == out ? 1u : 0u;
    spec[30 + k] = static_cast<uint32_t>(element_kind(o.type));
    spec[33 + k] = o.splat ? 1u : 0u;
    spec[36 + 2 * k] = o.v0;
    spec[37 + 2 * k] = o.v1;
    wide = wide || is_64(o.type);
    args.push_back(o.splat ? b.output(0) : o.ref); // a splat binds a buffer it never reads
  }
  spec[42] = p0;
  args.push_back(b.output(0));
  // One invocation per output word (4 bytes, 2 16-bit elements) or element (32, 64 bits); a
  // float tensor counts as 32 bits (in float16 storage, the spare invocations return at once).
  const std::size_t bytes = element_size(out_type);
  const uint64_t invocations = bytes < 4 ? (total * bytes + 3) / 4 : total;
  b.dispatch(wide ? "eltwise_typed_i64" : "eltwise_typed", std::move(spec), std::move(args), invocations);
}

uint32_t code_of(const graph::Op& op) {
  static const std::map<std::string, uint32_t> m = {
      {"Neg", neg},      {"Abs", abs_op}, {"Sign", sign}, {"Relu", relu},        {"Not", not_op},  {"IsNaN", is_nan},
      {"IsInf", is_inf}, {"Add", add},    {"Sub", sub},   {"Mul", mul},          {"Div", div_op},  {"Pow", pow_op},
      {"Min", min_op},   {"Max", max_op}, {"Sum", add},   {"Equal", eq},         {"Less", lt},     {"LessOrEqual", le},
      {"Greater", gt},   {"GreaterOrEqual", ge},          {"And", and_op},       {"Or", or_op},    {"Xor", xor_op},
      {"Where", where},  {"Clip", clip}};
  if (op.type == "Mod") return op.attr_int("fmod", 0) ? fmod : mod;
  if (op.type == "BitShift") return op.attr_string("direction", "") == "LEFT" ? shl : shr;
  return m.at(op.type);
}

/// Clip's bound: input i, else the attribute (opset < 11), else the type's extreme.
operand clip_bound(op_builder& b, std::size_t i, bool upper) {
  const auto& op = b.op();
  if (i < op.inputs.size() && op.inputs[i] != graph::no_value) return input_operand(b, i);
  const element_type t = b.graph().value(op.inputs[0]).type;
  const char* attr = upper ? "max" : "min";
  if (is_float(t)) {
    const float inf = std::numeric_limits<float>::infinity();
    return splat_of(t, op.has_attr(attr) ? op.attr_float(attr, 0) : (upper ? inf : -inf), 0);
  }
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  switch (t) {
  case element_type::i8: lo = -128; hi = 127; break;
  case element_type::u8: lo = 0; hi = 255; break;
  case element_type::i16: lo = -32768; hi = 32767; break;
  case element_type::u16: lo = 0; hi = 65535; break;
  case element_type::i32: lo = std::numeric_limits<int32_t>::min(); hi = std::numeric_limits<int32_t>::max(); break;
  case element_type::u32: lo = 0; hi = std::numeric_limits<uint32_t>::max(); break;
  case element_type::u64: lo = 0; hi = -1; break; // all ones: the largest u64
  default: break;
  }
  return splat_of(t, 0, upper ? hi : lo);
}

void lower_typed(op_builder& b) {
  const auto& op = b.op();
  if (shape_size(shape_of(b.graph(), op.outputs[0])) == 0) return; // an empty input gives an empty output
  const uint32_t c = code_of(op);
  if (op.type == "Clip") return emit(b, c, {input_operand(b, 0), clip_bound(b, 1, false), clip_bound(b, 2, true)});
  if (op.type == "IsInf") {
    const uint32_t p = (op.attr_int("detect_positive", 1) ? 1u : 0u) | (op.attr_int("detect_negative", 1) ? 2u : 0u);
    return emit(b, c, {input_operand(b, 0)}, p);
  }
  if (op.type == "Min" || op.type == "Max" || op.type == "Sum") {
    // A chain of binary dispatches into the output, each reading the partial result in place.
    const std::size_t n = op.inputs.size();
    if (n == 1) return emit(b, copy_op, {input_operand(b, 0)});
    emit(b, c, {input_operand(b, 0), input_operand(b, 1)});
    operand acc;
    acc.ref = b.output(0);
    acc.shape = shape_of(b.graph(), op.outputs[0]);
    acc.type = b.graph().value(op.outputs[0]).type;
    for (std::size_t i = 2; i < n; ++i) emit(b, c, {acc, input_operand(b, i)});
    return;
  }
  std::vector<operand> in;
  for (std::size_t i = 0; i < op.inputs.size(); ++i) in.push_back(input_operand(b, i));
  emit(b, c, in);
}

/// The rule a typed op type had before (the f32 shader's), if any, accepts this op.
bool f32_rule_takes(const op_rule& f32, const graph::Graph& g, const graph::Op& op) {
  return f32.check && f32.check(g, op).empty();
}

const rule_table& f32_rules() {
  static rule_table t = [] {
    rule_table r;
    add_eltwise_rules(r);
    return r;
  }();
  return t;
}

} // namespace

void add_typed_eltwise_rules(rule_table& t) {
  for (const auto& [name, sig] : signatures()) {
    op_rule f32 = t.count(name) ? t.at(name) : op_rule{};
    std::string conditions = std::string("any of ") + kinds_text + ": " + sig.text + ", rank <= 6";
    if (!f32.conditions.empty()) conditions = "f32 shader: " + f32.conditions + "; typed shader: " + conditions;
    t[name] = {[f32](const graph::Graph& g, const graph::Op& op) {
                 if (f32_rule_takes(f32, g, op)) return std::string();
                 return check_typed(g, op);
               },
               [f32](op_builder& b) {
                 if (f32_rule_takes(f32, b.graph(), b.op())) return f32.lower(b);
                 lower_typed(b);
               },
               conditions};
  }
}

bool needs_shader_int64(const graph::Graph& g, const graph::Op& op) {
  if (!signatures().count(op.type)) return false;
  if (auto it = f32_rules().find(op.type); it != f32_rules().end() && f32_rule_takes(it->second, g, op)) return false;
  auto wide = [&](graph::ValueId v) { return v != graph::no_value && is_64(g.value(v).type); };
  for (auto v : op.inputs)
    if (wide(v)) return true;
  return wide(op.outputs.at(0));
}

} // namespace troupe::kernels::vulkan
