/// Type, Shape, PartialShape, Layout, ports (ConstOutput), Node and its rt_info, ProfilingInfo.
#include "common.hpp"

#include <functional>

namespace troupe::python {

namespace {

std::string join_dims(const Shape& dims) { return troupe::to_string(dims); }

/// A Node's rt_info as a mutable mapping (OpenVINO's RTMap): node.get_rt_info()["affinity"] = "CPU".
struct RtInfo {
  Node node;
};

std::string type_name_of(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>(); }

/// A dimension's position from a Python index (negative from the end); IndexError past the rank.
std::size_t dim_index(const PartialShape& p, py::ssize_t i) {
  const auto n = static_cast<py::ssize_t>(p.rank());
  if (i < 0) i += n;
  if (i < 0 || i >= n) throw py::index_error("PartialShape index out of range");
  return static_cast<std::size_t>(i);
}

} // namespace

PartialShape to_partial_shape(py::handle value) {
  if (py::isinstance<PartialShape>(value)) return value.cast<PartialShape>();
  if (py::isinstance<PyShape>(value)) return PartialShape(value.cast<PyShape>().dims);
  if (py::isinstance<py::str>(value)) return PartialShape::parse(value.cast<std::string>());
  if (py::isinstance<py::sequence>(value) || py::isinstance<py::array>(value)) {
    PartialShape ps;
    for (py::handle d : value) {
      ps.dims.push_back(-1);
      ps.set_range(ps.dims.size() - 1, to_dimension(d).range);
    }
    return ps;
  }
  throw py::type_error("a shape is a PartialShape, a Shape, a list of ints or a string such as '1,3,?,?', not " +
                       type_name_of(value));
}

AnyMap to_any_map(const std::map<std::string, std::string>& properties) {
  AnyMap out;
  for (const auto& [k, v] : properties) out.emplace(k, Any(v));
  return out;
}

void bind_types(py::module_& m) {
  py::enum_<element_type> type(m, "Type", "Element types, as ov.Type (OpenVINO's names: f32, i64, boolean, ...)");
  type.value("undefined", element_type::undefined)
      .value("f32", element_type::f32)
      .value("f16", element_type::f16)
      .value("bf16", element_type::bf16)
      .value("f64", element_type::f64)
      .value("i8", element_type::i8)
      .value("u8", element_type::u8)
      .value("i16", element_type::i16)
      .value("u16", element_type::u16)
      .value("i32", element_type::i32)
      .value("u32", element_type::u32)
      .value("i64", element_type::i64)
      .value("u64", element_type::u64)
      .value("boolean", element_type::boolean)
      .value("string", element_type::string)
      .def("get_type_name", [](element_type t) { return to_string(t); })
      .def_property_readonly("type_name", [](element_type t) { return to_string(t); })
      .def("to_dtype", [](element_type t) { return dtype_of(t); }, "numpy's dtype (bf16: uint16, string: object)")
      .def_property_readonly("size", [](element_type t) { return element_size(t); })
      .def("get_size", [](element_type t) { return element_size(t); });
  // Replaced, not overloaded: enum_'s own __str__/__repr__ would match first.
  type.attr("__str__") = py::cpp_function([](element_type t) { return to_string(t); }, py::is_method(type));
  type.attr("__repr__") =
      py::cpp_function([](element_type t) { return "<Type: '" + to_string(t) + "'>"; }, py::is_method(type));
  type.def_static("from_string", [](const std::string& s) { return element_type_from_string(s); }, py::arg("name"));
  type.def_static("from_dtype", [](py::object d) { return type_of_dtype(py::dtype::from_args(d)); }, py::arg("dtype"));

  py::class_<PyShape>(m, "Shape", "A static shape, as ov.Shape")
      .def(py::init([](py::handle dims) {
             PartialShape ps = to_partial_shape(dims);
             if (!ps.is_static()) throw py::value_error("a Shape is static; got " + ps.to_string());
             return PyShape{ps.dims};
           }),
           py::arg("dims") = py::list())
      .def("__len__", [](const PyShape& s) { return s.dims.size(); })
      .def("__getitem__",
           [](const PyShape& s, py::ssize_t i) {
             const auto n = static_cast<py::ssize_t>(s.dims.size());
             if (i < 0) i += n;
             if (i < 0 || i >= n) throw py::index_error("Shape index out of range");
             return s.dims[static_cast<std::size_t>(i)];
           })
      .def("__iter__", [](const PyShape& s) { return py::iter(py::cast(s.dims)); })
      .def("__eq__",
           [](const PyShape& s, py::handle o) {
             try {
               PartialShape ps = to_partial_shape(o);
               return ps.rank_known && ps.dims == s.dims;
             } catch (py::error_already_set&) {
               return false;
             } catch (const py::builtin_exception&) {
               return false;
             } catch (const troupe::Exception&) {
               return false;
             }
           })
      .def("__hash__", [](const PyShape& s) { return py::hash(py::tuple(py::cast(s.dims))); })
      .def("to_string", [](const PyShape& s) { return join_dims(s.dims); })
      .def("__str__", [](const PyShape& s) { return join_dims(s.dims); })
      .def("__repr__", [](const PyShape& s) { return "<Shape: " + join_dims(s.dims) + ">"; });

  py::class_<PartialShape>(m, "PartialShape", "A shape whose dimensions may be dynamic (-1), as ov.PartialShape")
      .def(py::init([](py::handle v) { return to_partial_shape(v); }), py::arg("dims"))
      .def_property_readonly("is_static", &PartialShape::is_static)
      .def_property_readonly("is_dynamic", [](const PartialShape& p) { return !p.is_static(); })
      .def_property_readonly("rank", [](const PartialShape& p) {
        return p.rank_known ? PyDimension(static_cast<int64_t>(p.rank())) : PyDimension{};
      }, "a Dimension, as OpenVINO's (dynamic when the rank is unknown)")
      .def("to_shape", [](const PartialShape& p) { return PyShape{p.to_shape()}; })
      .def("get_shape", [](const PartialShape& p) { return PyShape{p.to_shape()}; })
      .def("__len__", [](const PartialShape& p) { return p.rank(); })
      .def("__getitem__", [](const PartialShape& p, py::ssize_t i) { return PyDimension::of(p, dim_index(p, i)); })
      .def("__getitem__",
           [](const PartialShape& p, const py::slice& s) {
             py::ssize_t start = 0, stop = 0, step = 0, n = 0;
             if (!s.compute(static_cast<py::ssize_t>(p.rank()), &start, &stop, &step, &n))
               throw py::error_already_set();
             PartialShape out;
             for (py::ssize_t k = 0; k < n; ++k, start += step) {
               out.dims.push_back(-1);
               out.set_range(out.dims.size() - 1, p.range(static_cast<std::size_t>(start)));
             }
             return out;
           })
      .def("__setitem__",
           [](PartialShape& p, py::ssize_t i, py::handle d) {
             const std::size_t at = dim_index(p, i);
             p.set_range(at, to_dimension(d).range);
             if (at < p.symbols.size()) p.symbols[at].clear(); // the ONNX name was the old dimension's
           })
      .def("__iter__", [](const PartialShape& p) {
        py::list dims;
        for (std::size_t i = 0; i < p.rank(); ++i) dims.append(py::cast(PyDimension::of(p, i)));
        return py::iter(dims);
      })
      .def("get_dimension", [](const PartialShape& p, py::ssize_t i) { return PyDimension::of(p, dim_index(p, i)); },
           py::arg("index"))
      .def("__eq__",
           [](const PartialShape& p, py::handle o) {
             try {
               return to_partial_shape(o) == p;
             } catch (py::error_already_set&) {
               return false;
             } catch (const py::builtin_exception&) {
               return false;
             } catch (const troupe::Exception&) {
               return false;
             }
           })
      .def("__hash__", [](const PartialShape& p) { return py::hash(py::str(p.to_string())); })
      .def("to_string", &PartialShape::to_string)
      .def("__str__", &PartialShape::to_string)
      .def("__repr__", [](const PartialShape& p) { return "<PartialShape: " + p.to_string() + ">"; });

  py::class_<Layout>(m, "Layout", "Names of a tensor's dimensions ('NCHW'), as ov.Layout")
      .def(py::init<>())
      .def(py::init<const std::string&>(), py::arg("layout"))
      .def("empty", &Layout::empty)
      .def_property_readonly("rank", &Layout::rank)
      .def("has_name", [](const Layout& l, const std::string& n) { return n.size() == 1 && l.has(n[0]); })
      .def("get_index_by_name", [](const Layout& l, const std::string& n) {
        const long i = n.size() == 1 ? l.index_of(n[0]) : -1;
        if (i < 0) throw py::value_error("layout " + l.to_string() + " has no dimension '" + n + "'");
        return i;
      })
      .def("to_string", &Layout::to_string)
      .def("__eq__", [](const Layout& a, const Layout& b) { return a == b; })
      .def("__str__", &Layout::to_string)
      .def("__repr__", [](const Layout& l) { return "<Layout: " + l.to_string() + ">"; });
  py::implicitly_convertible<py::str, Layout>();

  py::class_<Port>(m, "ConstOutput", "A model's input or output (as ov.ConstOutput / ov.Output)")
      .def("get_any_name", &Port::get_any_name)
      .def_property_readonly("any_name", &Port::get_any_name)
      .def("get_names", [](const Port& p) { return py::set(py::make_tuple(p.get_any_name())); })
      .def_property_readonly("names", [](const Port& p) { return py::set(py::make_tuple(p.get_any_name())); })
      .def("get_index", &Port::get_index)
      .def_property_readonly("index", &Port::get_index)
      .def("get_element_type", &Port::get_element_type)
      .def_property_readonly("element_type", &Port::get_element_type)
      .def("get_partial_shape", &Port::get_partial_shape)
      .def_property_readonly("partial_shape", &Port::get_partial_shape)
      .def("get_layout", &Port::get_layout, "the layout the model declares (OpenVINO IR's rt_info); empty when none")
      .def("get_shape", [](const Port& p) { return PyShape{p.get_shape()}; })
      .def_property_readonly("shape", [](const Port& p) { return PyShape{p.get_shape()}; })
      .def("__hash__", [](const Port& p) { return std::hash<std::string>()(p.get_any_name()) ^ (p.get_index() * 0x9e3779b9u); })
      .def("__eq__",
           [](const Port& a, py::handle b) {
             if (!py::isinstance<Port>(b)) return false;
             const Port& o = b.cast<const Port&>();
             return a.get_any_name() == o.get_any_name() && a.get_index() == o.get_index() &&
                    a.get_element_type() == o.get_element_type();
           })
      .def("__repr__", [](const Port& p) {
        return "<ConstOutput: names[" + p.get_any_name() + "] shape" + p.get_partial_shape().to_string() +
               " type: " + to_string(p.get_element_type()) + ">";
      });

  py::class_<RtInfo>(m, "RTMap", "A node's runtime info ('affinity' -> a device name): edits change the model")
      .def("__getitem__",
           [](RtInfo& r, const std::string& k) {
             auto& map = r.node.get_rt_info();
             auto it = map.find(k);
             if (it == map.end()) throw py::key_error(k);
             return it->second;
           })
      .def("__setitem__", [](RtInfo& r, const std::string& k, py::handle v) { r.node.get_rt_info()[k] = py::str(v).cast<std::string>(); })
      .def("__delitem__",
           [](RtInfo& r, const std::string& k) {
             if (!r.node.get_rt_info().erase(k)) throw py::key_error(k);
           })
      .def("__contains__", [](RtInfo& r, const std::string& k) { return r.node.get_rt_info().count(k) > 0; })
      .def("__len__", [](RtInfo& r) { return r.node.get_rt_info().size(); })
      .def("__iter__", [](RtInfo& r) {
        py::list keys;
        for (const auto& kv : r.node.get_rt_info()) keys.append(kv.first);
        return py::iter(keys);
      })
      .def("keys", [](RtInfo& r) {
        py::list keys;
        for (const auto& kv : r.node.get_rt_info()) keys.append(kv.first);
        return keys;
      })
      .def("items", [](RtInfo& r) { return py::cast(r.node.get_rt_info()).attr("items")(); })
      .def("get", [](RtInfo& r, const std::string& k, py::object d) -> py::object {
        auto& map = r.node.get_rt_info();
        auto it = map.find(k);
        return it == map.end() ? d : py::str(it->second);
      }, py::arg("key"), py::arg("default") = py::none());

  py::class_<Node>(m, "Node", "One op of a model")
      .def("get_friendly_name", &Node::get_friendly_name)
      .def_property_readonly("friendly_name", &Node::get_friendly_name)
      .def("get_type_name", &Node::get_type_name)
      .def("get_rt_info", [](const Node& n) { return RtInfo{n}; })
      .def_property_readonly("rt_info", [](const Node& n) { return RtInfo{n}; })
      .def("__repr__", [](const Node& n) { return "<" + n.get_type_name() + ": '" + n.get_friendly_name() + "'>"; });

  py::class_<ProfilingInfo> info(m, "ProfilingInfo", "One op's performance counter (as ov.ProfilingInfo)");
  py::enum_<ProfilingInfo::Status>(info, "Status")
      .value("NOT_RUN", ProfilingInfo::Status::NOT_RUN)
      .value("OPTIMIZED_OUT", ProfilingInfo::Status::OPTIMIZED_OUT)
      .value("EXECUTED", ProfilingInfo::Status::EXECUTED);
  info.def_readonly("status", &ProfilingInfo::status)
      .def_readonly("real_time", &ProfilingInfo::real_time)
      .def_readonly("cpu_time", &ProfilingInfo::cpu_time)
      .def_readonly("node_name", &ProfilingInfo::node_name)
      .def_readonly("exec_type", &ProfilingInfo::exec_type)
      .def_readonly("node_type", &ProfilingInfo::node_type)
      .def("__repr__", [](const ProfilingInfo& p) {
        return "<ProfilingInfo: " + p.node_name + " " + p.node_type + " " + p.exec_type + " " +
               std::to_string(p.real_time.count()) + " us>";
      });
}

} // namespace troupe::python
