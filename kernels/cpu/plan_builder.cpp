#include "kernels/cpu/plan_builder.hpp"

#include <omp.h>

#include "kernels/cpu/attention.hpp"
#include "kernels/cpu/int8_ops.hpp"
#include "kernels/cpu/integer_matmul.hpp"
#include "kernels/cpu/memory_plan.hpp"
#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/rms_norm.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

#include <troupe/exception.hpp>

#include "kernels/reference/interpreter.hpp"

namespace troupe::kernels::cpu {

memory::data_type dnnl_type(element_type t) {
  switch (t) {
  case element_type::f32: return memory::data_type::f32;
  case element_type::bf16: return memory::data_type::bf16;
  case element_type::f16: return memory::data_type::f16;
  case element_type::i8: return memory::data_type::s8;
  case element_type::u8: return memory::data_type::u8;
  case element_type::i32: return memory::data_type::s32;
  default: return memory::data_type::undef;
  }
}

memory::desc plain_md(const Shape& s, memory::data_type dt) {
  memory::dims dims(s.begin(), s.end());
  if (dims.empty()) dims.push_back(1);
  memory::dims strides(dims.size(), 1);
  for (std::size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return memory::desc(dims, dt, strides);
}

plan_builder::plan_builder(const graph::Graph& graph, plan& pl, element_type prec)
    : g(graph), p(pl), precision(prec), compile_stream(pl.eng) {
  readers_.resize(g.values.size());
  is_output_.assign(g.values.size(), false);
  fused_.assign(g.ops.size(), false);
  for (std::size_t k = 0; k < g.ops.size(); ++k)
    for (auto v : g.ops[k].inputs)
      if (v != graph::no_value) readers_[static_cast<std::size_t>(v)].push_back(k);
  for (auto v : g.outputs) is_output_[static_cast<std::size_t>(v)] = true;
  home_.assign(g.values.size(), -1);
  md_.assign(g.values.size(), memory::desc());
  scratch_buf_ = add_buffer(0);
  for (std::size_t k = 0; k < g.inputs.size(); ++k) {
    auto v = g.inputs[k];
    int b = add_buffer(0);
    p.buffers[b].graph_input = static_cast<int>(k);
    p.buffers[b].type = val(v).type;
    p.inputs.push_back(b);
    if (is_dynamic(v)) {
      p.input_slots.push_back(static_cast<int>(v)); // only dynamic steps read it
      continue;
    }
    p.input_slots.push_back(-1);
    p.buffers[b].shape = shape(v);
    home_[v] = b;
    md_[v] = plain(v);
  }
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    if (!g.values[v].constant) continue;
    const Tensor& t = *g.values[v].constant;
    int b = add_buffer(0);
    p.buffers[b].constant = t;
    p.buffers[b].type = t.get_element_type();
    p.buffers[b].shape = t.get_shape();
    home_[v] = b;
    auto dt = dnnl_type(t.get_element_type());
    md_[v] = dt == memory::data_type::undef ? memory::desc() : plain_md(t.get_shape(), dt);
  }
}

memory::desc plan_builder::plain(graph::ValueId v) const {
  const auto& value = val(v);
  auto dt = dnnl_type(value.type);
  if (dt == memory::data_type::undef) return memory::desc();
  return plain_md(value.constant ? value.constant->get_shape() : value.shape.to_shape(), dt);
}

int plan_builder::add_buffer(std::size_t bytes) {
  p.buffers.push_back(buffer_info{});
  p.buffers.back().bytes = bytes;
  return static_cast<int>(p.buffers.size() - 1);
}

int plan_builder::typed_buffer(element_type type, Shape shape, std::size_t bytes) {
  const int buf = add_buffer(std::max(bytes, static_cast<std::size_t>(shape_size(shape)) * element_size(type)));
  p.buffers[static_cast<std::size_t>(buf)].type = type;
  p.buffers[static_cast<std::size_t>(buf)].shape = std::move(shape);
  return buf;
}

dnnl::primitive_attr plan_builder::base_attr() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

int plan_builder::input(graph::ValueId v, const memory::desc& want, const memory::desc* view) {
  int home = home_.at(static_cast<std::size_t>(v));
  if (home < 0) throw Exception("CPU plan: value '" + val(v).name + "' is used before it is produced");
  if (!view && md_[v] == want) return home;
  if (int copy = alt_buffer(v, want); copy >= 0) return copy;
  if (md_[v] == memory::desc() || want == memory::desc())
    throw Exception("CPU plan: value '" + val(v).name + "' of type " + to_string(val(v).type) +
                    " cannot be converted between layouts");
  memory::desc src_md = md_[v];
  if (view || want.dims() != md_[v].dims()) {
    // Another look at the plain bytes: reshape, transpose or regroup.
    home = input(v, plain(v));
    memory::dims wd = want.dims();
    src_md = view ? *view : plain_md(Shape(wd.begin(), wd.end()), plain(v).data_type());
    if (src_md.get_size() != plain(v).get_size())
      throw Exception("CPU plan: value '" + val(v).name + "' cannot be viewed with other dims");
    if (src_md == want) return home;
  }
  if (std::getenv("TROUPE_CPU_VERBOSE")) {
    auto d0 = src_md.dims(), d1 = want.dims();
    std::fprintf(stderr, "reorder %s: %s ndims %d -> %d size %zu -> %zu\n", val(v).name.c_str(),
                 to_string(Shape(d0.begin(), d0.end())).c_str(), src_md.data.ndims, want.data.ndims,
                 src_md.get_size(), want.get_size());
  }
  int buf;
  if (val(v).constant) {
    // Weights and other constants are reordered once, here, and shared by all clones.
    buf = add_buffer(0);
    p.buffers[buf].constant = reorder_constant(*val(v).constant, src_md, want);
  } else if (src_md.dims().size() == 4 && src_md.dims()[1] == 3 && src_md == plain_md(shape(v), memory::data_type::f32) &&
             want == memory::desc(src_md.dims(), memory::data_type::bf16, memory::format_tag::nhwc) &&
             native_bf16_available()) {
    // An image into the first bf16 convolution: oneDNN 2.6's reorder moved it at 19 GB/s.
    buf = add_buffer(want.get_size());
    graph::Op op;
    op.type = "Reorder";
    op.name = val(v).name + "/reorder";
    add_kernel_step(std::move(op), rgb_to_nhwc_bf16, "native:rgb_to_nhwc_bf16", {home}, {buf});
  } else {
    dnnl::reorder::primitive_desc pd(p.eng, src_md, p.eng, want, base_attr());
    buf = add_buffer(want.get_size());
    step s;
    s.name = val(v).name + "/reorder";
    s.type = "Reorder";
    s.exec_type = pd.impl_info_str();
    s.is_dnnl = true;
    s.prim = dnnl::reorder(pd);
    s.args = {{DNNL_ARG_FROM, home, src_md}, {DNNL_ARG_TO, buf, want}};
    std::size_t sb = pd.scratchpad_desc().get_size();
    if (sb) {
      s.args.push_back({DNNL_ARG_SCRATCHPAD, scratch_buf_, pd.scratchpad_desc()});
      scratch_bytes_ = std::max(scratch_bytes_, sb);
    }
    p.steps.push_back(std::move(s));
  }
  p.buffers[buf].type = val(v).type;
  p.buffers[buf].shape = shape(v);
  alt_.emplace_back(v, want, buf);
  return buf;
}

Tensor plan_builder::reorder_constant(const Tensor& src, const memory::desc& from, const memory::desc& want) {
  if (!derived) return reorder_now(src, from, want);
  // Named by both layouts' descriptors, byte for byte (oneDNN zero-fills them when made).
  std::string kind = "cpu reorder ";
  kind.append(reinterpret_cast<const char*>(&from.data), sizeof(from.data));
  kind.append(reinterpret_cast<const char*>(&want.data), sizeof(want.data));
  return *derived->get<Tensor>(kind, {src}, [&] { return reorder_now(src, from, want); });
}

Tensor plan_builder::reorder_now(const Tensor& src, const memory::desc& from, const memory::desc& want) {
  dnnl::reorder::primitive_desc pd(p.eng, from, p.eng, want, base_attr());
  Tensor t(element_type::u8, Shape{static_cast<int64_t>(want.get_size())});
  Tensor scratch(element_type::u8, Shape{static_cast<int64_t>(pd.scratchpad_desc().get_size())});
  dnnl::memory src_m(from, p.eng, const_cast<void*>(src.data())), dst_m(want, p.eng, t.data()),
      scratch_m(pd.scratchpad_desc(), p.eng, scratch.data());
  dnnl::reorder(pd).execute(compile_stream, {{DNNL_ARG_FROM, src_m}, {DNNL_ARG_TO, dst_m}, {DNNL_ARG_SCRATCHPAD, scratch_m}});
  compile_stream.wait();
  return t;
}

int plan_builder::alt_buffer(graph::ValueId v, const memory::desc& md) const {
  for (const auto& [id, alt_md, buf] : alt_)
    if (id == v && alt_md == md) return buf;
  return -1;
}

bool plan_builder::has_layout(graph::ValueId v, const memory::desc& md) const {
  return md_.at(static_cast<std::size_t>(v)) == md || alt_buffer(v, md) >= 0;
}

void plan_builder::relayout(graph::ValueId v, const memory::desc& md) {
  auto i = static_cast<std::size_t>(v);
  int old_home = home_.at(i);
  memory::desc old_md = md_[i];
  int buf = input(v, md);
  if (buf == old_home) return;
  home_[i] = buf;
  md_[i] = md;
  alt_.emplace_back(v, old_md, old_home);
}

int plan_builder::output(graph::ValueId v, const memory::desc& md) {
  Shape s = shape(v);
  std::size_t plain_bytes = static_cast<std::size_t>(shape_size(s)) * element_size(val(v).type);
  int b = add_buffer(std::max(md.get_size(), plain_bytes));
  p.buffers[b].type = val(v).type;
  p.buffers[b].shape = s;
  home_[v] = b;
  md_[v] = md;
  return b;
}

void plan_builder::add_dnnl(const graph::Op& op, const dnnl::primitive_desc_base& pd, dnnl::primitive prim,
                            std::vector<binding> args) {
  step s;
  s.name = op.name;
  s.type = op.type;
  s.exec_type = pd.impl_info_str();
  s.is_dnnl = true;
  s.prim = std::move(prim);
  s.args = std::move(args);
  std::size_t sb = pd.scratchpad_desc().get_size();
  if (sb) {
    s.args.push_back({DNNL_ARG_SCRATCHPAD, scratch_buf_, pd.scratchpad_desc()});
    scratch_bytes_ = std::max(scratch_bytes_, sb);
  }
  p.steps.push_back(std::move(s));
}

void plan_builder::add_reference(const graph::Op& op, reference::kernel_fn fn, const char* exec_type,
                                 const std::vector<memory::desc>& layouts) {
  if (!fn) fn = reference::find_kernel(op.type);
  if (!fn) throw Exception("CPU: " + graph::describe(op) + ": no oneDNN or reference kernel runs this op");
  std::vector<int> ins, outs;
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    const auto v = op.inputs[i];
    const bool laid_out = i < layouts.size() && layouts[i] != memory::desc();
    ins.push_back(v == graph::no_value ? -1 : laid_out ? input(v, layouts[i]) : input_plain(v));
  }
  for (auto v : op.outputs) outs.push_back(v == graph::no_value ? -1 : output(v, plain(v)));
  add_kernel_step(op, fn, exec_type, std::move(ins), std::move(outs));
}

