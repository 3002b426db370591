/// The `_troupe` extension: troupe's public C++ API with OpenVINO's Python spellings. The
/// package's .py files (python/troupe) build OpenVINO's Python API on it.
#include "common.hpp"

PYBIND11_MODULE(_troupe, m) {
  using namespace troupe::python;
  m.doc() = "troupe's C++ API for Python (use the troupe package, not this module)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const troupe::Exception& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  bind_dimension(m);
  bind_types(m);
  bind_tensor(m);
  bind_model(m);
  bind_core(m);
  bind_request(m);
  bind_queue(m);
  bind_preprocess(m);
  m.def("get_version", [] { return std::string(troupe::version()); });
  // Before the interpreter finalizes: troupe's threads stop entering Python (common.hpp).
  py::module_::import("atexit").attr("register")(py::cpp_function([] { close_python_gate(); }));
  m.attr("__version__") = TROUPE_VERSION_STRING;
}
