"""Core, Model, ports, Type/Shape/PartialShape, Tensor and properties: OpenVINO's names over troupe."""
import io
import pathlib

import numpy as np

import troupe
import troupe as ov
import troupe.properties as props
import troupe.properties.device as device
import troupe.properties.hint as hint
import troupe.properties.streams as streams
from troupe.utils.types import get_dtype, get_element_type


def test_version_and_aliases():
    assert troupe.__version__ == troupe.get_version()
    assert troupe.__version__.count(".") == 2
    from troupe.runtime import Core
    assert Core is troupe.Core
    assert troupe.Output is troupe.ConstOutput


def test_core_devices_and_properties():
    core = ov.Core()
    assert core.available_devices[0] == "CPU"
    assert isinstance(core.get_property("CPU", "FULL_DEVICE_NAME"), str)
    assert "NUM_STREAMS" in core.get_property("CPU", props.supported_properties)
    core.set_property("CPU", {hint.performance_mode: hint.PerformanceMode.THROUGHPUT})
    assert core.get_property("CPU", hint.performance_mode) == hint.PerformanceMode.THROUGHPUT
    core.set_property("CPU", dict([hint.performance_mode(hint.PerformanceMode.LATENCY)]))
    assert core.get_property("CPU", "PERFORMANCE_HINT") == "LATENCY"
    core.set_property("CPU", {"INFERENCE_NUM_THREADS": 1})
    assert core.get_property("CPU", props.inference_num_threads) == 1
    core.set_property("CPU", {props.enable_profiling: True})
    assert core.get_property("CPU", props.enable_profiling()) is True


def test_core_property_cache_dir(tmp_path):
    core = ov.Core()
    core.set_property({props.cache_dir: str(tmp_path)})
    core.set_property(props.cache_dir(str(tmp_path)))  # the (key, value) pair form


def test_property_keys_are_strings():
    assert props.enable_profiling == "PERF_COUNT" and props.enable_profiling() == "PERF_COUNT"
    assert streams.num(2) == ("NUM_STREAMS", 2)
    assert device.priorities("GPU,CPU") == ("DEVICE_PRIORITIES", "GPU,CPU")
    assert device.properties("CPU", {streams.num: 2}) == ("CPU", {"NUM_STREAMS": 2})
    assert hint.PerformanceMode.CUMULATIVE_THROUGHPUT == "CUMULATIVE_THROUGHPUT"
    assert props.optimal_number_of_infer_requests == "OPTIMAL_NUMBER_OF_INFER_REQUESTS"


def test_read_model_from_path_pathlike_and_bytes(models):
    core = ov.Core()
    by_str = core.read_model(models["dyn"])
    by_path = core.read_model(pathlib.Path(models["dyn"]))
    by_bytes = core.read_model(pathlib.Path(models["dyn"]).read_bytes())
    for m in (by_str, by_path, by_bytes):
        assert [p.get_any_name() for p in m.inputs] == ["x"]
        assert [n.get_type_name() for n in m.get_ops()] == ["Mul", "Add", "Relu"]
    assert by_str.get_friendly_name() == "dyn.onnx"


def test_model_ports_and_reshape(models):
    core = ov.Core()
    m = core.read_model(models["dyn"])
    x = m.input()
    assert x.get_any_name() == "x" and x.any_name == "x" and x.get_names() == {"x"}
    assert x.get_index() == 0 and x.element_type == ov.Type.f32
    assert x.partial_shape.is_dynamic and str(x.partial_shape) == "[batch,4]"
    assert m.input("x") == x and m.input(0) == x and hash(m.input("x")) == hash(x)
    assert m.is_dynamic()
    m.reshape([2, 4])
    assert m.input().shape == [2, 4] and m.input().shape == ov.Shape([2, 4])
    m.reshape({"x": ov.PartialShape([3, 4])})
    assert list(m.input().get_shape()) == [3, 4]
    m.reshape({0: "5,4"})
    assert m.output(0).get_shape() == [5, 4]
    m.reshape({m.input(): [-1, 4]})
    assert m.input().partial_shape == ov.PartialShape([-1, 4])
    assert not m.input().partial_shape.is_static


