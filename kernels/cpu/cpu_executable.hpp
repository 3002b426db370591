#pragma once
/// Runs a CPU plan. Each clone owns its oneDNN stream and memory objects; the plan
/// (primitives, reordered weights) is shared; the intermediate buffers live in the running
/// thread's arena.
#include <cstdlib>
#include <memory>
#include <utility>

#include "kernels/cpu/plan.hpp"
#include "kernels/device.hpp"
#include "kernels/output_pool.hpp"

namespace troupe::kernels::cpu {

class cpu_executable : public executable {
public:
  /// `outputs`: where the outputs' blocks come from and go back to (program_output_pool; the
  /// clones share it).
  cpu_executable(std::shared_ptr<const plan> p, std::shared_ptr<output_pool> outputs);
  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override;
  std::vector<op_profile> profile() const override { return profile_; }
  std::unique_ptr<executable> clone() const override { return std::make_unique<cpu_executable>(plan_, outputs_); }

private:
  void run_dynamic(const step& st);
  /// Drops what a run bound of the caller's (inputs, outputs) and made per run (dynamic values).
  void release_run_tensors();
  /// Points every intermediate buffer into the arena at `base`.
  void bind_arena(std::byte* base);

  std::shared_ptr<const plan> plan_;
  std::shared_ptr<output_pool> outputs_; ///< blocks of outputs the caller has let go
  dnnl::stream stream_;
  /// The arena this executable's buffers point into: the running thread's (cpu/thread_arena.hpp),
  /// rebound when it moved. An executable owns none, so the programs a dynamic model keeps per
  /// shape hold no activation memory, and a new shape's first run touches no fresh pages.
  std::byte* bound_ = nullptr;
  std::vector<std::pair<dnnl::memory, std::size_t>> arena_mems_; ///< oneDNN memories in the arena, their offsets
  std::vector<Tensor> storage_; ///< per buffer (views into the arena, constants); graph inputs are bound per run
  std::vector<Tensor> views_;   ///< per buffer: typed plain view for reference kernels
  /// Every oneDNN step's arguments, one flat array (a step's run is `step_args_[s]`: first, count),
  /// handed to oneDNN's C API as they are. A map per step made each execute walk scattered heap
  /// nodes and build a vector: with lengths varying, the programs' maps were cold, and a stream of
  /// 32 lengths spent 7 % of its time in those walks (perf, bert_tiny_int8, 2026-11-29).
  std::vector<dnnl_exec_arg_t> exec_args_;
  std::vector<std::pair<uint32_t, uint32_t>> step_args_;
  std::vector<dnnl::memory> mems_; ///< owns what exec_args_ points at
  std::vector<std::vector<dnnl::memory>> input_mems_;       ///< per graph input: memories to rebind
  std::vector<std::vector<dnnl::memory>> output_mems_;      ///< per graph output written in place: the same
  std::vector<op_profile> profile_;
  graph::Graph scratch_;     ///< run-time shapes for dynamic steps (a copy of plan_->graph)
  std::vector<Tensor> dyn_;  ///< per value id: this run's tensor of a dynamic-shaped value
  std::vector<Tensor> in_, out_;
};

} // namespace troupe::kernels::cpu
