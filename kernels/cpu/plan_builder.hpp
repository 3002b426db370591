#pragma once
/// The state of building a plan: where each value lives and in which layout, and the helpers
/// the per-op builders use to get their inputs in the layout a primitive wants.
#include <tuple>

#include "kernels/cpu/plan.hpp"

namespace troupe::kernels::cpu {

using dnnl::memory;

/// oneDNN data type of an element type; undef when oneDNN has none.
memory::data_type dnnl_type(element_type t);
/// Dense row-major descriptor (a rank-0 shape becomes [1]).
memory::desc plain_md(const Shape& s, memory::data_type dt);

/// Ops after a primitive that oneDNN applies as its post-ops, so their values never exist.
struct post_chain {
  dnnl::post_ops po;
  std::vector<binding> args;             ///< post-op operands (binary src1)
  graph::ValueId out = graph::no_value;  ///< the value the primitive now produces
  std::vector<std::size_t> fused_ops;    ///< indices of the absorbed ops
};

class plan_builder {
public:
  plan_builder(const graph::Graph& g, plan& p, element_type precision);

  const graph::Graph& g;
  plan& p;
  element_type precision;
  dnnl::stream compile_stream;
  /// What earlier builds of this compiled model derived from its weights; null: none kept.
  derived_constants* derived = nullptr;