def test_port_layout_from_ir(tmp_path):
    # A layout in an IR port's rt_info, as OpenVINO's converter writes it.
    xml = ('<?xml version="1.0"?><net name="l" version="11"><layers>'
           '<layer id="0" name="x" type="Parameter" version="opset1"><data shape="1,3,2,2" element_type="f32"/>'
           '<output><port id="0" precision="FP32" names="x"><dim>1</dim><dim>3</dim><dim>2</dim><dim>2</dim>'
           '<rt_info><attribute name="layout" version="0" layout="[N,C,H,W]"/></rt_info></port></output></layer>'
           '<layer id="1" name="r" type="ReLU" version="opset1"><input><port id="0" precision="FP32"><dim>1</dim>'
           '<dim>3</dim><dim>2</dim><dim>2</dim></port></input><output><port id="1" precision="FP32" names="y">'
           '<dim>1</dim><dim>3</dim><dim>2</dim><dim>2</dim></port></output></layer>'
           '<layer id="2" name="y" type="Result" version="opset1"><input><port id="0" precision="FP32">'
           '<dim>1</dim><dim>3</dim><dim>2</dim><dim>2</dim></port></input></layer></layers>'
           '<edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>'
           '<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/></edges></net>')
    (tmp_path / "l.xml").write_text(xml)
    (tmp_path / "l.bin").write_bytes(b"")
    model = ov.Core().read_model(str(tmp_path / "l.xml"))
    assert model.input(0).get_layout() == ov.Layout("NCHW")
    assert model.input(0).get_layout().get_index_by_name("C") == 1
    assert model.output(0).get_layout().empty()


def test_ports_are_dict_keys(models):
    compiled = ov.Core().compile_model(models["add"], "CPU")
    d = {compiled.input(0): 1, compiled.input("b"): 2}
    assert d[compiled.inputs[0]] == 1 and d[compiled.input(1)] == 2
    assert len({compiled.output(), compiled.outputs[0]}) == 1


def test_get_ops_affinity_for_manual_hetero(models):
    core = ov.Core()
    m = core.read_model(models["dyn"])
    m.reshape([2, 4])
    for node in m.get_ops():
        node.get_rt_info()["affinity"] = "REFERENCE" if node.get_type_name() == "Relu" else "CPU"
    info = {n.get_friendly_name(): n.get_rt_info()["affinity"] for n in m.get_ops()}
    assert info == {"mul": "CPU", "add": "CPU", "relu": "REFERENCE"}
    compiled = core.compile_model(m, "HETERO:CPU,REFERENCE")
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    want = np.maximum(x * np.array([1, -2, 3, -4], np.float32) + 0.5, 0)
    np.testing.assert_array_equal(compiled(x)[0], want)
    assert "REFERENCE" in compiled.get_property("EXECUTION_DEVICES")


def test_type_and_dtypes():
    assert ov.Type.f32.get_type_name() == "f32" and str(ov.Type.i64) == "i64"
    assert get_dtype(ov.Type.f32) == np.float32 and get_dtype(ov.Type.boolean) == np.bool_
    assert get_element_type(np.int64) == ov.Type.i64 and get_element_type(int) == ov.Type.i32
    assert ov.Type.from_string("float32") == ov.Type.f32
    assert len({ov.Type.f32, ov.Type.f32, ov.Type.f16}) == 2


def test_tensor_shared_and_copied():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    shared = ov.Tensor(a, shared_memory=True)
    copied = ov.Tensor(a)
    assert np.shares_memory(shared.data, a) and not np.shares_memory(copied.data, a)
    assert shared.shape == [2, 3] and shared.element_type == ov.Type.f32
    assert shared.get_size() == 6 and shared.byte_size == 24
    shared.data[0, 0] = 42  # .data is a writable view
    assert a[0, 0] == 42 and copied.data[0, 0] == 0
    t = ov.Tensor(ov.Type.i32, [2, 2])
    assert t.data.dtype == np.int32 and t.data.shape == (2, 2) and not t.data.any()
    f = ov.Tensor(np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)), shared_memory=True)
    np.testing.assert_array_equal(f.data, np.arange(6, dtype=np.float32).reshape(2, 3))  # copied, not read raw


def test_export_and_import(models):
    core = ov.Core()
    compiled = core.compile_model(models["add"], "CPU")
    blob = compiled.export_model()
    assert isinstance(blob, bytes) and len(blob) > 0
    stream = io.BytesIO()
    compiled.export_model(stream)
    assert stream.getvalue() == blob
    again = core.import_model(io.BytesIO(blob), "CPU")
    a, b = np.ones((1, 8), np.float32), np.arange(8, dtype=np.float32).reshape(1, 8)
    np.testing.assert_array_equal(again({"a": a, "b": b})["y"], a + b)


