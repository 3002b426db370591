/// troupe/caf.hpp: a Core on the application's actor system, and one actor per compiled model
/// that turns inference requests into runs of its runner and their results into replies.
#include <troupe/caf.hpp>

#include <troupe/exception.hpp>

#include <unordered_map>
#include <utility>

#include "actors/messages.hpp"
#include "runtime/compiled_model_impl.hpp"
#include "runtime/core_impl.hpp"
#include "runtime/model_impl.hpp"
#include "runtime/port_check.hpp"

namespace troupe {

namespace {

/// Internal to the model actor: a run's result, sent by its completion sink.
using done_atom = caf::atom_constant<caf::atom("tdone")>;
using failed_atom = caf::atom_constant<caf::atom("tfailed")>;

caf::error infer_error(infer_errc code, std::string message) {
  return caf::error(static_cast<uint8_t>(code), infer_error_category, caf::make_message(std::move(message)));
}

infer_errc code_of(actors::failure_kind kind) {
  switch (kind) {
  case actors::failure_kind::bad_input: return infer_errc::invalid_input;
  case actors::failure_kind::cancelled: return infer_errc::cancelled;
  default: return infer_errc::inference_failed;
  }
}

/// Where a model actor's runs end. It is called on a device worker's thread, where the actor's
/// response promises must not be touched (deliver() uses the actor's own execution context):
/// it sends the result to the actor, which replies from inside. It holds the actor weakly, so a
/// result for an actor that was stopped is dropped rather than keeping the actor alive.
class reply_sink final : public actors::completion_sink {
public:
  explicit reply_sink(caf::actor_addr actor) : actor_(std::move(actor)) {}

  void on_outputs(uint64_t request, std::vector<Tensor> outputs, std::vector<kernels::op_profile>) noexcept override {
    try {
      if (auto a = caf::actor_cast<caf::actor>(actor_)) caf::anon_send(a, done_atom::value, request, std::move(outputs));
    } catch (...) {
      // Out of memory for the message: nothing left to tell anyone with.
    }
  }
  void on_error(uint64_t request, const actors::failure& f) noexcept override {
    try {
      if (auto a = caf::actor_cast<caf::actor>(actor_))
        caf::anon_send(a, failed_atom::value, request, static_cast<uint8_t>(code_of(f.kind)), f.message);
    } catch (...) {
    }
  }
  bool wanted(uint64_t) const noexcept override { return true; } ///< the protocol has no cancel

private:
  caf::actor_addr actor_;
};

struct model_state {
  std::shared_ptr<CompiledModel::Impl> model;
  std::shared_ptr<reply_sink> sink;
  uint64_t next_request = 0;
  /// Requests in flight. Each promise holds the actor strongly, so the actor outlives its last
  /// handle until every one is answered.
  std::unordered_map<uint64_t, caf::response_promise> pending;
  static inline const char* name = "troupe.model";
};

/// Count, element type and shape of every input, with InferRequest's words.
void check_inputs(const CompiledModel::Impl& m, const std::vector<Tensor>& inputs) {
  if (inputs.size() != m.inputs.size())
    throw Exception("the model takes " + std::to_string(m.inputs.size()) + " inputs (" + port_list(m.inputs) +
                    "), the request has " + std::to_string(inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i) check_tensor("input", m.inputs[i], inputs[i]);
  check_named_dims(m.inputs, inputs);
}

caf::behavior model_actor(caf::stateful_actor<model_state>* self, std::shared_ptr<CompiledModel::Impl> model) {
  self->state.model = std::move(model);
  self->state.sink = std::make_shared<reply_sink>(self->address());
  self->set_exit_handler([self](caf::exit_msg& msg) {
    if (msg.reason == caf::exit_reason::normal) return; // as CAF's default: a linked actor that ended normally
    for (auto& [id, promise] : self->state.pending)
      promise.deliver(infer_error(infer_errc::cancelled, "the model actor was stopped (" + caf::to_string(msg.reason) +
                                                              ") before the inference finished"));
    self->state.pending.clear();
    self->quit(msg.reason);
  });
  self->set_default_handler([](caf::scheduled_actor*, caf::message_view& msg) -> caf::result<caf::message> {
    return infer_error(infer_errc::invalid_input, "a troupe model actor takes (troupe::infer_atom, "
                                                  "std::vector<troupe::Tensor>), got " +
                                                      caf::to_string(msg.content()));
  });
  return {
    [self](infer_atom, std::vector<Tensor>& inputs) -> caf::result<std::vector<Tensor>> {
      auto& st = self->state;
      try {
        check_inputs(*st.model, inputs);
      } catch (const Exception& e) {
        return infer_error(infer_errc::invalid_input, e.what());
      }
      const uint64_t id = ++st.next_request;
      auto promise = self->make_response_promise();
      st.pending.emplace(id, promise);
      actors::inference job;
      job.request = id;
      job.inputs = std::move(inputs);
      job.sink = st.sink;
      try {
        st.model->runner->submit(std::move(job));
      } catch (const std::exception& e) {
        st.pending.erase(id);
        return infer_error(infer_errc::inference_failed, e.what());
      }
      return promise;
    },
    [self](done_atom, uint64_t id, std::vector<Tensor>& outputs) {
      auto& st = self->state;
      auto it = st.pending.find(id);
      if (it == st.pending.end()) return;
      auto promise = std::move(it->second);
      st.pending.erase(it);
      if (outputs.size() != st.model->outputs.size())
        promise.deliver(infer_error(infer_errc::inference_failed,
                                    "the device returned " + std::to_string(outputs.size()) + " outputs, the model has " +
                                        std::to_string(st.model->outputs.size())));
      else
        promise.deliver(std::move(outputs));
    },
    [self](failed_atom, uint64_t id, uint8_t code, std::string& message) {
      auto& st = self->state;
      auto it = st.pending.find(id);
      if (it == st.pending.end()) return;
      auto promise = std::move(it->second);
      st.pending.erase(it);
      promise.deliver(infer_error(static_cast<infer_errc>(code), std::move(message)));
    },
  };
}

} // namespace

std::unique_ptr<Core> make_core(caf::actor_system& system) { return Core::Impl::make_core(borrow_engine(system)); }

caf::actor spawn_model_actor(caf::actor_system& system, const CompiledModel& model) {
  const auto& impl = model.impl();
  if (!impl) throw Exception("spawn_model_actor: the CompiledModel is empty");
  if (impl->eng->system != &system)
    throw Exception("spawn_model_actor: the model was compiled by a Core on another actor system; compile it "
                    "with a Core from troupe::make_core(system)");
  return system.spawn(model_actor, impl);
}

} // namespace troupe
