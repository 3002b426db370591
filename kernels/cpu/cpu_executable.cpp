#include "kernels/cpu/cpu_executable.hpp"

#include <omp.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include <troupe/exception.hpp>

#include "kernels/cpu/thread_arena.hpp"
#include "kernels/reference/interpreter.hpp"

namespace troupe::kernels::cpu {

cpu_executable::cpu_executable(std::shared_ptr<const plan> p, std::shared_ptr<output_pool> outputs)
    : plan_(std::move(p)), outputs_(std::move(outputs)), stream_(plan_->eng) {
  const auto& bufs = plan_->buffers;
  storage_.resize(bufs.size());
  views_.resize(bufs.size());
  input_mems_.resize(plan_->inputs.size());
  output_mems_.resize(plan_->outputs.size());
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    const auto& b = bufs[i];
    if (b.constant) {
      storage_[i] = *b.constant;
      views_[i] = *b.constant;
    } else if (b.graph_input < 0 && b.graph_output < 0 && b.type == element_type::string) {
      storage_[i] = views_[i] = Tensor(b.type, b.shape); // std::string objects, outside the arena
    } else if (b.graph_input < 0 && b.graph_output < 0 && b.offset < 0) {
      storage_[i] = Tensor(element_type::u8, Shape{1}); // an empty buffer: somewhere valid to point at
      views_[i] = Tensor(b.type, b.shape, storage_[i].data());
    } // arena buffers: bind_arena, at the first run
  }
  if (plan_->graph) {
    scratch_ = *plan_->graph;
    dyn_.resize(plan_->graph->values.size());
  }
  step_args_.resize(plan_->steps.size());
  for (std::size_t s = 0; s < plan_->steps.size(); ++s) {
    step_args_[s] = {static_cast<uint32_t>(exec_args_.size()), 0u};
    for (const auto& a : plan_->steps[s].args) {
      const auto& b = bufs[static_cast<std::size_t>(a.buf)];
      const bool per_run = b.graph_input >= 0 || b.graph_output >= 0; // bound in run()
      const bool in_arena = !per_run && !b.constant && b.type != element_type::string && b.offset >= 0;
      dnnl::memory m(a.md, plan_->eng, per_run || in_arena ? nullptr : storage_[a.buf].data());
      if (b.graph_input >= 0) input_mems_[static_cast<std::size_t>(b.graph_input)].push_back(m);
      if (b.graph_output >= 0) output_mems_[static_cast<std::size_t>(b.graph_output)].push_back(m);
      if (in_arena) arena_mems_.emplace_back(m, static_cast<std::size_t>(b.offset));
      // The first binding of an argument wins, as it did in the map this replaced.
      bool seen = false;
      for (std::size_t i = step_args_[s].first; i < exec_args_.size(); ++i) seen = seen || exec_args_[i].arg == a.arg;
      if (seen) continue;
      exec_args_.push_back({a.arg, m.get()});
      ++step_args_[s].second;
      mems_.push_back(std::move(m));
    }
  }
}

namespace {

/// An output the plan writes whole, in place: not zeroed first, as Tensor(type, shape) would
/// (a language model's logits: 20 MB per run at 100 tokens), and from `pool`, which has the block
/// of an earlier run's output the caller let go. A sanitizer build fills it with NaN bytes, so
/// that a step that leaves part of it unwritten shows up as wrong results there.
Tensor output_tensor(output_pool& pool, element_type type, const Shape& shape) {
  Tensor t = pool.tensor(type, shape);
#if defined(__SANITIZE_ADDRESS__)
  if (type != element_type::string) std::memset(t.data(), 0xff, t.get_byte_size());
#endif
  return t;
}

} // namespace

void cpu_executable::bind_arena(std::byte* base) {
  const auto& bufs = plan_->buffers;
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    const auto& b = bufs[i];
    if (b.constant || b.graph_input >= 0 || b.graph_output >= 0 || b.type == element_type::string || b.offset < 0) continue;
    storage_[i] = Tensor(element_type::u8, Shape{static_cast<int64_t>(b.bytes)}, base + b.offset);
    views_[i] = Tensor(b.type, b.shape, storage_[i].data());
  }
  for (auto& [m, offset] : arena_mems_) m.set_data_handle(base + offset);
  bound_ = base;
}

