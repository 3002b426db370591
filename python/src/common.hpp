#pragma once
/// What the binding's files share: the GIL rules, numpy <-> troupe::Tensor, and the Python
/// classes that hold troupe's handles. The binding adds no behaviour of troupe's; it converts
/// Python values and names errors of Python arguments (TypeError, ValueError).
#include <pybind11/chrono.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <troupe/troupe.hpp>

namespace py = pybind11;

namespace troupe::python {

/// The one way troupe's threads (callbacks, the last owner of a kept array, a state's
/// destructor) enter Python: it takes the GIL unless the interpreter has begun to exit. At
/// exit an atexit hook (close_python_gate) shuts the gate and waits for those inside: a thread
/// that took the GIL during finalization would be ended by Python with a forced unwind through
/// troupe's frames, which aborts the process. After that they leak what they would have
/// dropped instead of touching Python.
class python_call {
public:
  python_call();
  ~python_call();
  python_call(const python_call&) = delete;
  python_call& operator=(const python_call&) = delete;
  /// False when the gate is shut: do not touch Python.
  explicit operator bool() const { return inside_; }

private:
  bool inside_;
  std::optional<py::gil_scoped_acquire> gil_;
};

/// At interpreter exit (atexit, when the module is imported): shuts the gate, waits (the GIL
/// released, 10 s at most) until no troupe thread is inside, then lets every inference in
/// flight end (each at most 10 s): the process must not run its static destructors while a
/// device still runs a kernel.
void close_python_gate();

struct RequestState;
/// Every request made from Python, for close_python_gate to wait for.
std::shared_ptr<RequestState> track(std::shared_ptr<RequestState> state);

/// Drops a troupe handle with the GIL released where this thread holds it: the last handle of
/// a compiled model or a Core may wait for troupe's threads, and one of them may be waiting
/// for the GIL to run a Python callback.
template <class T> void drop_without_gil(T& handle) {
  T old = std::move(handle);
  handle = T();
  if (PyGILState_Check()) {
    py::gil_scoped_release released;
    old = T();
  }
}

/// A reference to a Python object that troupe's threads may drop (a numpy array an input
/// tensor shares): the deleter only notes it; release_arrays lets it go, with the GIL.
std::shared_ptr<void> keep_alive(py::object object);
/// Lets go of the arrays troupe's threads released since the last call (GIL held): called as
/// inputs are set, so a shared array lives at most until the next inference's inputs.
void release_arrays();

/// numpy's dtype for an element type; bf16 is viewed as uint16 (numpy has no bf16), string
/// as object.
py::dtype dtype_of(element_type type);
/// The element type of a numpy dtype ("float32" -> f32); TypeError naming it when none.
element_type type_of_dtype(const py::dtype& dtype);

/// A writable numpy view of a tensor's bytes that keeps its buffer alive (bf16 as uint16).
/// A string tensor gives a copy (an array of str): its elements are C++ strings.
py::array tensor_view(const Tensor& tensor);
/// An output as numpy: a copy (or the view with `share`), bf16 converted to float32.
py::object output_array(const Tensor& tensor, bool share);
/// A tensor for `port` from an array, a nested list or a scalar, cast to the port's element
/// type (float64 -> f32 is converted, never misread). Zero-copy when `share` and the array is
/// C-contiguous, aligned, native-endian and of the port's type: the tensor then keeps the
/// array alive. Bad values are TypeError/ValueError naming `what` (e.g. "input 'x'").
Tensor tensor_for_port(py::handle value, const Port& port, bool share, const std::string& what);
/// A tensor from an array with no port to fit (Tensor(array)).
Tensor tensor_from_array(py::handle value, bool share);

/// One dimension of a PartialShape, as ov.Dimension: the lengths it may take ({n, n}: static).
struct PyDimension {
  dim_range range;
  PyDimension() = default;
  explicit PyDimension(int64_t length) : range(length < 0 ? dim_range{} : dim_range{length, length}) {}
  explicit PyDimension(dim_range r) : range(r) {}
  /// Dim i of `p`, with its bounds.
  static PyDimension of(const PartialShape& p, std::size_t i) { return PyDimension(p.range(i)); }
  bool is_static() const { return range.min == range.max; }
};
/// A Dimension from a Dimension, an int (-1 or None: dynamic), a str ("4", "?", "1..64") or a
/// (min, max) pair; ValueError for an empty range.
PyDimension to_dimension(py::handle value);

/// A PartialShape from a PartialShape, a Shape, a list/tuple of dimensions (to_dimension) or
/// a string ("1,3,?,?").
PartialShape to_partial_shape(py::handle value);
/// Plain string properties (the Python layer turns OpenVINO's keys and values into these).
AnyMap to_any_map(const std::map<std::string, std::string>& properties);

/// Shape, as OpenVINO's Python Shape: a list of ints with its own printing.
struct PyShape {
  Shape dims;
};

/// Tensor, holding the handle.
struct PyTensor {
  Tensor tensor;
};

/// A compiled model's handle.
struct PyCompiledModel {
  CompiledModel model;
  ~PyCompiledModel() { drop_without_gil(model); }
};

/// An InferRequest and its Python side: the callback, its userdata, a callback's exception
/// (raised again by wait), the last latency. Shared by every Python object of this request.
struct RequestState {
  InferRequest request;
  std::vector<Port> inputs, outputs;
  std::mutex mutex; ///< guards the fields below that troupe's callback thread touches
  py::object callback, userdata; ///< touched with the GIL held
  std::exception_ptr callback_error;
  std::chrono::steady_clock::time_point started;
  double latency_ms = 0;
  bool timing = false; ///< started by start_async, its end not yet seen

  RequestState(InferRequest r, std::vector<Port> in, std::vector<Port> out)
      : request(std::move(r)), inputs(std::move(in)), outputs(std::move(out)) {}
  ~RequestState();
  void mark_started();
  void mark_finished();
};

/// InferRequest (many Python objects may share one state).
struct PyInferRequest {
  std::shared_ptr<RequestState> state;
};

/// Input tensors by input index, converted from Python values but not yet set.
using input_tensors = std::vector<std::pair<std::size_t, Tensor>>;
/// Converts a request's inputs from a dict (keys: index, name or port), a list/tuple (in
/// input order) or one value (a model with one input), with the GIL held; sets nothing, so a
/// bad value costs no request. Setting them (apply_inputs) needs no GIL.
input_tensors prepare_inputs(const RequestState& state, py::handle inputs, bool share);
void apply_inputs(RequestState& state, const input_tensors& inputs);
/// Sets a request's inputs from a dict (keys: index, name or port), a list/tuple (in input
/// order) or one value (a model with one input).
void set_inputs(RequestState& state, py::handle inputs, bool share);
/// The outputs of the last inference, in output order.
py::list outputs_of(RequestState& state, bool share);

void bind_dimension(py::module_& m);
void bind_types(py::module_& m);
void bind_tensor(py::module_& m);
void bind_model(py::module_& m);
void bind_core(py::module_& m);
void bind_request(py::module_& m);
void bind_queue(py::module_& m);
void bind_preprocess(py::module_& m);

} // namespace troupe::python
