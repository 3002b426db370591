/// numpy <-> troupe::Tensor, and the Tensor class.
#include "common.hpp"

#include <bit>
#include <cstring>
#include <map>
#include <mutex>

#include <troupe/float16.hpp>

namespace troupe::python {

namespace {

const py::module_& numpy() {
  static auto* np = new py::module_(py::module_::import("numpy")); // leaked: lives to exit
  return *np;
}

std::string shape_text(const py::array& a) {
  std::string s = "[";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? "," : "") + std::to_string(a.shape(i));
  return s + "]";
}

std::string dtype_text(const py::dtype& d) { return py::str(static_cast<const py::handle&>(d)).cast<std::string>(); }

bool equivalent(const py::dtype& a, const py::dtype& b) {
  return py::detail::npy_api::get().PyArray_EquivTypes_(a.ptr(), b.ptr());
}

bool native_order(const py::dtype& d) {
  const char o = d.byteorder();
  return o == '=' || o == '|' || (o == '<' && std::endian::native == std::endian::little) ||
         (o == '>' && std::endian::native == std::endian::big);
}

Shape shape_of(const py::array& a) { return Shape(a.shape(), a.shape() + a.ndim()); }

/// Any value as an ndarray; a ragged nested list is a ValueError naming `what`.
py::array as_array(py::handle value, const std::string& what) {
  if (py::isinstance<py::array>(value)) return py::reinterpret_borrow<py::array>(value);
  try {
    return numpy().attr("asarray")(value);
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_ValueError) || e.matches(PyExc_TypeError))
      throw py::value_error(what + ": cannot make an array of the given " +
                            std::string(py::str(py::type::handle_of(value).attr("__name__"))) + ": " + e.what());
    throw;
  }
}

/// A string tensor from an array of str, bytes or objects (each element str()-ed).
Tensor string_tensor(const py::array& arr) {
  Tensor t(element_type::string, shape_of(arr));
  py::list flat = arr.attr("ravel")().attr("tolist")();
  auto* out = t.data<std::string>();
  std::size_t i = 0;
  for (py::handle item : flat) {
    if (py::isinstance<py::bytes>(item)) out[i++] = item.cast<std::string>();
    else out[i++] = py::str(item).cast<std::string>();
  }
  return t;
}

/// Copies (casting) `arr` into a new tensor of `type`.
Tensor copy_into(const py::array& arr, element_type type) {
  Tensor t(type, shape_of(arr));
  if (type == element_type::bf16) {
    auto f = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(arr);
    if (!f) throw py::type_error("an array of dtype " + dtype_text(arr.dtype()) + " does not convert to bf16");
    const float* src = f.data();
    auto* dst = t.data<uint16_t>();
    for (int64_t i = 0; i < t.get_size(); ++i) dst[i] = float_to_bf16_bits(src[i]);
    return t;
  }
  const py::dtype want = dtype_of(type);
  if (equivalent(arr.dtype(), want) && native_order(arr.dtype()) && (arr.flags() & py::array::c_style)) {
    std::memcpy(t.data(), arr.data(), t.get_byte_size());
    return t;
  }
  numpy().attr("copyto")(tensor_view(t), arr, py::arg("casting") = "unsafe");
  return t;
}

/// A read-only array is copied too: the tensor's .data is a writable view, and writing
/// through it into read-only memory (np.frombuffer of bytes) would crash.
bool zero_copy_ok(const py::array& arr, element_type type) {
  constexpr int aligned = 0x0100, writeable = 0x0400; // NPY_ARRAY_ALIGNED, NPY_ARRAY_WRITEABLE
  return type != element_type::bf16 && type != element_type::string && equivalent(arr.dtype(), dtype_of(type)) &&
         native_order(arr.dtype()) && (arr.flags() & py::array::c_style) && (arr.flags() & aligned) &&
         (arr.flags() & writeable);
}

Tensor shared_or_copied(const py::array& arr, element_type type, bool share) {
  if (type == element_type::string) return string_tensor(arr);
  if (share && zero_copy_ok(arr, type))
    return Tensor(type, shape_of(arr), keep_alive(arr), const_cast<void*>(arr.data()));
  return copy_into(arr, type);
}

} // namespace

