"""Bad input: each a Python exception whose message names what was wrong; nothing hangs or
crashes the interpreter."""
import numpy as np
import pytest

import troupe as ov


@pytest.fixture
def add(models):
    return ov.Core().compile_model(models["add"], "CPU")


def ones():
    return np.ones((1, 8), np.float32)


def test_wrong_input_name_index_or_port(add, models):
    request = add.create_infer_request()
    with pytest.raises(ValueError, match=r"no input named 'nope'.*'a', 'b'"):
        request.infer({"nope": ones(), "b": ones()})
    with pytest.raises(ValueError, match="input index 5 is out of range"):
        request.infer({5: ones()})
    other = ov.Core().compile_model(models["dyn"], "CPU")
    with pytest.raises(ValueError, match="no input named 'x'"):
        request.infer({other.input(0): ones()})
    with pytest.raises(ValueError, match="no input named 'y'"):
        request.infer({add.output(0): ones()})
    with pytest.raises(TypeError, match="int index, a str name or a port"):
        request.infer({1.5: ones()})
    with pytest.raises(ValueError, match="got 3 inputs; the model has 2"):
        request.infer([ones(), ones(), ones()])
    with pytest.raises(ValueError, match="model with 2 inputs"):
        request.infer(ones())
    with pytest.raises(ValueError, match="no output named 'nope'"):
        add.output("nope")


def test_wrong_rank_or_shape(add):
    with pytest.raises(ValueError, match=r"input 'a': wrong shape: expected \[1,8\], got \[8\]"):
        add({"a": np.ones(8, np.float32), "b": ones()})
    with pytest.raises(ValueError, match=r"input 'b': wrong shape: expected \[1,8\], got \[1,7\]"):
        add({"a": ones(), "b": np.ones((1, 7), np.float32)})
    with pytest.raises(RuntimeError, match="'a'"):  # a Tensor is checked by troupe itself
        add([ov.Tensor(np.ones((2, 8), np.float32)), ones()])


def test_string_array_for_a_float_input(add):
    with pytest.raises(TypeError, match=r"input 'a' is f32: an array of dtype <U\d+ does not convert"):
        add({"a": np.array([["x"] * 8]), "b": ones()})


def test_ragged_lists(add):
    with pytest.raises(ValueError, match="input 'a': cannot make an array of the given list"):
        add({"a": [[1.0, 2.0], [3.0]], "b": ones()})


def test_callback_not_callable(add):
    with pytest.raises(TypeError, match="callback must be callable, got int"):
        add.create_infer_request().set_callback(3, None)
    with pytest.raises(TypeError, match="callback must be callable, got str"):
        ov.AsyncInferQueue(add, 1).set_callback("f")


def test_unknown_property_or_bad_value(models):
    core = ov.Core()
    with pytest.raises(RuntimeError, match="NO_SUCH_PROPERTY"):
        core.compile_model(models["add"], "CPU", {"NO_SUCH_PROPERTY": 1})
    with pytest.raises(RuntimeError, match=r"'0' for property NUM_STREAMS of device CPU"):
        core.set_property("CPU", {"NUM_STREAMS": 0})
    with pytest.raises(RuntimeError, match=r"'FAST' for property PERFORMANCE_HINT of device CPU; allowed: LATENCY"):
        core.compile_model(models["add"], "CPU", {"PERFORMANCE_HINT": "FAST"})
    with pytest.raises(TypeError, match="property NUM_STREAMS: a value of type object"):
        core.set_property("CPU", {"NUM_STREAMS": object()})
    with pytest.raises(TypeError, match="properties are a dict"):
        core.set_property("CPU", 5)
    with pytest.raises(RuntimeError, match="NO_SUCH"):
        core.get_property("CPU", "NO_SUCH")
    with pytest.raises(RuntimeError, match="unknown device 'NPU'"):
        core.compile_model(models["add"], "NPU")


def test_set_property_cannot_add_a_device_to_multi(models):
    compiled = ov.Core().compile_model(models["add"], "MULTI:CPU")
    with pytest.raises(RuntimeError, match="'REFERENCE' was not in the list"):
        compiled.set_property({"DEVICE_PRIORITIES": "CPU,REFERENCE"})


def test_start_async_on_a_running_request(models):
    compiled = ov.Core().compile_model(models["matmul"], "REFERENCE")
    request = compiled.create_infer_request()
    x = np.ones((512, 512), np.float32)
    request.start_async(x)
    with pytest.raises(RuntimeError, match="busy running an inference"):
        request.start_async(x)
    request.cancel()
    with pytest.raises(RuntimeError, match="cancelled"):
        request.wait()


def test_missing_file_and_bad_bytes():
    core = ov.Core()
    with pytest.raises(RuntimeError, match="missing.onnx"):
        core.read_model("/nonexistent/missing.onnx")
    with pytest.raises(RuntimeError, match="model.onnx"):
        core.read_model(b"not an onnx model")
    with pytest.raises(TypeError, match="path"):
        core.read_model(42)
    with pytest.raises(ValueError, match="weights"):
        core.read_model("/nonexistent/missing.onnx", b"weights")