  const graph::Value& val(graph::ValueId v) const { return g.value(v); }
  Shape shape(graph::ValueId v) const { return g.value(v).shape.to_shape(); }
  /// The layout a value currently lives in (its producer's choice).
  const memory::desc& current_md(graph::ValueId v) const { return md_.at(static_cast<std::size_t>(v)); }
  /// The value's plain descriptor in its own element type.
  memory::desc plain(graph::ValueId v) const;
  /// A buffer holding `v` laid out as `want`; inserts a reorder step (or, for constants,
  /// reorders once now) when it lives elsewhere.
  /// `view`, when given, is how to read the value's plain buffer (a transposed or regrouped
  /// look at the same bytes); without it a `want` of other dims is a plain reshape.
  int input(graph::ValueId v, const memory::desc& want, const memory::desc* view = nullptr);
  int input_plain(graph::ValueId v) { return input(v, plain(v)); }
  /// Whether `v` already lives (or has a copy) in layout `md`: reading it so costs nothing.
  bool has_layout(graph::ValueId v, const memory::desc& md) const;
  /// Moves `v`'s home to layout `md` (a reorder step now); its old layout stays readable.
  void relayout(graph::ValueId v, const memory::desc& md);
  bool is_graph_output(graph::ValueId v) const { return is_output_.at(static_cast<std::size_t>(v)); }
  /// The ops reading `v`, by index into g.ops.
  const std::vector<std::size_t>& readers(graph::ValueId v) const { return readers_.at(static_cast<std::size_t>(v)); }
  /// A fresh buffer for an op output laid out as `md`, recorded as the value's home.
  int output(graph::ValueId v, const memory::desc& md);
  /// Adds a oneDNN step; binds the scratchpad.
  void add_dnnl(const graph::Op& op, const dnnl::primitive_desc_base& pd, dnnl::primitive prim,
                std::vector<binding> args);
  /// Adds a reference-kernel step.
  /// A plain-buffer step: the reference kernel, or `fn` (a native kernel) when given.
  /// `layouts`, when given, is per input the layout its buffer must have (an empty desc: plain).
  void add_reference(const graph::Op& op, reference::kernel_fn fn = nullptr, const char* exec_type = "ref",
                     const std::vector<memory::desc>& layouts = {});
  /// A plain-buffer step running `fn` on buffers already placed (`ins`, `outs`; -1: omitted):
  /// add_reference's last part, and the native kernels' steps that read other layouts or extra
  /// constant buffers. `op` is the copy the kernel sees.
  void add_kernel_step(graph::Op op, reference::kernel_fn fn, const char* exec_type, std::vector<int> ins,
                       std::vector<int> outs);
  /// Adds a step run by interpreter::run_op with run-time shapes (the op touches a dynamic value).
  void add_dynamic(const graph::Op& op);
  /// A non-constant value living in the clone's per-run tensors: of a dynamic shape, or a sequence.
  bool is_dynamic(graph::ValueId v) const {
    return !val(v).constant && (!val(v).shape.is_static() || val(v).sequence);
  }
  int add_buffer(std::size_t bytes);
  /// A buffer that kernel steps see as a tensor of `type` and `shape` (an intermediate of a
  /// site's steps or a scratch), dense unless `bytes` says more.
  int typed_buffer(element_type type, Shape shape, std::size_t bytes = 0);
  /// `src` (laid out as `from`) reordered into `want` now, on the compile stream: the bytes of
  /// a constant that all clones share (weights, bias).
  /// Kept in `derived` for the next build: the result is shared, never to be written.
  Tensor reorder_constant(const Tensor& src, const memory::desc& from, const memory::desc& want);
  /// A constant made at plan time (folded post-op operands), shared by all clones.
  int const_buffer(const Tensor& t);
  /// Follows `y` (an f32 output of the op at `producer`) through single-reader ops that fold
  /// into post-ops: scalar/per-channel constant Mul/Add/Sub/Div, BatchNormalization,
  /// activations and a residual Add of an already computed same-shape value. `po` already
  /// holds the producer's own post-ops. Nothing is marked fused until commit().
  /// `binary_ok`: false where binary post-ops are slow (oneDNN 2.6 deconvolution).
  post_chain chain_post_ops(graph::ValueId y, dnnl::post_ops po, bool binary_ok = true) const;
  void commit(const post_chain& c);
  bool fused(std::size_t op_index) const { return fused_.at(op_index); }
  std::size_t index_of(const graph::Op& op) const { return static_cast<std::size_t>(&op - g.ops.data()); }
  /// Attributes every primitive is created with (user scratchpad).
  static dnnl::primitive_attr base_attr();

private:
  std::vector<std::vector<std::size_t>> readers_; ///< per value: ops reading it
  std::vector<bool> is_output_;     ///< per value: a graph output
  std::vector<bool> fused_;         ///< per op: absorbed into an earlier primitive
  std::vector<int> home_;           ///< buffer of each value in its native layout
  std::vector<memory::desc> md_;    ///< that layout
  std::vector<std::tuple<graph::ValueId, memory::desc, int>> alt_; ///< reordered copies
  int alt_buffer(graph::ValueId v, const memory::desc& md) const;  ///< v's copy laid out as md, or -1
  std::size_t scratch_bytes_ = 0;
  int scratch_buf_ = -1;
  Tensor reorder_now(const Tensor& src, const memory::desc& from, const memory::desc& want);
  friend std::shared_ptr<const plan> build_plan(const graph::Graph&, int, element_type, bool, derived_constants*);
};

/// An inference BatchNormalization as y = x * scale[c] + shift[c]: scale = gamma / sqrt(var +
/// eps), shift = beta - mean * scale. For the post-op chain and the native steps that run one.
struct channel_affine {
  std::vector<float> scale, shift;
};
channel_affine batch_norm_affine(const float* gamma, const float* beta, const float* mean, const float* var, float eps,
                                 std::size_t channels);
/// The op's fused activation attr as eltwise post-ops; false when oneDNN cannot express it.
bool activation_post_ops(const graph::Op& op, dnnl::post_ops& po);
/// Attributes every primitive of `op` is created with, its fused activation included.
bool make_attr(const graph::Op& op, dnnl::primitive_attr& attr);
/// Spatial geometry of Conv/ConvTranspose/pools.
struct window {
  memory::dims kernel, strides, dil, pad_l, pad_r; ///< dil in oneDNN's convention (ONNX - 1)
};
/// Reads kernel/strides/dilations/pads/auto_pad of `op` (input x, output y); pad_r here is the
/// attribute's.
bool read_window(const graph::Op& op, const Shape& x, const Shape& y, memory::dims kernel, window& w);
/// Tries to build `op` with oneDNN; false (nothing added) when oneDNN cannot run it as asked.
bool build_dnnl_op(plan_builder& b, const graph::Op& op);
/// The native kernels that read nChw16c in place (native_ops.hpp): the no-overlap
/// ConvTranspose, and an inference BatchNormalization + Relu in front of one (run inside its
/// step: det's head). False (nothing added) for other ops and cases.
bool build_native_blocked(plan_builder& b, const graph::Op& op);
/// A channel Concat from `srcs` into `dst` (the layouts oneDNN's concat would use) on
/// concat_channels, where some input's channels do not fill whole 16-channel blocks; false
/// (nothing added) when the layouts or channel counts do not fit it.
bool add_native_concat(plan_builder& b, const graph::Op& op, const std::vector<memory::desc>& srcs,
                       const memory::desc& dst);
/// A depthwise Conv whose oneDNN descriptor `pd` (with the chain `ch` as its post-ops) reads
/// and writes channels-last bf16, on depthwise_nhwc_bf16 instead (native_ops.hpp); false
/// (nothing added) when the shape, layouts, post-ops or CPU do not fit it.
bool add_native_depthwise(plan_builder& b, const graph::Op& op, const dnnl::convolution_forward::primitive_desc& pd,
                          const post_chain& ch, const window& w);
/// A Mul of a 4-D map by one factor per channel ([1 or N, C, 1, 1]), the map laid out nhwc
/// (f32 or bf16), on channel_scale; with the Add of the map that reads the product
/// (x * s + x) in the same step. False (nothing added) for other cases.
bool add_native_channel_scale(plan_builder& b, const graph::Op& mul);
/// PRelu on oneDNN's prelu primitive (prelu.cpp); false where the slope does not broadcast.
bool build_prelu(plan_builder& b, const graph::Op& op);
/// LSTM, GRU or RNN on oneDNN's RNN primitives (rnn.cpp); false where the cell has what they
/// have not (peepholes, clip, other activations, shorter sequence_lens).
bool build_rnn(plan_builder& b, const graph::Op& op);
/// Whether the oneDNN path handles this op type with these element types at all.
bool dnnl_handles(const graph::Graph& g, const graph::Op& op, std::string* why);

} // namespace troupe::kernels::cpu
