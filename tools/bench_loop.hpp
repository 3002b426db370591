#pragma once
/// benchmark_app's measurement: the first inference apart, then requests run back to back
/// (sync) or all in flight (async), until the iteration and time limits are both reached.
#include <cstdint>
#include <vector>

#include <troupe/troupe.hpp>

#include "tools/input_data.hpp"

namespace troupe::cli {

struct loop_settings {
  bool async = true;
  uint64_t niter = 0;          ///< 0: no iteration limit
  double seconds = 0;          ///< 0: no time limit
  double max_irate = 0;        ///< inferences per second at most; 0: no limit
  bool inference_only = true;  ///< tensors set once per request, not per iteration
  std::vector<int64_t> batch;  ///< frames per inference of each input set
  std::size_t configurations = 1;
};

struct loop_result {
  std::vector<double> latencies;                  ///< ms, one per iteration
  std::vector<std::vector<double>> by_configuration; ///< the same, split by -data_shape configuration
  uint64_t iterations = 0;
  uint64_t frames = 0;         ///< iterations times their batch
  double duration_ms = 0;      ///< first start to last completion
  /// Requests that failed after one had succeeded (a node lost with nothing to take over);
  /// not in the latencies. A failure before any success ends the run instead.
  uint64_t failed = 0;
  std::string first_failure;
};

/// Gives request i the tensors of set i % sets (inference-only mode, and before the first inference).
void assign_sets(std::vector<InferRequest>& reqs, const input_sets& sets);

/// One inference of request 0 as the loop would run it; its latency in ms.
double first_inference(InferRequest& req, bool async);

loop_result measure(std::vector<InferRequest>& reqs, const input_sets& sets, const loop_settings& s);

} // namespace troupe::cli
