#pragma once
/// How an op becomes dispatches: each supported op type has a rule that says whether an op
/// (attributes, types, shapes) has a shader (query) and, if so, emits its dispatches through
/// an op_builder (lower). Rules are pure functions of the graph.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.hpp"
#include "kernels/device.hpp"
#include "kernels/vulkan/context.hpp"

namespace troupe::kernels::vulkan {

/// A buffer a dispatch binds: a (non-constant) value's device buffer, or an uploaded constant.
struct buffer_ref {
  /// status: the run's status words (op_builder::status), zeroed before every run.
  enum class kind { value, constant, status } k = kind::value;
  int id = 0; ///< value id (aliases resolved later) or index into the program's constants
  /// 0: a storage buffer. 1 or 4: a storage texel buffer of r32f or rgba32f texels, which CPU
  /// drivers (lavapipe) load with vector gathers instead of a per-invocation loop.
  uint8_t texel = 0;
  /// With texel: r32ui / rgba32ui texels (32-bit words of integer data) instead of float ones,
  /// whatever the program's float storage (f16 or f32).
  bool words = false;
};

/// `r` bound as a storage texel buffer with `floats` (1 or 4) floats per texel.
inline buffer_ref texels(buffer_ref r, uint8_t floats) {
  r.texel = floats;
  return r;
}

/// `r` bound as a storage texel buffer of `n` (1 or 4) 32-bit words per texel (r32ui, rgba32ui).
inline buffer_ref word_texels(buffer_ref r, uint8_t n) {
  r.texel = n;
  r.words = true;
  return r;
}

/// What a lowering rule can do.
class op_builder {
public:
  virtual ~op_builder() = default;
  virtual const graph::Graph& graph() const = 0;
  virtual const graph::Op& op() const = 0;
  /// Input i as a buffer: its value, or its constant uploaded once.
  buffer_ref input(std::size_t i) { return value(op().inputs.at(i), i); }
  /// Any value of the graph as a buffer (a fusion reads values of ops other than its own):
  /// its device buffer, or its constant uploaded once as raw words (floats narrowed in f16
  /// mode). `input_index` only names the input in an error.
  virtual buffer_ref value(graph::ValueId v, std::size_t input_index) = 0;
  virtual buffer_ref output(std::size_t i) = 0;
  /// Uploads host data once (e.g. reordered weights) and binds it.
  virtual buffer_ref constant(std::vector<float> data) = 0;
  /// `invocations` threads of `shader` (times `slices` along gl_WorkGroupID.z), with `args`
  /// bound to bindings 0..n-1, of which the last `written` are what the shader writes (the
  /// command buffer puts a barrier before the next dispatch that binds one of them).
  virtual void dispatch(const std::string& shader, spec_map spec, std::vector<buffer_ref> args,
                        uint64_t invocations, uint32_t slices = 1, uint32_t written = 1) = 0;
  /// Marks output 0 as sharing input 0's buffer (Reshape and friends): no dispatch.
  virtual void alias_output() = 0;
  /// Where a shader reports bad input (an index out of range) instead of reading out of
  /// bounds: the run's status words, zeroed before each run, and the tag the shader writes to
  /// word 0 (the first report wins; words 1 and 2 hold the offending int64 index). The run then
  /// fails as bad input with `text`, "{index}" replaced by that index.
  virtual std::pair<buffer_ref, uint32_t> status(std::string text) = 0;
};

struct op_rule {
  /// Empty string = supported; otherwise why not.
  std::function<std::string(const graph::Graph&, const graph::Op&)> check;
  std::function<void(op_builder&)> lower;
  /// What `check` accepts, in words, for users (docs/ops.md is generated from it by docs/gen):
  /// each rule file sets it beside its checks.
  std::string conditions;
  /// The part of `check` that no shape can change (attributes), for ops whose shapes wait on
  /// input values (query_pending); empty: the op type alone decides.
  std::function<std::string(const graph::Op&)> check_attrs = {};
  /// Only while the op's shapes wait on input values: what it cannot take then (a value the
  /// lowering needs as a constant that does not key the per-value compile, so stays an input).
  std::function<std::string(const graph::Graph&, const graph::Op&)> check_waiting = {};
  /// Loop iterations the longest-running invocation of the op's shaders runs, all its loops
  /// together (for devices that stop a shader's loops after a limit: device_facts::loop_limit);
  /// empty: the shaders loop over no dimension of the data.
  std::function<uint64_t(const graph::Graph&, const graph::Op&)> trips = {};
};

/// Every op type with a shader (or a free alias), by ONNX op type.
const std::map<std::string, op_rule>& op_rules();

/// Generic checks shared by the rules, then the rule's own check.
support query_op(const graph::Graph& g, const graph::Op& op);
/// Refuses an op whose shader would loop more than `loop_limit` times in one invocation (0: no
/// limit), naming the op, the count and the device.
support check_loops(const graph::Graph& g, const graph::Op& op, uint64_t loop_limit, const std::string& device_name);
/// What can be said of an op before its shapes are known: its domain, its type's rule, the
/// rule's attribute check and its check_waiting.
support query_op_pending(const graph::Graph& g, const graph::Op& op);

// ---- helpers shared by the rule files ------------------------------------------------------

/// The element-kind code the word-reading shaders (cast.comp, eltwise_typed.comp) share:
/// 0 f32, 1 i32, 2 u32, 3 i64, 4 u8, 5 i8, 6 bool, 7 f16, 8 u16, 9 i16, 10 u64; -1 for others.
int element_kind(element_type t);
/// Whether optional input i is there (present and not the empty name).
inline bool given(const graph::Op& op, std::size_t i) { return op.inputs.size() > i && op.inputs[i] != graph::no_value; }
/// The integer ops' 8-bit operand types.
inline bool is_int8(element_type t) { return t == element_type::u8 || t == element_type::i8; }
/// Static shape of a value (the graph has passed query, so shapes are static).
Shape shape_of(const graph::Graph& g, graph::ValueId v);
/// Activation code and parameters from attrs activation/activation_params, into spec ids 60..62,
/// and the scalar affine map after it (attr post_affine_attr: scale, shift) into 63..65.
void add_activation(const graph::Op& op, spec_map& spec);
/// Lowering-internal attr (never in a graph outside the lowering): [scale, shift] applied after
/// the fused activation, set by lower_post_affine.cpp on the conv's op copy.
inline constexpr const char* post_affine_attr = "vulkan.post_affine";
/// Empty when the op's fused activation has a shader, else why not.
std::string check_activation(const graph::Op& op);
/// Constant input i as int64s (axes, pads, ...); empty when absent.
std::vector<int64_t> const_ints(const graph::Graph& g, const graph::Op& op, std::size_t i);
std::vector<float> const_floats(const graph::Graph& g, const graph::Op& op, std::size_t i);
/// Pads of a window op (Conv, pools) over kernel.size() spatial axes of NC... shapes, from
/// pads/auto_pad and the shapes: the begins, then the ends (begin h, begin w, end h, end w in 2-D).
std::vector<int64_t> window_pads(const graph::Op& op, const Shape& in, const Shape& out, const std::vector<int64_t>& kernel,
                                 const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations);
/// ConvTranspose's pads, laid out as window_pads', as the reference computes them: from `pads`,
/// or, with SAME_* or output_shape, from the total padding the (inferred) output size implies.
std::vector<int64_t> transposed_pads(const graph::Op& op, const Shape& in, const Shape& out, const std::vector<int64_t>& kernel,
                                     const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations);

/// One strided copy of words on shaders/copy.comp (lower_movement.cpp): iterate `dims` (rank
/// <= 6); read src[in_off + c . in_strides], write dst[out_off + c . out_strides]. Nothing when
/// `dims` is empty of elements.
void strided_copy(op_builder& b, buffer_ref src, buffer_ref dst, const Shape& dims, const std::vector<int64_t>& in_strides,
                  int64_t in_off, const std::vector<int64_t>& out_strides, int64_t out_off);

/// One GEMM on shaders/gemm.comp: Y[b] = act(A[b] (M x K) x B[b] (K x N) + bias), A and B
/// bound as rgba32f texels (K and the B row length `nt` texels are whole texels), Y row-major.
struct gemm_args {
  buffer_ref a, b, bias, y;
  uint32_t m = 1, n = 1, k = 4, nt = 1, batch = 1;
  uint32_t sab = 0, sbb = 0, syb = 0; ///< batch strides: texels of A and B, floats of Y
  uint32_t bias_mode = 0;             ///< 0 none, 1 per row, 2 per column
  /// Scatter for ConvTranspose with kernel == stride: rows are (oc, kh, kw) of `taps` = KH*KW,
  /// columns (ih, iw) of input rows `in_w` wide, Y is NCHW with rows `out_w` wide (gemm.comp).
  uint32_t taps = 0, kw = 1, in_w = 1, out_w = 1, out_hw = 1;
};
/// Emits the dispatch (the op's fused activation included).
void dispatch_gemm(op_builder& b, const gemm_args& g);

using rule_table = std::map<std::string, op_rule>;
void add_eltwise_rules(rule_table& t);
/// Comparisons, logic, Where, Mod, BitShift, IsInf/IsNaN and the arithmetic ops on other types
/// than f32 (lower_eltwise_typed.cpp): wraps the f32 rules already in `t`, so it comes next.
void add_typed_eltwise_rules(rule_table& t);
/// Whether the op's dispatch needs 64-bit integer arithmetic (shaderInt64): the device refuses
/// it in query when it lacks the feature.
bool needs_shader_int64(const graph::Graph& g, const graph::Op& op);
void add_conv_rules(rule_table& t);
void add_matmul_rules(rule_table& t);
void add_pool_rules(rule_table& t);
void add_movement_rules(rule_table& t);
void add_pad_rules(rule_table& t);
/// CumSum, TopK, GatherND and the scatters (lower_indexing.cpp).
void add_indexing_rules(rule_table& t);
void add_reduce_rules(rule_table& t);
/// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (lower_loss.cpp).
void add_loss_rules(rule_table& t);
/// Einsum on one generic shader (lower_einsum.cpp), f32 or f64.
void add_einsum_rules(rule_table& t);
/// Whether the op's dispatch computes in double (shaderFloat64): the device refuses it in query
/// when it lacks the feature.
bool needs_shader_float64(const graph::Graph& g, const graph::Op& op);
void add_cast_rules(rule_table& t);
/// DequantizeLinear, DynamicQuantizeLinear and MatMulInteger (lower_quantize.cpp).
void add_quantize_rules(rule_table& t);
/// ConvInteger (lower_conv_integer.cpp).
void add_conv_integer_rules(rule_table& t);
/// MatMulInteger / ConvInteger -> Cast -> Mul(scale) [-> Add(bias)] as one dispatch
/// (lower_int8_epilogue.cpp): wraps those rules, so it comes after them and the post-affine rules.
void add_int8_epilogue_rules(rule_table& t);
/// MatMul -> [scale] -> Softmax(last axis) -> MatMul as one dispatch (lower_attention.cpp): wraps
/// the MatMul, Softmax, Mul, Div and Transpose rules already in `t`, so it is added last.
void add_attention_rules(rule_table& t);
/// Ops that add_attention_rules fuses into blocks (they must not join another fusion).
std::vector<int> attention_members(const graph::Graph& g);
/// Mul/Div/Add/Sub by scalar constants after a Conv/ConvTranspose (its only reader, in a chain)
/// fold into the conv's store (lower_post_affine.cpp): wraps those rules, so it is added last.
void add_post_affine_rules(rule_table& t);

} // namespace troupe::kernels::vulkan
