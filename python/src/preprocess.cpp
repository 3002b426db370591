/// troupe.preprocess: the C++ PrePostProcessor (include/troupe/preprocess.hpp) with OpenVINO's
/// Python names. The info objects are references into their PrePostProcessor (which keeps them
/// in a deque, so they stay valid); each keeps its parent alive, and every setter returns the
/// same Python object, so calls chain as in OpenVINO.
#include "common.hpp"

namespace troupe::python {

namespace {

namespace pp = troupe::preprocess;
constexpr auto ref = py::return_value_policy::reference_internal;

std::string type_name_of(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>(); }

/// mean/scale's argument: one number for every channel, or one per channel.
std::vector<float> values_of(py::handle v, const char* step) {
  if (py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v)) return {v.cast<float>()};
  if (!py::isinstance<py::str>(v) && (py::isinstance<py::sequence>(v) || py::isinstance<py::array>(v))) {
    std::vector<float> out;
    for (py::handle x : v) {
      if (!py::isinstance<py::float_>(x) && !py::isinstance<py::int_>(x) && !py::hasattr(x, "__float__"))
        throw py::type_error(std::string(step) + ": the values are numbers, not " + type_name_of(x));
      out.push_back(x.cast<float>());
    }
    return out;
  }
  throw py::type_error(std::string(step) + " takes a number or a list of numbers (one per channel), not " +
                       type_name_of(v));
}

/// A size argument that must be > 0 (ValueError naming the call otherwise).
std::size_t size_of(int64_t v, const char* call) {
  if (v <= 0) throw py::value_error(std::string(call) + ": sizes are > 0, got " + std::to_string(v));
  return static_cast<std::size_t>(v);
}

/// convert_layout's argument: a Layout ("NCHW") or a dimension order ([0, 3, 1, 2]).
template <class Steps> Steps& convert_layout(Steps& steps, py::handle v) {
  if (py::isinstance<Layout>(v)) return steps.convert_layout(v.cast<Layout>());
  if (py::isinstance<py::str>(v)) return steps.convert_layout(Layout(v.cast<std::string>()));
  if (py::isinstance<py::sequence>(v)) {
    std::vector<uint64_t> order;
    for (py::handle x : v) {
      if (!py::isinstance<py::int_>(x) || x.cast<int64_t>() < 0)
        throw py::type_error("convert_layout: an order is a list of dimension indices (ints >= 0), not " +
                             py::repr(v).cast<std::string>());
      order.push_back(x.cast<uint64_t>());
    }
    return steps.convert_layout(order);
  }
  throw py::type_error("convert_layout takes a Layout, a str ('NCHW') or a list of dimension indices, not " +
                       type_name_of(v));
}

/// ppp.input(key) / ppp.output(key): by index or name.
template <class Info, class ByIndex, class ByName>
Info& info_at(py::handle key, const char* kind, ByIndex by_index, ByName by_name) {
  if (py::isinstance<py::str>(key)) return by_name(key.cast<std::string>());
  if (py::isinstance<py::int_>(key)) {
    const auto i = key.cast<int64_t>();
    if (i < 0) throw py::value_error(std::string(kind) + " index " + std::to_string(i) + " is negative");
    return by_index(static_cast<std::size_t>(i));
  }
  if (py::isinstance<Port>(key)) return by_name(key.cast<const Port&>().get_any_name());
  throw py::type_error(std::string(kind) + " is chosen by an int index, a str name or a port, not " +
                       type_name_of(key));
}

} // namespace

