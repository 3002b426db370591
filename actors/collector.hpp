#pragma once
/// One request's collector in a multi-stage (HETERO) model: gathers the model outputs as the
/// stages produce them and completes the request's sink exactly once, with every output or
/// with the first error. Once it has completed, later stages of the request are dropped
/// (wanted() turns false), so a failed request costs no more device time.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/messages.hpp"

namespace troupe::actors {

class collector {
public:
  collector(uint64_t request, std::shared_ptr<completion_sink> sink, std::size_t outputs, std::size_t stages);
  uint64_t request() const { return request_; }
  /// When the request entered the model: every stage runs it with this age.
  uint64_t age() const { return age_; }
  /// Model output `index`; the last one to arrive completes the request.
  void set_output(std::size_t index, Tensor t);
  /// Profiling rows of stage `stage`, kept in stage order in the result.
  void add_profile(std::size_t stage, std::vector<kernels::op_profile> rows);
  /// The first failure completes the request with it; later ones are dropped.
  void fail(const failure& f);
  bool wanted() const;

private:
  const uint64_t request_;
  const uint64_t age_;
  const std::shared_ptr<completion_sink> sink_;
  mutable std::mutex mutex_;
  std::vector<Tensor> outputs_;
  std::vector<std::vector<kernels::op_profile>> profiles_;
  std::size_t missing_;
  bool done_ = false;
};

} // namespace troupe::actors