void cpu_executable::run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  const plan& p = *plan_;
  const arena_lease arena(p.arena_bytes);
  if (arena.base() != bound_) bind_arena(arena.base());
  if (inputs.size() != p.inputs.size())
    throw Exception("CPU: expected " + std::to_string(p.inputs.size()) + " inputs, got " +
                    std::to_string(inputs.size()));
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const auto& b = p.buffers[static_cast<std::size_t>(p.inputs[k])];
    const Tensor& t = inputs[k];
    if (int slot = p.input_slots[k]; slot >= 0) {
      // A dynamic-shaped input: its type and every static dim must match.
      const auto& ps = p.graph->value(slot).shape;
      bool ok = !t.empty() && t.get_element_type() == b.type;
      if (ok && ps.rank_known) {
        ok = t.get_shape().size() == ps.rank();
        for (std::size_t d = 0; ok && d < ps.rank(); ++d) ok = ps.dims[d] < 0 || ps.dims[d] == t.get_shape()[d];
      }
      if (!ok)
        throw Exception("CPU: input #" + std::to_string(k) + " must be " + to_string(b.type) + " " + ps.to_string() +
                        ", got " + (t.empty() ? std::string("an empty tensor")
                                              : to_string(t.get_element_type()) + " " + to_string(t.get_shape())));
      dyn_[static_cast<std::size_t>(slot)] = t;
      continue;
    }
    if (t.empty() || t.get_element_type() != b.type || t.get_shape() != b.shape)
      throw Exception("CPU: input #" + std::to_string(k) + " must be " + to_string(b.type) + " " +
                      to_string(b.shape) + ", got " + (t.empty() ? std::string("an empty tensor")
                                                                 : to_string(t.get_element_type()) + " " +
                                                                       to_string(t.get_shape())));
    views_[static_cast<std::size_t>(p.inputs[k])] = t;
    for (auto& m : input_mems_[k]) m.set_data_handle(const_cast<void*>(t.data()));
  }
  // Outputs are written where the caller gets them: a fresh tensor per run, bound before the steps.
  outputs.assign(p.outputs.size(), Tensor());
  for (std::size_t k = 0; k < p.outputs.size(); ++k) {
    if (p.outputs[k] < 0) continue;
    const auto& b = p.buffers[static_cast<std::size_t>(p.outputs[k])];
    if (b.graph_output != static_cast<int>(k)) continue;
    outputs[k] = output_tensor(*outputs_, b.type, b.shape);
    views_[static_cast<std::size_t>(p.outputs[k])] = outputs[k];
    for (auto& m : output_mems_[k]) m.set_data_handle(outputs[k].data());
  }
  // The thread count is a per-calling-thread OpenMP setting: each stream keeps its own.
  omp_set_num_threads(p.num_threads);
  if (p.profiling) profile_.assign(p.steps.size(), op_profile{});
  auto& in = in_;
  auto& out = out_;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const step& st = p.steps[s];
    const auto t0 = p.profiling ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    if (st.is_dnnl) {
      const auto [first, count] = step_args_[s];
      if (dnnl_primitive_execute(st.prim.get(), stream_.get(), static_cast<int>(count), exec_args_.data() + first) !=
          dnnl_success)
        throw Exception("CPU: oneDNN could not run " + st.name + " (" + st.type + ", " + st.exec_type + ")");
      if (p.profiling) stream_.wait();
    } else if (st.dynamic) {
      stream_.wait(); // oneDNN producers of its static inputs must be done
      run_dynamic(st);
    } else {
      in.clear();
      out.clear();
      for (int b : st.ref_in) in.push_back(b < 0 ? Tensor() : views_[static_cast<std::size_t>(b)]);
      for (int b : st.ref_out) out.push_back(b < 0 ? Tensor() : views_[static_cast<std::size_t>(b)]);
      st.fn(reference::context(*st.op, p.opset), in, out);
      for (std::size_t i = 0; i < out.size(); ++i) {
        int b = st.ref_out[i];
        if (b < 0) continue;
        Tensor& mine = views_[static_cast<std::size_t>(b)];
        // A kernel may hand back another buffer (a zero-copy view): copy it home.
        if (out[i].empty() || out[i].data() == mine.data()) continue;
        if (mine.get_element_type() == element_type::string) out[i].copy_to(mine);
        else std::memcpy(mine.data(), out[i].data(), std::min(mine.get_byte_size(), out[i].get_byte_size()));
      }
      if (st.apply_activation) reference::apply_fused_activation(*st.op, views_[static_cast<std::size_t>(st.ref_out[0])]);
    }
    if (p.profiling) {
      auto& r = profile_[s];
      r.node_name = st.name;
      r.node_type = st.type;
      r.exec_type = st.exec_type;
      r.real_time_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
  }
  stream_.wait();
  for (std::size_t i = 0; i < p.outputs.size(); ++i) {
    if (!outputs[i].empty()) continue; // written in place
    int slot = p.output_slots[i];
    const Tensor& src = slot >= 0 ? dyn_[static_cast<std::size_t>(slot)] : views_[static_cast<std::size_t>(p.outputs[i])];
    if (src.empty()) throw Exception("CPU: graph output #" + std::to_string(i) + " was not computed");
    outputs[i] = src.clone();
  }
  release_run_tensors();
}