namespace {
std::mutex released_mutex;
auto* released = new std::vector<PyObject*>(); // leaked: lives to exit
} // namespace

std::shared_ptr<void> keep_alive(py::object object) {
  PyObject* p = object.release().ptr();
  // Released by whichever thread drops the tensor last, mostly a device worker: it only notes
  // the array, and the next call from Python lets it go (release_arrays). Taking the GIL here
  // instead made every shared inference wait for the Python thread (34 us against 27 us for
  // a copy, Add 1x8). Arrays still noted at exit are leaked rather than touch a dying runtime.
  return std::shared_ptr<void>(p, [](void* o) {
    std::lock_guard lock(released_mutex);
    released->push_back(static_cast<PyObject*>(o));
  });
}

void release_arrays() {
  std::vector<PyObject*> now;
  {
    std::lock_guard lock(released_mutex);
    if (released->empty()) return;
    now.swap(*released);
  }
  for (auto* o : now) Py_DECREF(o);
}

py::dtype dtype_of(element_type type) {
  static auto* cache = new std::map<element_type, py::dtype>(); // leaked: lives to exit; GIL held
  auto it = cache->find(type);
  if (it != cache->end()) return it->second;
  const char* name = nullptr;
  switch (type) {
  case element_type::f32: name = "float32"; break;
  case element_type::f16: name = "float16"; break;
  case element_type::f64: name = "float64"; break;
  case element_type::bf16: name = "uint16"; break;
  case element_type::i8: name = "int8"; break;
  case element_type::u8: name = "uint8"; break;
  case element_type::i16: name = "int16"; break;
  case element_type::u16: name = "uint16"; break;
  case element_type::i32: name = "int32"; break;
  case element_type::u32: name = "uint32"; break;
  case element_type::i64: name = "int64"; break;
  case element_type::u64: name = "uint64"; break;
  case element_type::boolean: name = "bool"; break;
  case element_type::string: name = "object"; break;
  case element_type::undefined: throw py::type_error("element type undefined has no numpy dtype");
  }
  return cache->emplace(type, py::dtype(std::string(name))).first->second;
}

element_type type_of_dtype(const py::dtype& dtype) {
  const char kind = dtype.kind();
  if (kind == 'U' || kind == 'S' || kind == 'O') return element_type::string;
  if (kind == 'b') return element_type::boolean;
  const auto size = dtype.itemsize();
  if (kind == 'f' && size == 2) return element_type::f16;
  if (kind == 'f' && size == 4) return element_type::f32;
  if (kind == 'f' && size == 8) return element_type::f64;
  if (kind == 'i' || kind == 'u') {
    static const element_type s[] = {element_type::i8, element_type::i16, element_type::i32, element_type::i64};
    static const element_type u[] = {element_type::u8, element_type::u16, element_type::u32, element_type::u64};
    const int k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
    if (k >= 0) return kind == 'i' ? s[k] : u[k];
  }
  throw py::type_error("numpy dtype " + dtype_text(dtype) + " has no troupe element type");
}

py::array tensor_view(const Tensor& tensor) {
  if (tensor.empty()) throw py::value_error("the tensor is empty (no buffer)");
  const Shape& shape = tensor.get_shape();
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  if (tensor.get_element_type() == element_type::string) {
    py::list items;
    for (int64_t i = 0; i < tensor.get_size(); ++i) items.append(py::str(tensor.data<std::string>()[i]));
    return py::array(numpy().attr("array")(items, py::arg("dtype") = "str").attr("reshape")(dims));
  }
  auto* owner = new Tensor(tensor);
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dtype_of(tensor.get_element_type()), dims, {}, const_cast<void*>(tensor.data()), base);
}

