/// Dimension: one dimension of a PartialShape, as OpenVINO's Python Dimension. troupe's
/// PartialShape keeps a length per dimension, or -1 when it is dynamic; it has no bounds, so a
/// Dimension is static or fully dynamic and Dimension(lo, hi) with lo != hi is refused.
#include "common.hpp"

namespace troupe::python {

namespace {

std::string text_of(const PyDimension& d) { return d.length < 0 ? "?" : std::to_string(d.length); }

PyDimension of_length(int64_t n) {
  if (n < -1) throw py::value_error("a dimension is a length >= 0, or -1 when dynamic; got " + std::to_string(n));
  return PyDimension{n};
}

PyDimension of_bounds(int64_t lo, int64_t hi) {
  if (lo == hi && lo >= 0) return PyDimension{lo};
  if (lo == 0 && hi == -1) return PyDimension{}; // OpenVINO's fully dynamic interval
  throw py::value_error("Dimension(" + std::to_string(lo) + ", " + std::to_string(hi) +
                        "): troupe's shapes have no bounds; a dimension is static (Dimension(n)) or dynamic "
                        "(Dimension())");
}

PyDimension of_text(const std::string& text) {
  if (text == "?" || text == "-1") return PyDimension{};
  try {
    std::size_t used = 0;
    const long long n = std::stoll(text, &used);
    if (used == text.size() && n >= 0) return PyDimension{n};
  } catch (const std::exception&) {
  }
  throw py::value_error("a dimension is written as a length ('4') or '?' (dynamic), not '" + text + "'");
}

/// The other side of a comparison: a Dimension or an int, nothing else.
std::optional<PyDimension> other_of(py::handle o) {
  if (py::isinstance<PyDimension>(o)) return o.cast<PyDimension>();
  if (py::isinstance<py::int_>(o)) return PyDimension{o.cast<int64_t>() < 0 ? -1 : o.cast<int64_t>()};
  return std::nullopt;
}

} // namespace

PyDimension to_dimension(py::handle value) {
  if (py::isinstance<PyDimension>(value)) return value.cast<PyDimension>();
  if (value.is_none()) return PyDimension{};
  if (py::isinstance<py::str>(value)) return of_text(value.cast<std::string>());
  if (py::isinstance<py::int_>(value) || py::hasattr(value, "__index__")) return of_length(value.cast<int64_t>());
  if (py::isinstance<py::tuple>(value) && py::len(value) == 2)
    return of_bounds(value.cast<py::tuple>()[0].cast<int64_t>(), value.cast<py::tuple>()[1].cast<int64_t>());
  throw py::type_error("a dimension is an int (-1 or None: dynamic), a Dimension or a str ('?'), not " +
                       py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>());
}

void bind_dimension(py::module_& m) {
  py::class_<PyDimension>(m, "Dimension", "One dimension of a PartialShape, static or dynamic (as ov.Dimension)")
      .def(py::init([] { return PyDimension{}; }), "A dynamic dimension")
      .def(py::init(&of_length), py::arg("dimension"), "A static dimension (-1: dynamic)")
      .def(py::init(&of_bounds), py::arg("min_dimension"), py::arg("max_dimension"),
           "Only lo == hi (static) or (0, -1) (dynamic): troupe's shapes have no bounds")
      .def(py::init(&of_text), py::arg("dimension"), "'4' or '?'")
      .def_static("dynamic", [] { return PyDimension{}; })
      .def_property_readonly("is_dynamic", [](const PyDimension& d) { return d.length < 0; })
      .def_property_readonly("is_static", [](const PyDimension& d) { return d.length >= 0; })
      .def("get_length",
           [](const PyDimension& d) {
             // RuntimeError, as OpenVINO's (an ov::Exception there).
             if (d.length < 0) throw std::runtime_error("the dimension is dynamic: it has no length");
             return d.length;
           })
      .def("get_min_length", [](const PyDimension& d) { return d.length < 0 ? int64_t{0} : d.length; })
      .def("get_max_length", [](const PyDimension& d) { return d.length; }, "-1 when dynamic (no upper bound)")
      .def("same_scheme", [](const PyDimension& a, const PyDimension& b) { return a.length == b.length; },
           py::arg("dim"))
      .def("compatible", [](const PyDimension& a, const PyDimension& b) {
        return a.length < 0 || b.length < 0 || a.length == b.length;
      }, py::arg("dim"))
      .def("relaxes", [](const PyDimension& a, const PyDimension& b) { return a.length < 0 || a.length == b.length; },
           py::arg("dim"))
      .def("refines", [](const PyDimension& a, const PyDimension& b) { return b.length < 0 || a.length == b.length; },
           py::arg("dim"))
      // == an int too (-1: dynamic), as OpenVINO's; anything else is not equal.
      .def("__eq__", [](const PyDimension& a, py::handle b) -> py::object {
        const auto o = other_of(b);
        if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        return py::bool_(a.length == o->length);
      })
      .def("__hash__", [](const PyDimension& d) { return py::hash(py::int_(d.length)); })
      // A static dimension is usable where Python wants an int (range, numpy shapes).
      .def("__index__", [](const PyDimension& d) {
        if (d.length < 0) throw py::type_error("a dynamic dimension is not an int");
        return d.length;
      })
      .def("__str__", &text_of)
      .def("__repr__", [](const PyDimension& d) { return "<Dimension: " + text_of(d) + ">"; });
  py::implicitly_convertible<py::int_, PyDimension>();
  py::implicitly_convertible<py::str, PyDimension>();
}

} // namespace troupe::python
