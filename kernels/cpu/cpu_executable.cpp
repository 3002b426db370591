#include "kernels/cpu/cpu_executable.hpp"

#include <omp.h>

#include <chrono>
#include <cstring>

#include <troupe/exception.hpp>

namespace troupe::kernels::cpu {

cpu_executable::cpu_executable(std::shared_ptr<const plan> p) : plan_(std::move(p)), stream_(plan_->eng) {
  const auto& bufs = plan_->buffers;
  storage_.resize(bufs.size());
  views_.resize(bufs.size());
  input_mems_.resize(plan_->inputs.size());
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    const auto& b = bufs[i];
    if (b.constant) {
      storage_[i] = *b.constant;
      views_[i] = *b.constant;
    } else if (b.graph_input < 0) {
      storage_[i] = Tensor(element_type::u8, Shape{static_cast<int64_t>(std::max<std::size_t>(b.bytes, 1))});
      views_[i] = Tensor(b.type, b.shape, storage_[i].data());
    }
  }
  args_.resize(plan_->steps.size());
  for (std::size_t s = 0; s < plan_->steps.size(); ++s)
    for (const auto& a : plan_->steps[s].args) {
      const auto& b = bufs[static_cast<std::size_t>(a.buf)];
      dnnl::memory m(a.md, plan_->eng, b.graph_input >= 0 ? nullptr : storage_[a.buf].data());
      if (b.graph_input >= 0) input_mems_[static_cast<std::size_t>(b.graph_input)].push_back(m);
      args_[s].emplace(a.arg, m);
    }
}

void cpu_executable::run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  const plan& p = *plan_;
  if (inputs.size() != p.inputs.size())
    throw Exception("CPU: expected " + std::to_string(p.inputs.size()) + " inputs, got " +
                    std::to_string(inputs.size()));
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const auto& b = p.buffers[static_cast<std::size_t>(p.inputs[k])];
    const Tensor& t = inputs[k];
    if (t.empty() || t.get_element_type() != b.type || t.get_shape() != b.shape)
      throw Exception("CPU: input #" + std::to_string(k) + " must be " + to_string(b.type) + " " +
                      to_string(b.shape) + ", got " + (t.empty() ? std::string("an empty tensor")
                                                                 : to_string(t.get_element_type()) + " " +
                                                                       to_string(t.get_shape())));
    views_[static_cast<std::size_t>(p.inputs[k])] = t;
    for (auto& m : input_mems_[k]) m.set_data_handle(const_cast<void*>(t.data()));
  }
  // The thread count is a per-calling-thread OpenMP setting: each stream keeps its own.
  omp_set_num_threads(p.num_threads);
  if (p.profiling) profile_.assign(p.steps.size(), op_profile{});
  std::vector<Tensor> in, out;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const step& st = p.steps[s];
    auto t0 = std::chrono::steady_clock::now();
    if (st.is_dnnl) {
      st.prim.execute(stream_, args_[s]);
      if (p.profiling) stream_.wait();
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
        if (!out[i].empty() && out[i].data() != mine.data())
          std::memcpy(mine.data(), out[i].data(), std::min(mine.get_byte_size(), out[i].get_byte_size()));
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
  outputs.resize(p.outputs.size());
  for (std::size_t i = 0; i < p.outputs.size(); ++i) {
    const Tensor& src = views_[static_cast<std::size_t>(p.outputs[i])];
    outputs[i] = Tensor(src.get_element_type(), src.get_shape());
    if (src.get_byte_size()) std::memcpy(outputs[i].data(), src.data(), src.get_byte_size());
  }
}

} // namespace troupe::kernels::cpu