void cpu_executable::release_run_tensors() {
  // The caller's inputs and outputs, and this run's dynamic values, are not this executable's
  // to keep: a dynamic model keeps a program per shape, and each held its last outputs (a
  // language model's logits: 20 MB at 100 tokens).
  for (int b : plan_->inputs)
    if (b >= 0) views_[static_cast<std::size_t>(b)] = Tensor();
  for (std::size_t k = 0; k < plan_->outputs.size(); ++k) {
    const int b = plan_->outputs[k];
    if (b >= 0 && plan_->buffers[static_cast<std::size_t>(b)].graph_output == static_cast<int>(k))
      views_[static_cast<std::size_t>(b)] = Tensor();
  }
  for (auto& t : dyn_) t = Tensor();
  in_.clear();
  out_.clear();
}

void cpu_executable::run_dynamic(const step& st) {
  in_.clear();
  for (std::size_t i = 0; i < st.ref_in.size(); ++i) {
    if (st.in_slot[i] >= 0) {
      const Tensor& t = dyn_[static_cast<std::size_t>(st.in_slot[i])];
      if (t.empty()) throw Exception("CPU: " + graph::describe(*st.op) + ": input " + std::to_string(i) + " was not computed");
      in_.push_back(t);
    } else {
      in_.push_back(st.ref_in[i] < 0 ? Tensor() : views_[static_cast<std::size_t>(st.ref_in[i])]);
    }
  }
  auto res = reference::interpreter::run_op(*plan_->graph, scratch_, *st.op, in_);
  for (std::size_t j = 0; j < res.size() && j < st.ref_out.size(); ++j) {
    if (st.out_slot[j] >= 0) {
      dyn_[static_cast<std::size_t>(st.out_slot[j])] = std::move(res[j]);
    } else if (st.ref_out[j] >= 0) {
      // A static output of a dynamic op: copy it into its plain buffer for the static consumers.
      Tensor& mine = views_[static_cast<std::size_t>(st.ref_out[j])];
      if (res[j].get_size() != mine.get_size() || res[j].get_element_type() != mine.get_element_type())
        throw Exception("CPU: " + graph::describe(*st.op) + ": output " + std::to_string(j) + " is " +
                        to_string(res[j].get_shape()) + " at run time, the plan expects " + to_string(mine.get_shape()));
      res[j].copy_to(mine);
    }
  }
}

} // namespace troupe::kernels::cpu
