#pragma once
/// Embedding troupe in a CAF application (CAF 0.17). Opt-in: the one public header that shows
/// CAF types, so that programs which don't include it need no CAF at all.
///
/// An application that runs its own caf::actor_system gives it to troupe (make_core) and gets
/// each compiled model as an actor (spawn_model_actor). Its actors then infer by request, not
/// by blocking a thread:
///
///   self->request(model_actor, caf::infinite, troupe::infer_atom::value, inputs)
///     .then([](std::vector<troupe::Tensor>& outputs) { ... },
///           [](caf::error& e) { ... troupe::error_message(e) ... });
///
/// The protocol of a model actor:
///   request  (troupe::infer_atom, std::vector<troupe::Tensor>)  the model's inputs, in its input order
///   reply    std::vector<troupe::Tensor>                         its outputs, in its output order
///   or       caf::error of category troupe::infer_error_category, code troupe::infer_errc, whose
///            context holds troupe's message (as InferRequest would throw it: it names the
///            input, the shape, the device); troupe::error_message gives it.
/// Any number of requests may be in flight at once; each gets exactly one reply. The actor never
/// blocks its thread: the model runs on troupe's device workers, and their results come back to
/// the actor as messages.
///
/// Tensors cross as handles (no copy of the bytes), so these messages are local-only: they
/// cannot go to another node. The application must not write an input tensor while its request
/// is in flight; each reply's output tensors are its own.
///
/// Lifetimes: the actor system must outlive the Core, every CompiledModel made by it and every
/// model actor (declare the system first; the system's destructor waits for troupe's device
/// workers, which live as long as a model does). A model actor keeps its model alive while it
/// lives or has requests in flight: dropping the Core, the CompiledModel or the actor handle
/// never loses a reply. A model actor that is sent an exit message replies to its pending
/// requests with infer_errc::cancelled and stops.
#include <troupe/export.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include <troupe/compiled_model.hpp>
#include <troupe/core.hpp>
#include <troupe/tensor.hpp>

namespace troupe {

/// The first element of an inference request.
using infer_atom = caf::atom_constant<caf::atom("infer")>;

/// The category of the errors a model actor replies with (caf::error::category()).
constexpr caf::atom_value infer_error_category = caf::atom("troupe");

/// The code of a model actor's error reply (caf::error::code()).
enum class infer_errc : uint8_t {
  invalid_input = 1,    ///< wrong input count, element type or shape, or data a kernel rejected
  inference_failed = 2, ///< the device failed to run it
  cancelled = 3,        ///< the model actor or the device stopped before the result
};

/// A Core whose actors run on `system` instead of an actor system of its own. `system` must
/// outlive the Core and everything made from it (see above).
TROUPE_API std::unique_ptr<Core> make_core(caf::actor_system& system);

/// An actor on `system` that serves inference requests for `model` (the protocol above).
/// `model` must come from a Core that make_core made on the same `system`.
TROUPE_API caf::actor spawn_model_actor(caf::actor_system& system, const CompiledModel& model);

/// troupe's message of a model actor's error reply; for any other error (a timeout, a receiver
/// that is down), CAF's own rendering of it.
inline std::string error_message(const caf::error& e) {
  if (!e) return {};
  if (e.category() == infer_error_category && e.context().match_elements<std::string>())
    return e.context().get_as<std::string>(0);
  return caf::to_string(e);
}

} // namespace troupe

// Tensors are handles to shared buffers: they travel in local messages only (a single one too,
// for an application's own actors).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::Tensor)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<troupe::Tensor>)
