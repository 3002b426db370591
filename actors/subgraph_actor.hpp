#pragma once
/// One compiled subgraph on one device with N streams (N detached device workers behind a
/// stream_dispatcher). With static input shapes an inference goes straight from the caller to
/// an idle worker. With dynamic input shapes it goes to the subgraph actor, which compiles one
/// program per distinct set of input shapes on first use, caches it, and dispatches. The
/// worker delivers the outputs to the inference's sink; HETERO will chain subgraphs through
/// sinks, MULTI will put a scheduler actor in front of several.
#include <functional>
#include <memory>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/runner.hpp"
#include "actors/stream_dispatcher.hpp"

namespace troupe::actors {

/// Compiles the subgraph for concrete input shapes (in the subgraph's input order).
using program_compiler = std::function<std::shared_ptr<const program>(const std::vector<Shape>&)>;

struct subgraph_spec {
  std::shared_ptr<const program> fixed; ///< compiled ahead when every input shape is static
  program_compiler compile;              ///< used when `fixed` is null
  std::size_t streams = 1;
  bool profiling = false;
};

class subgraph final : public runner {
public:
  subgraph(caf::actor_system& sys, subgraph_spec spec);
  ~subgraph() override; ///< queued inferences fail; the actors exit
  subgraph(const subgraph&) = delete;
  subgraph& operator=(const subgraph&) = delete;

  /// From any thread; the result (or error) reaches `job.sink` exactly once.
  void submit(inference job) override;

private:
  std::shared_ptr<const program> fixed_;
  std::shared_ptr<stream_dispatcher> dispatcher_;
  std::vector<caf::actor> workers_;
  caf::actor compiler_; ///< the subgraph actor, only for dynamic shapes
};

} // namespace troupe::actors
