#include "actors/hetero_flow.hpp"

#include <chrono>
#include <map>

#include "actors/collector.hpp"
#include "actors/system_tail.hpp"

namespace troupe::actors {

using stage_input_atom = caf::atom_constant<caf::atom("stagein")>;

using clock_type = std::chrono::steady_clock;

/// One tensor for one stage of one request.
struct stage_input {
  std::shared_ptr<collector> request;
  std::size_t slot = 0;
  Tensor tensor;
  clock_type::time_point sent; ///< when its producer handed it on
};

} // namespace troupe::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::actors::stage_input)

namespace troupe::actors {

struct hetero_flow::wiring {
  flow_spec spec;
  std::vector<caf::actor> actors; ///< one stage actor per stage

  /// Sends `t` along `routes`: model outputs to the collector; a stage that takes this one
  /// tensor only fires at once (nothing to gather: straight to its device's workers, one
  /// thread wake-up per crossing instead of two); other stages get it as a message.
  void route(const std::shared_ptr<const wiring>& self, const std::vector<tensor_route>& routes, const Tensor& t,
             const std::shared_ptr<collector>& req) const;
};

namespace {

/// Where a stage's worker delivers: outputs routed on, profiling rows and errors to the collector.
class stage_sink final : public completion_sink {
public:
  /// `sent`: per input, when its producer handed it on (for the crossing rows).
  stage_sink(std::shared_ptr<const hetero_flow::wiring> w, std::size_t stage, std::shared_ptr<collector> req,
             std::vector<clock_type::time_point> sent = {})
      : w_(std::move(w)), stage_(stage), req_(std::move(req)), sent_(std::move(sent)) {}

  void on_started(uint64_t) noexcept override { started_ = clock_type::now(); }

  void on_outputs(uint64_t, std::vector<Tensor> outputs, std::vector<kernels::op_profile> profile) noexcept override {
    try {
      const auto& st = w_->spec.stages[stage_];
      if (outputs.size() != st.output_routes.size()) {
        req_->fail({failure_kind::device_failure, st.label + " returned " + std::to_string(outputs.size()) +
                                                      " outputs, expected " + std::to_string(st.output_routes.size())});
        return;
      }
      for (auto& row : profile) row.node_name = st.profile_prefix + row.node_name;
      if (!profile.empty()) {
        // Each tensor that crossed from another device: a row of its own, from the moment its
        // producer handed it on to the moment this stage started (hand-over and queueing).
        std::vector<kernels::op_profile> rows;
        for (std::size_t i = 0; i < sent_.size() && i < st.crossings.size(); ++i)
          if (!st.crossings[i].empty())
            rows.push_back({st.profile_prefix + st.crossings[i], "Crossing", "handoff",
                            kernels::op_profile::status::executed,
                            std::chrono::duration<double, std::micro>(started_ - sent_[i]).count()});
        rows.insert(rows.end(), std::make_move_iterator(profile.begin()), std::make_move_iterator(profile.end()));
        req_->add_profile(stage_, std::move(rows));
      }
      for (std::size_t i = 0; i < outputs.size(); ++i) w_->route(w_, st.output_routes[i], outputs[i], req_);
    } catch (...) {
      req_->fail(current_failure());
    }
  }
  void on_error(uint64_t, const failure& f) noexcept override {
    try {
      req_->fail({f.kind, w_->spec.stages[stage_].label + ": " + f.message});
    } catch (...) {
    }
  }
  bool wanted(uint64_t) const noexcept override { return req_->wanted(); }

private:
  std::shared_ptr<const hetero_flow::wiring> w_;
  std::size_t stage_;
  std::shared_ptr<collector> req_;
  std::vector<clock_type::time_point> sent_;
  clock_type::time_point started_;
};

} // namespace

void hetero_flow::wiring::route(const std::shared_ptr<const wiring>& self, const std::vector<tensor_route>& routes,
                                const Tensor& t, const std::shared_ptr<collector>& req) const {
  for (const auto& r : routes) {
    if (r.stage < 0) {
      req->set_output(r.slot, t);
      continue;
    }
    const auto s = static_cast<std::size_t>(r.stage);
    if (spec.stages[s].inputs == 1) {
      if (req->wanted())
        spec.stages[s].run->submit(inference{req->request(), {t},
                                             std::make_shared<stage_sink>(self, s, req, std::vector{clock_type::now()}),
                                             req->age()});
      continue;
    }
    caf::anon_send(actors[s], stage_input_atom::value, stage_input{req, r.slot, t, clock_type::now()});
  }
}

namespace {

struct pending_inputs {
  std::shared_ptr<collector> request;
  std::vector<Tensor> inputs;
  std::vector<clock_type::time_point> sent;
  std::size_t missing = 0;
};

struct stage_state {
  std::weak_ptr<const hetero_flow::wiring> w; ///< weak: the wiring holds this actor
  std::size_t stage = 0;
  std::map<const collector*, pending_inputs> pending;