void plan_builder::add_kernel_step(graph::Op op, reference::kernel_fn fn, const char* exec_type, std::vector<int> ins,
                                   std::vector<int> outs) {
  step s;
  s.name = op.name;
  s.type = op.type;
  s.exec_type = exec_type;
  s.apply_activation = op.has_attr("activation");
  s.op = std::make_shared<graph::Op>(std::move(op));
  s.fn = fn;
  s.ref_in = std::move(ins);
  s.ref_out = std::move(outs);
  p.steps.push_back(std::move(s));
}

void plan_builder::add_dynamic(const graph::Op& op) {
  if (!reference::find_kernel(op.type))
    throw Exception("CPU: " + graph::describe(op) + ": no reference kernel runs this op with run-time shapes");
  step s;
  s.name = op.name;
  s.type = op.type;
  s.exec_type = "ref_dynamic";
  s.op = std::make_shared<graph::Op>(op);
  s.dynamic = true;
  for (auto v : op.inputs) {
    bool dyn = v != graph::no_value && is_dynamic(v);
    s.in_slot.push_back(dyn ? static_cast<int>(v) : -1);
    s.ref_in.push_back(v == graph::no_value || dyn ? -1 : input_plain(v));
  }
  for (auto v : op.outputs) {
    bool dyn = v != graph::no_value && is_dynamic(v);
    s.out_slot.push_back(dyn ? static_cast<int>(v) : -1);
    s.ref_out.push_back(v == graph::no_value || dyn ? -1 : output(v, plain(v)));
  }
  p.steps.push_back(std::move(s));
}

