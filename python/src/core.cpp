/// Core, Model and CompiledModel. Every call that reads, compiles or waits runs with the GIL
/// released.
#include "common.hpp"

#include <sstream>

namespace troupe::python {

namespace {

/// The Core; dropped with the GIL released (its engine waits for troupe's threads).
struct PyCore {
  std::unique_ptr<Core> core = std::make_unique<Core>();
  ~PyCore() { drop_without_gil(core); }
};

std::string type_name_of(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>(); }

bool is_buffer(py::handle h) {
  return py::isinstance<py::bytes>(h) || py::isinstance<py::bytearray>(h) || py::isinstance<py::memoryview>(h);
}

/// A path from str or os.PathLike; TypeError naming what was given otherwise.
std::string path_of(py::handle h, const char* what) {
  if (py::isinstance<py::str>(h) || py::hasattr(h, "__fspath__"))
    return py::str(py::module_::import("os").attr("fspath")(h)).cast<std::string>();
  throw py::type_error(std::string(what) + " is a path (str or os.PathLike), not " + type_name_of(h));
}

/// The name of the input a reshape key (name, index or port) means.
std::string input_name(const Model& model, py::handle key) {
  if (py::isinstance<py::str>(key)) return key.cast<std::string>();
  if (py::isinstance<Port>(key)) return key.cast<const Port&>().get_any_name();
  if (py::isinstance<py::int_>(key)) {
    const auto i = key.cast<long long>();
    const auto n = model.inputs().size();
    if (i < 0 || static_cast<std::size_t>(i) >= n)
      throw py::value_error("input index " + std::to_string(i) + " is out of range: the model has " + std::to_string(n) +
                            " input(s)");
    return model.input(static_cast<std::size_t>(i)).get_any_name();
  }
  throw py::type_error("an input is named by an int index, a str name or a port, not " + type_name_of(key));
}

Port compiled_port(const std::vector<Port>& ports, py::handle key, const char* kind) {
  if (py::isinstance<py::int_>(key)) {
    const auto i = key.cast<long long>();
    if (i < 0 || static_cast<std::size_t>(i) >= ports.size())
      throw py::value_error(std::string(kind) + " index " + std::to_string(i) + " is out of range: the model has " +
                            std::to_string(ports.size()) + " " + kind + "(s)");
    return ports[static_cast<std::size_t>(i)];
  }
  if (py::isinstance<py::str>(key)) {
    const auto name = key.cast<std::string>();
    std::string names;
    for (const auto& p : ports) {
      if (p.get_any_name() == name) return p;
      names += (names.empty() ? "'" : ", '") + p.get_any_name() + "'";
    }
    throw py::value_error("the model has no " + std::string(kind) + " named '" + name + "'; its " + kind + "s: " + names);
  }
  throw py::type_error(std::string(kind) + " is chosen by an int index or a str name, not " + type_name_of(key));
}

} // namespace

void bind_model(py::module_& m) {
  py::class_<Model>(m, "Model", "A model read from ONNX (as ov.Model)")
      .def_property_readonly("inputs", &Model::inputs)
      .def_property_readonly("outputs", &Model::outputs)
      .def("input", py::overload_cast<std::size_t>(&Model::input, py::const_), py::arg("index") = 0)
      .def("input", py::overload_cast<const std::string&>(&Model::input, py::const_), py::arg("tensor_name"))
      .def("output", py::overload_cast<std::size_t>(&Model::output, py::const_), py::arg("index") = 0)
      .def("output", py::overload_cast<const std::string&>(&Model::output, py::const_), py::arg("tensor_name"))
      .def("get_parameters", &Model::inputs)
      .def("get_results", &Model::outputs)
      .def("get_output_size", [](const Model& mo) { return mo.outputs().size(); })
      .def("is_dynamic", [](const Model& mo) {
        for (const auto& p : mo.inputs())
          if (!p.get_partial_shape().is_static()) return true;
        return false;
      })
      .def(
          "reshape",
          [](Model& mo, py::handle shapes) {
            if (py::isinstance<py::dict>(shapes)) {
              std::map<std::string, PartialShape> by_name;
              for (auto [k, v] : py::reinterpret_borrow<py::dict>(shapes)) by_name[input_name(mo, k)] = to_partial_shape(v);
              py::gil_scoped_release released;
              mo.reshape(by_name);
            } else {
              PartialShape ps = to_partial_shape(shapes);
              py::gil_scoped_release released;
              mo.reshape(ps);
            }
          },
          py::arg("shapes"),
          "One shape for the only input, or a dict {name | index | port: shape}; a shape is a PartialShape, a "
          "list of ints (-1: dynamic) or a string")
      .def("get_ops", &Model::get_ops)
      .def("get_ordered_ops", &Model::get_ops)
      .def("get_friendly_name", &Model::get_friendly_name)
      .def_property_readonly("friendly_name", &Model::get_friendly_name)
      .def("__repr__", [](const Model& mo) {
        std::string s = "<Model: '" + mo.get_friendly_name() + "'\ninputs[\n";
        for (const auto& p : mo.inputs())
          s += "<ConstOutput: names[" + p.get_any_name() + "] shape" + p.get_partial_shape().to_string() + " type: " +
               to_string(p.get_element_type()) + ">,\n";
        s += "]\noutputs[\n";
        for (const auto& p : mo.outputs())
          s += "<ConstOutput: names[" + p.get_any_name() + "] shape" + p.get_partial_shape().to_string() + " type: " +
               to_string(p.get_element_type()) + ">,\n";
        return s + "]>";
      });
}

void bind_core(py::module_& m) {
  py::class_<PyCompiledModel>(m, "CompiledModel", "A model compiled for a device (as ov.CompiledModel)")
      .def(py::init([](const PyCompiledModel& other) { return PyCompiledModel{other.model}; }), py::arg("other"))
      .def("create_infer_request",
           [](PyCompiledModel& c) {
             InferRequest r;
             {
               py::gil_scoped_release released;
               r = c.model.create_infer_request();
             }
             return PyInferRequest{track(std::make_shared<RequestState>(std::move(r), c.model.inputs(), c.model.outputs()))};
           })
      .def_property_readonly("inputs", [](const PyCompiledModel& c) { return c.model.inputs(); })
      .def_property_readonly("outputs", [](const PyCompiledModel& c) { return c.model.outputs(); })
      .def("input", [](const PyCompiledModel& c, py::handle key) { return compiled_port(c.model.inputs(), key, "input"); },
           py::arg("key") = 0)
      .def("output", [](const PyCompiledModel& c, py::handle key) { return compiled_port(c.model.outputs(), key, "output"); },
           py::arg("key") = 0)
      .def("get_property", [](const PyCompiledModel& c, const std::string& name) { return c.model.get_property(name).as_string(); },
           py::arg("name"))
      .def("set_property",
           [](PyCompiledModel& c, const std::map<std::string, std::string>& props) {
             const AnyMap map = to_any_map(props);
             py::gil_scoped_release released;
             c.model.set_property(map);
           },
           py::arg("properties"))
      .def("export_model", [](const PyCompiledModel& c) {
        std::ostringstream out;
        {
          py::gil_scoped_release released;
          c.model.export_model(out);
        }
        return py::bytes(out.str());
      });

  py::class_<PyCore>(m, "Core", "The entry point (as ov.Core): devices, models, properties")
      .def(py::init([] {
        py::gil_scoped_release released;
        return new PyCore();
      }))
      .def_property_readonly("available_devices", [](const PyCore& c) {
        py::gil_scoped_release released;
        return c.core->available_devices();
      })
      .def(
          "read_model",
          [](const PyCore& c, py::handle model, py::handle weights) {
            if (!weights.is_none() && !(is_buffer(weights) && py::len(weights) == 0))
              throw py::value_error("an ONNX model holds its weights: read_model takes no weights (got " +
                                    type_name_of(weights) + ")");
            if (is_buffer(model)) {
              py::buffer_info info = py::reinterpret_borrow<py::buffer>(model).request();
              py::gil_scoped_release released;
              return c.core->read_model_from_memory(info.ptr, static_cast<std::size_t>(info.size * info.itemsize),
                                                    "model.onnx");
            }
            const std::string path = path_of(model, "model");
            py::gil_scoped_release released;
            return c.core->read_model(path);
          },
          py::arg("model"), py::arg("weights") = py::none(),
          "From an .onnx path (str or os.PathLike) or the bytes of one")
      .def(
          "compile_model",
          [](PyCore& c, py::handle model, const std::string& device, const std::map<std::string, std::string>& config) {
            const AnyMap props = to_any_map(config);
            if (py::isinstance<Model>(model)) {
              const Model& mo = model.cast<const Model&>();
              py::gil_scoped_release released;
              return PyCompiledModel{c.core->compile_model(mo, device, props)};
            }
            const std::string path = path_of(model, "model (a Model or a path)");
            py::gil_scoped_release released;
            return PyCompiledModel{c.core->compile_model(path, device, props)};
          },
          py::arg("model"), py::arg("device_name"), py::arg("config"))
      .def(
          "import_model",
          [](PyCore& c, const std::string& blob, const std::string& device, const std::map<std::string, std::string>& config) {
            const AnyMap props = to_any_map(config);
            py::gil_scoped_release released;
            std::istringstream in(blob);
            return PyCompiledModel{c.core->import_model(in, device, props)};
          },
          py::arg("model_stream"), py::arg("device_name"), py::arg("config"))
      .def(
          "query_model",
          [](const PyCore& c, const Model& model, const std::string& device, const std::map<std::string, std::string>& config) {
            const AnyMap props = to_any_map(config);
            py::gil_scoped_release released;
            return c.core->query_model(model, device, props);
          },
          py::arg("model"), py::arg("device_name"), py::arg("config"))
      .def(
          "set_property",
          [](PyCore& c, const std::string& device, const std::map<std::string, std::string>& props) {
            const AnyMap map = to_any_map(props);
            py::gil_scoped_release released; // a GPU name may enumerate Vulkan devices
            c.core->set_property(device, map);
          },
          py::arg("device_name"), py::arg("properties"))
      .def(
          "set_core_property",
          [](PyCore& c, const std::map<std::string, std::string>& props) {
            const AnyMap map = to_any_map(props);
            py::gil_scoped_release released;
            c.core->set_property(map);
          },
          py::arg("properties"))
      .def(
          "get_property",
          [](const PyCore& c, const std::string& device, const std::string& name) {
            py::gil_scoped_release released;
            return c.core->get_property(device, name).as_string();
          },
          py::arg("device_name"), py::arg("name"))
      .def(
          "add_node",
          [](PyCore& c, const std::string& address, const std::map<std::string, std::string>& options) {
            const AnyMap props = to_any_map(options);
            py::gil_scoped_release released;
            c.core->add_node(address, props);
          },
          py::arg("address"), py::arg("options"));
}

} // namespace troupe::python