  void fail_pending(const std::string& why) {
    for (auto& [k, p] : pending) p.request->fail({failure_kind::cancelled, why});
    pending.clear();
  }
};

caf::behavior stage_actor(caf::event_based_actor* self, std::shared_ptr<stage_state> st) {
  self->attach_functor([st] { st->fail_pending("the compiled model was destroyed"); });
  return {
      [st](stage_input_atom, stage_input& message) {
        system_tail busy;
        auto in = std::move(message); // its request goes inside the tail, not with the message
        auto w = st->w.lock();
        if (!w) return;
        const auto& spec = w->spec.stages[st->stage];
        if (!in.request->wanted()) {
          st->pending.erase(in.request.get());
          return;
        }
        auto [it, fresh] = st->pending.try_emplace(in.request.get());
        auto& p = it->second;
        if (fresh) {
          p.request = in.request;
          p.inputs.resize(spec.inputs);
          p.sent.resize(spec.inputs);
          p.missing = spec.inputs;
        }
        if (in.slot < p.inputs.size() && p.inputs[in.slot].empty()) {
          p.inputs[in.slot] = std::move(in.tensor);
          p.sent[in.slot] = in.sent;
          --p.missing;
        }
        if (p.missing > 0) return;
        inference job{p.request->request(), std::move(p.inputs),
                      std::make_shared<stage_sink>(w, st->stage, p.request, std::move(p.sent)), p.request->age()};
        st->pending.erase(it);
        spec.run->submit(std::move(job));
      },
  };
}

} // namespace

hetero_flow::hetero_flow(caf::actor_system& sys, flow_spec spec) : wiring_(std::make_shared<wiring>()) {
  wiring_->spec = std::move(spec);
  for (std::size_t s = 0; s < wiring_->spec.stages.size(); ++s) {
    auto st = std::make_shared<stage_state>();
    st->w = wiring_;
    st->stage = s;
    // Detached: a stage actor wakes on its mailbox at once, as the device workers do (the
    // cooperative scheduler backs off to long sleeps between bursts, engine.cpp).
    wiring_->actors.push_back(sys.spawn<caf::detached>(stage_actor, std::move(st)));
  }
}

hetero_flow::~hetero_flow() {
  // No request is in flight now: each one's stage sinks hold its collector, which holds the
  // request, which holds the compiled model and so this flow. The stage actors hold the wiring
  // weakly (and strongly only while handing work on), so the runners go with the last holder,
  // never under a caller; no wait here, which may run on a worker's or stage actor's thread.
  for (auto& a : wiring_->actors) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

void hetero_flow::submit(inference job) {
  const auto& spec = wiring_->spec;
  auto req = std::make_shared<collector>(job.request, std::move(job.sink), spec.outputs, spec.stages.size());
  for (std::size_t i = 0; i < spec.constant_outputs.size(); ++i)
    if (spec.constant_outputs[i]) req->set_output(i, *spec.constant_outputs[i]);
  if (job.inputs.size() != spec.input_routes.size()) {
    req->fail({failure_kind::bad_input, "the model takes " + std::to_string(spec.input_routes.size()) +
                                            " inputs, got " + std::to_string(job.inputs.size())});
    return;
  }
  for (std::size_t i = 0; i < job.inputs.size(); ++i) wiring_->route(wiring_, spec.input_routes[i], job.inputs[i], req);
  // A stage that reads no tensor (its ops start from constants) has nothing to wait for.
  for (std::size_t s = 0; s < spec.stages.size(); ++s)
    if (spec.stages[s].inputs == 0)
      spec.stages[s].run->submit(
          inference{req->request(), {}, std::make_shared<stage_sink>(wiring_, s, req), req->age()});
}

} // namespace troupe::actors