py::object output_array(const Tensor& tensor, bool share) {
  if (tensor.get_element_type() == element_type::bf16) {
    const Shape& shape = tensor.get_shape();
    py::array_t<float> out(std::vector<py::ssize_t>(shape.begin(), shape.end()));
    const auto* src = tensor.data<uint16_t>();
    float* dst = out.mutable_data();
    for (int64_t i = 0; i < tensor.get_size(); ++i) dst[i] = bf16_bits_to_float(src[i]);
    return out;
  }
  if (share || tensor.get_element_type() == element_type::string) return tensor_view(tensor);
  if (tensor.empty()) throw py::value_error("the tensor is empty (no buffer)");
  const Shape& shape = tensor.get_shape();
  py::array out(dtype_of(tensor.get_element_type()), std::vector<py::ssize_t>(shape.begin(), shape.end()));
  std::memcpy(out.mutable_data(), tensor.data(), tensor.get_byte_size());
  return out;
}

Tensor tensor_for_port(py::handle value, const Port& port, bool share, const std::string& what) {
  const element_type type = port.get_element_type();
  py::array arr = as_array(value, what);
  const char kind = arr.dtype().kind();
  const bool text = kind == 'U' || kind == 'S' || kind == 'O';
  if (type == element_type::string ? !text : (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f'))
    throw py::type_error(what + " is " + to_string(type) + ": an array of dtype " + dtype_text(arr.dtype()) +
                         " does not convert to it");
  const PartialShape& want = port.get_partial_shape();
  bool fits = !want.rank_known || want.rank() == static_cast<std::size_t>(arr.ndim());
  for (std::size_t i = 0; fits && want.rank_known && i < want.rank(); ++i)
    fits = want.dims[i] < 0 || want.dims[i] == arr.shape(static_cast<py::ssize_t>(i));
  if (!fits)
    throw py::value_error(what + ": wrong shape: expected " + want.to_string() + ", got " + shape_text(arr));
  return shared_or_copied(arr, type, share);
}

Tensor tensor_from_array(py::handle value, bool share) {
  py::array arr = as_array(value, "Tensor");
  return shared_or_copied(arr, type_of_dtype(arr.dtype()), share);
}

void bind_tensor(py::module_& m) {
  py::class_<PyTensor>(m, "Tensor", "A tensor (as ov.Tensor): element type, shape and a buffer")
      .def(py::init([](py::array array, bool shared_memory) { return PyTensor{tensor_from_array(array, shared_memory)}; }),
           py::arg("array"), py::arg("shared_memory") = false,
           "From a numpy array: copied, or with shared_memory=True sharing its memory (C-contiguous arrays only; "
           "others are copied)")
      .def(py::init([](element_type type, py::handle shape) {
             PartialShape ps = to_partial_shape(shape);
             if (!ps.is_static()) throw py::value_error("a Tensor needs a static shape, got " + ps.to_string());
             return PyTensor{Tensor(type, ps.to_shape())};
           }),
           py::arg("type"), py::arg("shape"))
      .def_property_readonly("data", [](const PyTensor& t) { return tensor_view(t.tensor); },
                             "A writable numpy view of the tensor's memory (bf16 as uint16)")
      .def_property_readonly("shape", [](const PyTensor& t) { return PyShape{t.tensor.get_shape()}; })
      .def("get_shape", [](const PyTensor& t) { return PyShape{t.tensor.get_shape()}; })
      .def_property_readonly("element_type", [](const PyTensor& t) { return t.tensor.get_element_type(); })
      .def("get_element_type", [](const PyTensor& t) { return t.tensor.get_element_type(); })
      .def_property_readonly("size", [](const PyTensor& t) { return t.tensor.get_size(); })
      .def("get_size", [](const PyTensor& t) { return t.tensor.get_size(); })
      .def_property_readonly("byte_size", [](const PyTensor& t) { return t.tensor.get_byte_size(); })
      .def("get_byte_size", [](const PyTensor& t) { return t.tensor.get_byte_size(); })
      .def("copy_to", [](const PyTensor& t, PyTensor& dst) { t.tensor.copy_to(dst.tensor); }, py::arg("target_tensor"))
      .def("__repr__", [](const PyTensor& t) {
        return "<Tensor: shape" + troupe::to_string(t.tensor.get_shape()) + " type: " +
               troupe::to_string(t.tensor.get_element_type()) + ">";
      });
}

} // namespace troupe::python