def test_query_model(models):
    core = ov.Core()
    m = core.read_model(models["add"])
    assert core.query_model(m, "CPU") == {"add": "CPU"}


def test_compiled_model_properties(models):
    core = ov.Core()
    compiled = core.compile_model(models["add"], "CPU", {streams.num: 2, hint.performance_mode: "THROUGHPUT"})
    assert compiled.get_property(props.optimal_number_of_infer_requests) >= 2
    assert compiled.get_property("NUM_STREAMS") == 2
    assert compiled.get_property(hint.performance_mode) == hint.PerformanceMode.THROUGHPUT
    assert compiled.get_property(props.execution_devices) == ["CPU"]


def test_runtime_compile_properties_are_numbers(models):
    compiled = ov.Core().compile_model(models["dyn"], "CPU")
    assert compiled.get_property("RUNTIME_COMPILES") == 0 and compiled.get_property("RUNTIME_CACHE_CAPACITY") == 128
    request = compiled.create_infer_request()
    for batch in (1, 3, 1):
        request.infer({"x": np.ones((batch, 4), np.float32)})
    assert compiled.get_property("RUNTIME_COMPILES") == 2
    ms = compiled.get_property("RUNTIME_COMPILE_MS")
    assert isinstance(ms, float) and ms > 0


def test_multi_reprioritize(models):
    core = ov.Core()
    compiled = core.compile_model(models["add"], "MULTI:CPU,REFERENCE")
    compiled.set_property({device.priorities: "REFERENCE,CPU"})
    compiled.set_property({"DEVICE_PRIORITIES": "CPU"})
    a = np.ones((1, 8), np.float32)
    np.testing.assert_array_equal(compiled([a, a])[0], a + a)


def test_module_compile_model(models):
    compiled = ov.compile_model(models["add"], "CPU")
    a = np.ones((1, 8), np.float32)
    np.testing.assert_array_equal(compiled([a, a])["y"], 2 * a)


def test_default_device_is_auto(models):
    compiled = ov.Core().compile_model(models["add"])
    a = np.ones((1, 8), np.float32)
    np.testing.assert_array_equal(compiled([a, a])[0], 2 * a)
    assert compiled.get_property(props.execution_devices)


def test_tensors_by_name_index_and_port(models):
    compiled = ov.Core().compile_model(models["add"], "CPU")
    request = compiled.create_infer_request()
    a = ov.Tensor(np.full((1, 8), 3, np.float32))
    request.set_tensor("a", a)
    request.set_tensor(compiled.input("b"), ov.Tensor(np.ones((1, 8), np.float32)))
    out = ov.Tensor(ov.Type.f32, [1, 8])
    request.set_output_tensor(0, out)  # results are written into it
    request.infer()
    np.testing.assert_array_equal(out.data, np.full((1, 8), 4, np.float32))
    np.testing.assert_array_equal(request.get_tensor(compiled.output(0)).data, out.data)
    assert np.shares_memory(request.get_tensor("a").data, a.data)
    request.set_input_tensor(1, ov.Tensor(np.zeros((1, 8), np.float32)))
    np.testing.assert_array_equal(request.infer()[0], np.full((1, 8), 3, np.float32))


def test_string_tensor():
    t = ov.Tensor(np.array([["ab", "c"]]))
    assert t.element_type == ov.Type.string and t.shape == [1, 2]
    assert t.data.tolist() == [["ab", "c"]]


def test_device_properties_and_priorities(models):
    core = ov.Core()
    compiled = core.compile_model(models["add"], "MULTI:CPU,REFERENCE",
                                  dict([device.properties("CPU", {streams.num: 2})]))
    assert compiled.get_property(props.execution_devices) == ["CPU", "REFERENCE"]
    hetero = core.compile_model(models["add"], "HETERO:CPU,REFERENCE", {device.properties: {"CPU": {streams.num: 1}}})
    assert hetero.get_property(props.execution_devices) == ["CPU"]
    core.set_property("MULTI", {device.priorities: ["CPU", "REFERENCE"]})
    assert core.compile_model(models["add"], "MULTI").get_property(props.execution_devices) == ["CPU", "REFERENCE"]
