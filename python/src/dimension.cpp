/// Dimension: one dimension of a PartialShape, as OpenVINO's Python Dimension: a length, or a
/// range of lengths ([min, max], max -1 when unbounded; (0, -1) is fully dynamic).
#include "common.hpp"

namespace troupe::python {

namespace {

std::string text_of(const PyDimension& d) {
  return PartialShape::dim_text(d.is_static() ? d.range.max : -1, d.range);
}

PyDimension of_length(int64_t n) {
  if (n < -1) throw py::value_error("a dimension is a length >= 0, or -1 when dynamic; got " + std::to_string(n));
  return PyDimension(n);
}

PyDimension of_bounds(int64_t lo, int64_t hi) {
  if (hi < -1 || (hi >= 0 && hi < lo))
    throw py::value_error("Dimension(" + std::to_string(lo) + ", " + std::to_string(hi) + "): an empty range");
  return PyDimension(dim_range{lo < 0 ? 0 : lo, hi});
}

PyDimension of_text(const std::string& text) {
  try {
    const PartialShape p = PartialShape::parse(text);
    if (p.rank() == 1 && text.find(',') == std::string::npos) return PyDimension(p.range(0));
  } catch (const troupe::Exception&) {
  }
  throw py::value_error("a dimension is written as a length ('4'), '?' (dynamic) or a range ('1..64', '1..', "
                        "'..64'), not '" + text + "'");
}

/// The other side of a comparison: a Dimension or an int, nothing else.
std::optional<PyDimension> other_of(py::handle o) {
  if (py::isinstance<PyDimension>(o)) return o.cast<PyDimension>();
  if (py::isinstance<py::int_>(o)) return PyDimension(o.cast<int64_t>());
  return std::nullopt;
}

/// Every length `a` may take, `b` may take too.
bool within(const dim_range& a, const dim_range& b) {
  return a.min >= b.min && (b.max < 0 || (a.max >= 0 && a.max <= b.max));
}

} // namespace

PyDimension to_dimension(py::handle value) {
  if (py::isinstance<PyDimension>(value)) return value.cast<PyDimension>();
  if (value.is_none()) return PyDimension{};
  if (py::isinstance<py::str>(value)) return of_text(value.cast<std::string>());
  if (py::isinstance<py::int_>(value) || py::hasattr(value, "__index__")) return of_length(value.cast<int64_t>());
  if (py::isinstance<py::tuple>(value) && py::len(value) == 2)
    return of_bounds(value.cast<py::tuple>()[0].cast<int64_t>(), value.cast<py::tuple>()[1].cast<int64_t>());
  throw py::type_error("a dimension is an int (-1 or None: dynamic), a (min, max) pair, a Dimension or a str ('?', "
                       "'1..64'), not " + py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>());
}

void bind_dimension(py::module_& m) {
  py::class_<PyDimension>(m, "Dimension", "One dimension of a PartialShape: static, dynamic or bounded (as ov.Dimension)")
      .def(py::init([] { return PyDimension{}; }), "A dynamic dimension")
      .def(py::init(&of_length), py::arg("dimension"), "A static dimension (-1: dynamic)")
      .def(py::init(&of_bounds), py::arg("min_dimension"), py::arg("max_dimension"),
           "A dynamic dimension within [min, max] (max -1: no upper bound); static when min == max")
      .def(py::init(&of_text), py::arg("dimension"), "'4', '?', '1..64', '1..' or '..64'")
      .def_static("dynamic", [] { return PyDimension{}; })
      .def_property_readonly("is_dynamic", [](const PyDimension& d) { return !d.is_static(); })
      .def_property_readonly("is_static", &PyDimension::is_static)
      .def("get_length",
           [](const PyDimension& d) {
             // RuntimeError, as OpenVINO's (an ov::Exception there).
             if (!d.is_static()) throw std::runtime_error("the dimension " + text_of(d) + " is dynamic: it has no length");
             return d.range.max;
           })
      .def("get_min_length", [](const PyDimension& d) { return d.range.min; })
      .def("get_max_length", [](const PyDimension& d) { return d.range.max; }, "-1 when there is no upper bound")
      .def("same_scheme", [](const PyDimension& a, const PyDimension& b) { return a.range == b.range; }, py::arg("dim"))
      .def("compatible", [](const PyDimension& a, const PyDimension& b) {
        // Some length both may take.
        const int64_t lo = std::max(a.range.min, b.range.min);
        return (a.range.max < 0 || lo <= a.range.max) && (b.range.max < 0 || lo <= b.range.max);
      }, py::arg("dim"))
      .def("relaxes", [](const PyDimension& a, const PyDimension& b) { return within(b.range, a.range); }, py::arg("dim"))
      .def("refines", [](const PyDimension& a, const PyDimension& b) { return within(a.range, b.range); }, py::arg("dim"))
      // == an int too (-1: dynamic), as OpenVINO's; anything else is not equal.
      .def("__eq__", [](const PyDimension& a, py::handle b) -> py::object {
        const auto o = other_of(b);
        if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        return py::bool_(a.range == o->range);
      })
      .def("__hash__", [](const PyDimension& d) {
        // A static dimension hashes as its int (they are equal); others by their range.
        if (d.is_static()) return py::hash(py::int_(d.range.max));
        if (!d.range.bounded()) return py::hash(py::int_(-1));
        return py::hash(py::make_tuple(d.range.min, d.range.max));
      })
      // A static dimension is usable where Python wants an int (range, numpy shapes).
      .def("__index__", [](const PyDimension& d) {
        if (!d.is_static()) throw py::type_error("a dynamic dimension (" + text_of(d) + ") is not an int");
        return d.range.max;
      })
      .def("__str__", &text_of)
      .def("__repr__", [](const PyDimension& d) { return "<Dimension: " + text_of(d) + ">"; });
  py::implicitly_convertible<py::int_, PyDimension>();
  py::implicitly_convertible<py::str, PyDimension>();
}

} // namespace troupe::python