namespace {

/// oneDNN divides by dimensions when it partitions work: a tensor with no elements (a batch of
/// 0, say) would crash primitive creation, while the reference kernels handle it. Empty
/// constants are left out: they stand for omitted inputs (Resize's roi) and never reach oneDNN.
bool touches_empty_tensor(const graph::Graph& g, const graph::Op& op) {
  auto empty = [&](graph::ValueId v) {
    if (v == graph::no_value || g.value(v).constant) return false;
    const auto& s = g.value(v).shape;
    return s.rank_known && std::find(s.dims.begin(), s.dims.end(), int64_t{0}) != s.dims.end();
  };
  return std::any_of(op.inputs.begin(), op.inputs.end(), empty) ||
         std::any_of(op.outputs.begin(), op.outputs.end(), empty);
}

/// oneDNN 2.6 adds a deconvolution's bias in a slow pass of its own (ConvTranspose 24->24,
/// 2x2 stride 2 on [1,24,80,80]: 2.1 ms with its bias against 0.4 ms, plus 0.07 ms for the
/// same bias as an Add after it; PP-OCR det, whose BN folds into a ConvTranspose: 31 ms
/// against 12). Each f32 ConvTranspose with a constant bias becomes one without, and an Add of
/// the bias per channel that takes over its fused activation (not where the native kernel-equals-stride
/// kernel runs it: that one adds the bias as it writes). `g` itself where none is.
const graph::Graph& without_deconv_bias(const graph::Graph& g, std::optional<graph::Graph>& copy) {
  auto has_bias = [&](const graph::Op& op) {
    return op.type == "ConvTranspose" && op.domain.empty() && op.input_count() >= 3 && op.outputs.size() == 1 &&
           g.is_constant(op.inputs[2]) && g.value(op.inputs[2]).type == element_type::f32 &&
           g.value(op.outputs[0]).type == element_type::f32 && g.value(op.outputs[0]).shape.is_static() &&
           !is_unit_overlap_conv_transpose(g, op); // the native kernel adds its bias itself
  };
  if (std::none_of(g.ops.begin(), g.ops.end(), has_bias)) return g;
  copy = g;
  graph::Graph& c = *copy;
  std::vector<graph::Op> ops;
  for (auto& op : c.ops) {
    if (!has_bias(op)) {
      ops.push_back(std::move(op));
      continue;
    }
    const auto y = op.outputs[0];
    const Shape ys = c.value(y).shape.to_shape();
    Shape bs(ys.size(), 1);
    bs[1] = ys[1];
    Tensor bias = c.value(op.inputs[2]).constant->reshaped(bs);
    graph::Op add;
    add.type = "Add";
    add.name = op.name + "/bias";
    add.inputs = {c.add_value({op.name + "/without_bias", element_type::f32, c.value(y).shape, std::nullopt}),
                  c.add_constant(op.name + "/bias_per_channel", std::move(bias))};
    add.outputs = {y};
    for (const char* a : {"activation", "activation_params"})
      if (auto it = op.attrs.find(a); it != op.attrs.end()) {
        add.attrs[a] = it->second;
        op.attrs.erase(a);
      }
    op.inputs.resize(2);
    op.outputs = {add.inputs[0]};
    ops.push_back(std::move(op));
    ops.push_back(std::move(add));
  }
  c.ops = std::move(ops);
  return c;
}

} // namespace

