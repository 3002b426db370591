#pragma once
/// A model split into stages (HETERO's subgraphs), each compiled for its own device and run by
/// its own runner. Every stage has a stage actor: it receives the stage's input tensors as
/// messages tagged with the request's collector, fires when all of a request's inputs are in
/// (handing them to the stage's runner, i.e. its device's workers), and the worker that ran
/// the stage sends each output on as a message to the stage actors that read it and to the
/// collector. Several requests in flight therefore pipeline through the stages.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/runner.hpp"

namespace troupe::actors {

/// Where one tensor goes: input `slot` of stage `stage`, or model output `slot` (stage == -1).
struct tensor_route {
  int stage = -1;
  std::size_t slot = 0;
};

struct stage_spec {
  std::unique_ptr<runner> run;                         ///< the stage's compiled subgraph on its device
  std::string label;                                   ///< "subgraph 1 (GPU.0)", for errors
  std::string profile_prefix;                          ///< "subgraph1: ", put before each profiling row
  std::size_t inputs = 0;                              ///< how many inputs the stage takes
  /// Per input: "<tensor> from <device>" when it comes from a stage on another device (a
  /// crossing, profiled as a row of its own), else empty.
  std::vector<std::string> crossings;
  std::vector<std::vector<tensor_route>> output_routes; ///< per stage output, where it goes
};

struct flow_spec {
  std::vector<stage_spec> stages;                       ///< topological: a stage reads only earlier ones
  std::vector<std::vector<tensor_route>> input_routes;  ///< per model input, where it goes
  std::size_t outputs = 0;                              ///< model outputs
  std::vector<std::optional<Tensor>> constant_outputs;  ///< model outputs that no stage computes
};

class hetero_flow final : public runner {
public:
  hetero_flow(caf::actor_system& sys, flow_spec spec);
  ~hetero_flow() override; ///< requests still waiting for inputs fail; the actors exit
  void submit(inference job) override;

  struct wiring; ///< the stages' runners, routes and actors, shared with the stage sinks

private:
  std::shared_ptr<wiring> wiring_;
};

} // namespace troupe::actors