void bind_preprocess(py::module_& parent) {
  py::module_ m = parent.def_submodule("preprocess", "PrePostProcessor (as openvino.preprocess)");

  py::enum_<pp::ColorFormat>(m, "ColorFormat", "The channel order (RGB and BGR; troupe has no NV12, I420, GRAY)")
      .value("UNDEFINED", pp::ColorFormat::UNDEFINED)
      .value("RGB", pp::ColorFormat::RGB)
      .value("BGR", pp::ColorFormat::BGR);
  py::enum_<pp::ResizeAlgorithm>(m, "ResizeAlgorithm",
                                 "Half-pixel linear and cubic, and nearest at floor(x * in / out), as OpenCV's")
      .value("RESIZE_LINEAR", pp::ResizeAlgorithm::RESIZE_LINEAR)
      .value("RESIZE_NEAREST", pp::ResizeAlgorithm::RESIZE_NEAREST)
      .value("RESIZE_CUBIC", pp::ResizeAlgorithm::RESIZE_CUBIC);

  py::class_<pp::InputTensorInfo>(m, "InputTensorInfo", "What the application's tensor is")
      .def("set_element_type", &pp::InputTensorInfo::set_element_type, py::arg("type"), ref)
      .def("set_layout", &pp::InputTensorInfo::set_layout, py::arg("layout"), ref)
      .def("set_color_format", [](pp::InputTensorInfo& t, pp::ColorFormat f, py::handle) -> pp::InputTensorInfo& {
        return t.set_color_format(f);
      }, py::arg("format"), py::arg("sub_names") = py::list(), ref)
      .def("set_shape", [](pp::InputTensorInfo& t, py::handle s) -> pp::InputTensorInfo& {
        return t.set_shape(to_partial_shape(s));
      }, py::arg("shape"), ref)
      .def("set_spatial_static_shape", [](pp::InputTensorInfo& t, int64_t h, int64_t w) -> pp::InputTensorInfo& {
        const char* call = "set_spatial_static_shape";
        return t.set_spatial_static_shape(size_of(h, call), size_of(w, call));
      }, py::arg("height"), py::arg("width"), ref)
      .def("set_spatial_dynamic_shape", &pp::InputTensorInfo::set_spatial_dynamic_shape, ref);

  py::class_<pp::PreProcessSteps>(m, "PreProcessSteps", "The steps from the application's tensor to the model's input")
      .def("convert_element_type", &pp::PreProcessSteps::convert_element_type, py::arg("type"), ref)
      .def("convert_color", &pp::PreProcessSteps::convert_color, py::arg("dst_format"), ref)
      .def("mean", [](pp::PreProcessSteps& s, py::handle v) -> pp::PreProcessSteps& {
        return s.mean(values_of(v, "mean"));
      }, py::arg("value"), ref)
      .def("scale", [](pp::PreProcessSteps& s, py::handle v) -> pp::PreProcessSteps& {
        return s.scale(values_of(v, "scale"));
      }, py::arg("value"), ref)
      .def("resize", [](pp::PreProcessSteps& s, pp::ResizeAlgorithm a) -> pp::PreProcessSteps& { return s.resize(a); },
           py::arg("alg"), ref)
      .def("resize", [](pp::PreProcessSteps& s, pp::ResizeAlgorithm a, int64_t h, int64_t w) -> pp::PreProcessSteps& {
        return s.resize(a, size_of(h, "resize"), size_of(w, "resize"));
      }, py::arg("alg"), py::arg("dst_height"), py::arg("dst_width"), ref)
      .def("convert_layout", [](pp::PreProcessSteps& s, py::handle v) -> pp::PreProcessSteps& {
        return convert_layout(s, v);
      }, py::arg("dst_layout"), ref)
      .def("reverse_channels", &pp::PreProcessSteps::reverse_channels, ref);

  py::class_<pp::InputModelInfo>(m, "InputModelInfo", "What the model's input is")
      .def("set_layout", &pp::InputModelInfo::set_layout, py::arg("layout"), ref);

  py::class_<pp::InputInfo>(m, "InputInfo", "One input's tensor, steps and model sides")
      .def("tensor", &pp::InputInfo::tensor, ref)
      .def("preprocess", &pp::InputInfo::preprocess, ref)
      .def("model", &pp::InputInfo::model, ref);

  py::class_<pp::OutputTensorInfo>(m, "OutputTensorInfo", "What the application wants back")
      .def("set_element_type", &pp::OutputTensorInfo::set_element_type, py::arg("type"), ref)
      .def("set_layout", &pp::OutputTensorInfo::set_layout, py::arg("layout"), ref);

  py::class_<pp::PostProcessSteps>(m, "PostProcessSteps", "The steps from the model's output to the application's")
      .def("convert_element_type", &pp::PostProcessSteps::convert_element_type, py::arg("type"), ref)
      .def("convert_layout", [](pp::PostProcessSteps& s, py::handle v) -> pp::PostProcessSteps& {
        return convert_layout(s, v);
      }, py::arg("dst_layout"), ref);

  py::class_<pp::OutputModelInfo>(m, "OutputModelInfo", "What the model's output is")
      .def("set_layout", &pp::OutputModelInfo::set_layout, py::arg("layout"), ref);

  py::class_<pp::OutputInfo>(m, "OutputInfo", "One output's model, steps and tensor sides")
      .def("tensor", &pp::OutputInfo::tensor, ref)
      .def("postprocess", &pp::OutputInfo::postprocess, ref)
      .def("model", &pp::OutputInfo::model, ref);

  py::class_<pp::PrePostProcessor>(m, "PrePostProcessor", "Pre- and post-processing built into a model as ops")
      .def(py::init<Model>(), py::arg("model"))
      .def("input", py::overload_cast<>(&pp::PrePostProcessor::input), ref, "the model's only input")
      .def("input", [](pp::PrePostProcessor& p, py::handle key) -> pp::InputInfo& {
        return info_at<pp::InputInfo>(key, "input", [&](std::size_t i) -> pp::InputInfo& { return p.input(i); },
                                      [&](const std::string& n) -> pp::InputInfo& { return p.input(n); });
      }, py::arg("input"), ref)
      .def("output", py::overload_cast<>(&pp::PrePostProcessor::output), ref, "the model's only output")
      .def("output", [](pp::PrePostProcessor& p, py::handle key) -> pp::OutputInfo& {
        return info_at<pp::OutputInfo>(key, "output", [&](std::size_t i) -> pp::OutputInfo& { return p.output(i); },
                                       [&](const std::string& n) -> pp::OutputInfo& { return p.output(n); });
      }, py::arg("output"), ref)
      .def("build", &pp::PrePostProcessor::build,
           "Adds the steps to the model (all or nothing) and returns it; the model itself changes, as OpenVINO's");
}

} // namespace troupe::python