std::shared_ptr<const plan> build_plan(const graph::Graph& given, int num_threads, element_type precision,
                                       bool profiling, derived_constants* derived) {
  std::optional<graph::Graph> split;
  const graph::Graph& g = without_deconv_bias(given, split);
  auto p = std::make_shared<plan>();
  p->eng = dnnl::engine(dnnl::engine::kind::cpu, 0);
  p->num_threads = num_threads > 0 ? num_threads : omp_get_num_procs();
  // oneDNN splits work for the team size it was created with: a team that OMP_THREAD_LIMIT
  // keeps smaller would leave parts of every output uncomputed. Never ask for more.
  p->num_threads = std::max(1, std::min(p->num_threads, omp_get_thread_limit()));
  p->profiling = profiling;
  p->opset = g.opset;
  // Primitives size their thread partitioning at creation: create them with the run's count.
  int saved = omp_get_max_threads();
  omp_set_num_threads(p->num_threads);
  try {
    plan_builder b(g, *p, precision);
    b.derived = derived;
    const auto int8_sites = find_int8_sites(b);
    std::set<std::size_t> taken;
    for (const auto& [k, s] : int8_sites) taken.insert(k);
    auto integer_products = find_integer_products(b, taken);
    for (const auto& [k, s] : integer_products.matmuls) taken.insert(k);
    for (const auto& [k, s] : integer_products.matmul_by_last) taken.insert(k);
    for (const auto& [k, s] : integer_products.convs) taken.insert(k);
    taken.insert(integer_products.inside.begin(), integer_products.inside.end());
    const auto attention = find_attention_sites(b, taken);
    for (const auto& [k, s] : attention.by_last) taken.insert(k);
    taken.insert(attention.inside.begin(), attention.inside.end());
    const auto rms_norms = find_rms_norm_sites(b, taken);
    for (const auto& op : g.ops) {
      if (b.fused(b.index_of(op)) || integer_products.inside.count(b.index_of(op)) ||
          attention.inside.count(b.index_of(op)) || rms_norms.inside.count(b.index_of(op)))
        continue;
      if (reference::interpreter::is_dynamic(g, op)) {
        b.add_dynamic(op);
        if (!p->graph) p->graph = std::make_shared<const graph::Graph>(g);
        continue;
      }
      if (auto site = attention.by_last.find(b.index_of(op)); site != attention.by_last.end()) {
        build_attention(b, op, site->second);
        continue;
      }
      if (auto site = rms_norms.by_last.find(b.index_of(op)); site != rms_norms.by_last.end()) {
        build_rms_norm(b, op, site->second);
        continue;
      }
      if (auto site = int8_sites.find(b.index_of(op)); site != int8_sites.end()) {
        build_int8_site(b, op, site->second);
        continue;
      }
      if (auto site = integer_products.matmuls.find(b.index_of(op)); site != integer_products.matmuls.end()) {
        build_integer_matmul(b, op, site->second);
        if (site->second.last == site->first) build_integer_matmul_epilogue(b, op, site->second);
        continue;
      }
      if (auto last = integer_products.matmul_by_last.find(b.index_of(op)); last != integer_products.matmul_by_last.end()) {
        build_integer_matmul_epilogue(b, op, integer_products.matmuls.at(last->second));
        continue;
      }
      if (auto site = integer_products.convs.find(b.index_of(op)); site != integer_products.convs.end()) {
        build_integer_conv(b, site->second);
        continue;
      }
      if (build_quantize_reorder(b, op)) continue;
      if (auto fn = native_quantize_kernel(g, op)) {
        b.add_reference(op, fn, "native:quantize");
        continue;
      }
      if (build_native_blocked(b, op)) continue;
      if (is_native_where(g, op)) {
        b.add_reference(op, where_rows, "native:where");
        continue;
      }
      if (reference::touches_strings(g, op)) { // strings are objects: no oneDNN, no arena bytes
        auto k = reference::find_string_kernel(op.type);
        // (query refuses such an op; without a kernel add_reference would run the numeric one)
        if (!k) throw Exception(reference::string_refusal(g, op));
        b.add_reference(op, k, "ref_strings");
        continue;
      }
      const std::size_t first_step = p->steps.size();
      bool done = false;
      try {
        done = !touches_empty_tensor(g, op) && build_dnnl_op(b, op);
      } catch (const dnnl::error& e) {
        done = false; // oneDNN has no implementation for this case: the reference runs it
        if (std::getenv("TROUPE_CPU_VERBOSE")) std::fprintf(stderr, "%s: oneDNN: %s\n", graph::describe(op).c_str(), e.what());
      }
      if (!done) b.add_reference(op);
      if (std::getenv("TROUPE_CPU_VERBOSE")) {
        std::string io;
        for (auto v : op.inputs) io.append(" ").append(v == graph::no_value ? "-" : g.value(v).shape.to_string());
        io.append(" ->");
        for (auto v : op.outputs) io.append(" ").append(v == graph::no_value ? "-" : g.value(v).shape.to_string());
        std::string kernel; // the op's own step, not a reorder placed before or after it
        for (std::size_t k = first_step; k < p->steps.size(); ++k)
          if (p->steps[k].name == op.name) kernel = p->steps[k].exec_type;
        std::fprintf(stderr, "op %s:%s %s\n", graph::describe(op).c_str(), io.c_str(), kernel.c_str());
      }
    }
    for (auto v : g.outputs) {
      bool dyn = b.is_dynamic(v);
      p->output_slots.push_back(dyn ? static_cast<int>(v) : -1);
      p->outputs.push_back(dyn ? -1 : b.input_plain(v));
    }
    p->buffers[b.scratch_buf_].bytes = b.scratch_bytes_;
    // Each output's buffer is the tensor handed back (no copy at the end); a constant, an input
    // or a buffer already serving another output is copied instead.
    for (std::size_t k = 0; k < p->outputs.size(); ++k) {
      if (p->outputs[k] < 0) continue;
      auto& out = p->buffers[static_cast<std::size_t>(p->outputs[k])];
      if (!out.constant && out.graph_input < 0 && out.graph_output < 0) out.graph_output = static_cast<int>(k);
    }
    plan_memory(*p);
  } catch (const dnnl::error& e) {
    omp_set_num_threads(saved);
    throw Exception(std::string("CPU compile of '") + g.source + "': oneDNN: " + e.what());
  } catch (...) {
    omp_set_num_threads(saved);
    throw;
  }
  omp_set_num_threads(saved);
  return p;
}

} // namespace troupe::kernels::cpu
