"""Shared fixtures: the test data (TROUPE_DATA_DIR, from scripts/fetch_test_data.sh) and small
ONNX models built here with onnx.helper."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

DATA_DIR = pathlib.Path(os.environ.get("TROUPE_DATA_DIR", pathlib.Path(__file__).resolve().parents[2] / "data"))
BIN_DIR = pathlib.Path(os.environ.get("TROUPE_BIN_DIR", pathlib.Path(__file__).resolve().parents[2] / "build" / "bin"))
CLS = "ch_ppocr_mobile_v2.0_cls_infer"


def data_file(relative: str) -> pathlib.Path:
    """A file of the fetched test data; missing, the test FAILS saying how to get it (is skipped
    with TROUPE_TESTS_OFFLINE=1, as the C++ tests)."""
    path = DATA_DIR / relative
    if not path.exists() and os.environ.get("TROUPE_TESTS_OFFLINE") == "1":
        pytest.skip(f"TROUPE_TESTS_OFFLINE=1 and the test data {path} is missing")
    if not path.exists():
        pytest.fail(f"missing test data {path}: run `bash scripts/fetch_test_data.sh` "
                    f"(or point TROUPE_DATA_DIR at the folder it fills)", pytrace=False)
    return path


@pytest.fixture(scope="session")
def cls_path() -> pathlib.Path:
    return data_file(f"models/{CLS}.onnx")


def save(model: onnx.ModelProto, path: pathlib.Path) -> str:
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def make_model(nodes, inputs, outputs, initializers=(), opset=13) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.fixture(scope="session")
def models(tmp_path_factory) -> dict:
    """Paths of the small models: add (a, b -> y, f32 [1,8]), dyn (Relu(x*w+b), x [?,4]),
    cast_i64 (i64 [2,3] -> f32), bf16_out (f32 [1,4] -> Cast bf16), matmul (x [512,512] @ w, slow on REFERENCE)."""
    d = tmp_path_factory.mktemp("models")
    f32 = TensorProto.FLOAT
    out = {}
    out["add"] = save(make_model([helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                                 [helper.make_tensor_value_info("a", f32, [1, 8]),
                                  helper.make_tensor_value_info("b", f32, [1, 8])],
                                 [helper.make_tensor_value_info("y", f32, [1, 8])]), d / "add.onnx")
    w = helper.make_tensor("w", f32, [4], [1, -2, 3, -4])
    bias = helper.make_tensor("bias", f32, [4], [0.5] * 4)
    out["dyn"] = save(make_model([helper.make_node("Mul", ["x", "w"], ["xw"], name="mul"),
                                  helper.make_node("Add", ["xw", "bias"], ["s"], name="add"),
                                  helper.make_node("Relu", ["s"], ["y"], name="relu")],
                                 [helper.make_tensor_value_info("x", f32, ["batch", 4])],
                                 [helper.make_tensor_value_info("y", f32, ["batch", 4])], [w, bias]), d / "dyn.onnx")
    out["cast_i64"] = save(make_model([helper.make_node("Cast", ["x"], ["y"], to=f32, name="cast")],
                                      [helper.make_tensor_value_info("x", TensorProto.INT64, [2, 3])],
                                      [helper.make_tensor_value_info("y", f32, [2, 3])]), d / "cast_i64.onnx")
    out["bf16_out"] = save(make_model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16, name="cast")],
                                      [helper.make_tensor_value_info("x", f32, [1, 4])],
                                      [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [1, 4])]),
                           d / "bf16_out.onnx")
    wm = helper.make_tensor("w", f32, [512, 512], np.full(512 * 512, 0.001, np.float32))
    out["matmul"] = save(make_model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                                    [helper.make_tensor_value_info("x", f32, [512, 512])],
                                    [helper.make_tensor_value_info("y", f32, [512, 512])], [wm]), d / "matmul.onnx")
    return out


def run_python(code: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter (the same one, the same PYTHONPATH); a hang fails, not blocks."""
    try:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ))
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the subprocess did not end within {timeout} s (a deadlock?):\n{e.stdout}\n{e.stderr}")
