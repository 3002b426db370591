#pragma once
/// The device interface (DESIGN.md, kernels/): what a device is called and can do, whether
/// it supports an op, compiling a static-shaped subgraph into an executable, running it.
#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <troupe/exception.hpp>
#include <troupe/tensor.hpp>

#include "graph/ir.hpp"
#include "kernels/derived_constants.hpp"
#include "kernels/output_pool.hpp"
#include "kernels/device_presence.hpp"

namespace troupe::kernels {

/// How a run failed, so that a scheduler re-dispatches what a device failed and never what the
/// input caused (or what nobody wants any more).
enum class failure_kind {
  bad_input,      ///< the request's data caused it (an index out of range, a wrong size): any device fails alike
  device_failure, ///< the device could not run it (out of memory, a driver or library error)
  device_lost,    ///< the device is gone (VK_ERROR_DEVICE_LOST): it will fail every request now
  cancelled,      ///< nobody wants the result: the request was cancelled or the model destroyed
};
inline const char* failure_name(failure_kind k) {
  switch (k) {
  case failure_kind::bad_input: return "bad input";
  case failure_kind::device_failure: return "device failure";
  case failure_kind::device_lost: return "device lost";
  case failure_kind::cancelled: return "cancelled";
  }
  return "?";
}

/// What a device throws from run() when the device, not the input, is at fault. Any other
/// troupe::Exception from run() counts as bad input.
class device_error : public Exception {
public:
  device_error(failure_kind kind, const std::string& what) : Exception(what), kind_(kind) {}
  failure_kind kind() const { return kind_; }

private:
  failure_kind kind_;
};

/// Validated options a device compiles with.
struct compile_config {
  int num_threads = 0;                                ///< per stream; 0 = device default
  /// Requests the caller runs at once on the compiled model (a remote node runs as many).
  int streams = 1;
  element_type inference_precision = element_type::f32; ///< f32 or bf16
  bool profiling = false;
  /// With inference_precision f16 on a GPU: float16 arithmetic in the Conv/MatMul/Gemm loops
  /// too, not only float16 storage (GPU_F16_ARITHMETIC).
  bool f16_arithmetic = false;
  /// CACHE_DIR: a folder where the device keeps what makes a second compile faster (a GPU: its
  /// Vulkan pipeline cache). Empty: no cache.
  std::string cache_dir;
  /// Shared by the compiles of one compiled model (each new shape of a dynamic one, each
  /// distinct value of a value-keyed one): what the device derived from the weights, reused.
  /// Null: derived every time. Not a setting: it changes no result.
  std::shared_ptr<derived_constants> derived;
  /// Shared alike: blocks of outputs the caller let go, for any program's next outputs (a
  /// dynamic model's programs per shape share them). Null: each executable keeps its own.
  std::shared_ptr<output_pool> output_blocks;
};

/// Where a program of `outputs` outputs compiled with `cfg` (and its clones) takes its outputs'
/// blocks from: the compiled model's pool, or one of its own; either keeps a block per output
/// for each run at once, and one more.
inline std::shared_ptr<output_pool> program_output_pool(const compile_config& cfg, std::size_t outputs) {
  auto pool = cfg.output_blocks ? cfg.output_blocks : std::make_shared<output_pool>(0);
  pool->keep_at_least(outputs * static_cast<std::size_t>(std::max(1, cfg.streams) + 1));
  return pool;
}

/// One row of performance counters, as ov::ProfilingInfo.
struct op_profile {
  enum class status { executed, optimized_out };
  std::string node_name;
  std::string node_type;
  std::string exec_type; ///< the implementation, e.g. "jit:avx512_core_f32", "ref"
  status state = status::executed;
  double real_time_us = 0;
};

/// A compiled subgraph. Not thread-safe: each stream owns its own clone (immutable parts such
/// as reordered weights and primitives are shared between clones).
class executable {
public:
  virtual ~executable() = default;
  /// `inputs` in the subgraph's input order; `outputs` resized and filled in output order with
  /// freshly allocated tensors the caller may keep.
  virtual void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) = 0;
  /// Counters of the last run (empty unless compiled with profiling).
  virtual std::vector<op_profile> profile() const = 0;
  virtual std::unique_ptr<executable> clone() const = 0;
  /// Whether compiling found a valid cache in compile_config::cache_dir and used it.
  virtual bool loaded_from_cache() const { return false; }
};

struct support {
  bool supported = false;
  std::string reason; ///< why not, when unsupported
};

class device {
public:
  virtual ~device() = default;
  virtual std::string name() const = 0; ///< "CPU"
  /// Read-only facts: FULL_DEVICE_NAME, OPTIMIZATION_CAPABILITIES, ...
  virtual std::map<std::string, std::string> info() const = 0;
  /// Can this op, with these attributes, types and shapes, run here? Pure: no side effects.
  virtual support query(const graph::Graph& g, const graph::Op& op) const = 0;
  /// For an op whose shapes wait on input values (a Reshape whose target the caller gives):
  /// whether the device may run it once they are known, judged on what no shape changes (op
  /// type, attributes). A device that needs no static shapes answers as query() does.
  virtual support query_pending(const graph::Graph& g, const graph::Op& op) const { return query(g, op); }
  /// The graph has static shapes, is shape-inferred and passed query() for every op.
  virtual std::unique_ptr<executable> compile(const graph::Graph& g, const compile_config& cfg) const = 0;
  /// For a device that can go away and come back (a remote node's): whether it is there now,
  /// and who wants to know when that changes. Local devices have none.
  virtual std::shared_ptr<device_presence> presence() const { return nullptr; }
};

} // namespace troupe::kernels
