"""Inference: outputs against the troupe command (the C++ API) and the REFERENCE device, input
forms, casting, zero-copy, Fortran order, results, bf16."""
import json
import subprocess

import numpy as np
import pytest

import troupe as ov
from conftest import BIN_DIR


def cls_image(seed=7):
    return np.random.default_rng(seed).random((1, 3, 48, 192), dtype=np.float32)


def test_cls_equals_the_troupe_command(cls_path, tmp_path):
    image = cls_image()
    np.save(tmp_path / "x.npy", image)
    exe = BIN_DIR / "troupe"
    assert exe.exists(), f"{exe} is missing: build the troupe_cli target"
    out = tmp_path / "out"
    subprocess.run([str(exe), "run", "-m", str(cls_path), "-o", str(out), "-i", f"x:{tmp_path / 'x.npy'}",
                    "-shape", "x[1,3,48,192]", "-d", "CPU"], check=True, capture_output=True, timeout=300)
    meta = json.loads((out / "outputs.json").read_text())
    name = "softmax_0.tmp_0"
    want = np.load(out / f"{name}.npy")

    core = ov.Core()
    model = core.read_model(cls_path)
    model.reshape([1, 3, 48, 192])
    compiled = core.compile_model(model, "CPU")
    got = compiled(image)
    assert got[name].shape == (1, 2), meta
    np.testing.assert_array_equal(got[name], want)
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[compiled.output(0)], want)

    reference = core.compile_model(model, "REFERENCE")
    np.testing.assert_allclose(reference(image)[0], want, rtol=1e-4, atol=1e-5)


def test_cls_async_queue_equals_sync(cls_path):
    core = ov.Core()
    model = core.read_model(cls_path)
    model.reshape([1, 3, 48, 192])
    compiled = core.compile_model(model, "CPU")
    images = [cls_image(s) for s in range(6)]
    want = [compiled(i)[0].copy() for i in images]
    queue = ov.AsyncInferQueue(compiled, 2)
    got = {}
    queue.set_callback(lambda request, userdata: got.__setitem__(userdata, request.results[0].copy()))
    for i, image in enumerate(images):
        queue.start_async({"x": image}, userdata=i)
    queue.wait_all()
    assert sorted(got) == list(range(6))
    for i in range(6):
        np.testing.assert_array_equal(got[i], want[i])


def test_input_forms(models):
    compiled = ov.Core().compile_model(models["add"], "CPU")
    a = np.arange(8, dtype=np.float32).reshape(1, 8)
    b = np.full((1, 8), 2, np.float32)
    want = a + b
    request = compiled.create_infer_request()
    for inputs in ({"a": a, "b": b}, {0: a, 1: b}, {compiled.input(0): a, compiled.input("b"): b}, [a, b], (a, b)):
        np.testing.assert_array_equal(request.infer(inputs)["y"], want)
    np.testing.assert_array_equal(request.infer({"a": a.tolist(), "b": b.tolist()})[0], want)  # nested lists
    np.testing.assert_array_equal(compiled.infer_new_request([a, b])[0], want)
    np.testing.assert_array_equal(request.infer([ov.Tensor(a), ov.Tensor(b)])[0], want)


def test_one_array_for_one_input_and_ready_input_tensors(models):
    compiled = ov.Core().compile_model(models["dyn"], "CPU")
    x = np.array([[1, 2, 3, 4]], np.float32)
    np.testing.assert_array_equal(compiled(x)[0], np.maximum(x * [1, -2, 3, -4] + 0.5, 0).astype(np.float32))
    static = ov.Core().compile_model(models["add"], "CPU")
    request = static.create_infer_request()
    request.get_input_tensor(0).data[:] = 1  # allocated with the request, filled in place
    request.get_input_tensor(1).data[:] = 2
    request.infer()
    np.testing.assert_array_equal(request.get_output_tensor(0).data, np.full((1, 8), 3, np.float32))
    np.testing.assert_array_equal(request.get_tensor("y").data, np.full((1, 8), 3, np.float32))


def test_casting_never_misreads(models):
    compiled = ov.Core().compile_model(models["add"], "CPU")
    a64 = np.arange(8, dtype=np.float64).reshape(1, 8) + 0.5
    i32 = np.arange(8, dtype=np.int32).reshape(1, 8)
    got = compiled({"a": a64, "b": i32})["y"]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, (a64 + i32).astype(np.float32))
    cast = ov.Core().compile_model(models["cast_i64"], "CPU")
    np.testing.assert_array_equal(cast(np.array([[1, 2, 3], [4, 5, 6]], np.int32))[0],
                                  np.array([[1, 2, 3], [4, 5, 6]], np.float32))
    np.testing.assert_array_equal(cast(np.array([[True, False, True], [False, True, False]]))[0],
                                  np.array([[1, 0, 1], [0, 1, 0]], np.float32))


def test_zero_copy_only_for_c_contiguous_arrays_of_the_right_type(models):
    compiled = ov.Core().compile_model(models["add"], "CPU")
    request = compiled.create_infer_request()
    a = np.ones((1, 8), np.float32)
    b = np.ones((1, 8), np.float32)
    request.infer({"a": a, "b": b}, share_inputs=True)
    assert np.shares_memory(request.get_input_tensor(0).data, a)
    request.infer({"a": a, "b": b})  # share_inputs=False: copied, as OpenVINO
    assert not np.shares_memory(request.get_input_tensor(0).data, a)
    a64 = np.ones((1, 8), np.float64)
    request.infer({"a": a64, "b": b}, share_inputs=True)
    assert not np.shares_memory(request.get_input_tensor(0).data, a64)
    strided = np.ones((1, 16), np.float32)[:, ::2]
    request.infer({"a": strided, "b": b}, share_inputs=True)
    assert not np.shares_memory(request.get_input_tensor(0).data, strided)
    read_only = np.frombuffer(np.ones(8, np.float32).tobytes(), np.float32).reshape(1, 8)
    request.infer({"a": read_only, "b": b}, share_inputs=True)  # its tensor's .data is writable: a copy
    assert not np.shares_memory(request.get_input_tensor(0).data, read_only)
    request.get_input_tensor(0).data[:] = 5
    np.testing.assert_array_equal(request.infer(share_inputs=True)[0], np.full((1, 8), 6, np.float32))


def test_shared_input_is_kept_alive(models):
    compiled = ov.Core().compile_model(models["add"], "CPU")
    request = compiled.create_infer_request()
    a = np.arange(8, dtype=np.float32).reshape(1, 8)
    request.start_async({"a": a, "b": np.ones((1, 8), np.float32)}, share_inputs=True)
    del a  # the request holds the array until it is done
    request.wait()
    np.testing.assert_array_equal(request.results[0], np.arange(8, dtype=np.float32).reshape(1, 8) + 1)
    np.testing.assert_array_equal(request.get_input_tensor(0).data, np.arange(8, dtype=np.float32).reshape(1, 8))


def test_fortran_order_is_copied_not_read_raw(models):
    compiled = ov.Core().compile_model(models["cast_i64"], "CPU")
    c = np.arange(6, dtype=np.int64).reshape(2, 3)
    f = np.asfortranarray(c)
    assert not f.flags.c_contiguous
    np.testing.assert_array_equal(compiled(f, share_inputs=True)[0], c.astype(np.float32))
    t = np.arange(6, dtype=np.int64).reshape(3, 2).T  # a transposed view
    np.testing.assert_array_equal(compiled(t, share_inputs=True)[0], t.astype(np.float32))


def test_results_mapping(models):
    compiled = ov.Core().compile_model(models["add"], "CPU")
    a = np.ones((1, 8), np.float32)
    results = compiled([a, a])
    port = compiled.output(0)
    assert list(results.keys()) == [port] and len(results) == 1 and port in results and "y" in results
    assert results.to_tuple()[0] is results[0]
    assert list(results.to_dict()) == [port]
    with pytest.raises(TypeError):
        results["y"] = a  # read-only
    with pytest.raises(KeyError, match="nope"):
        results["nope"]
    shared = compiled([a, a], share_outputs=True)[0]
    np.testing.assert_array_equal(shared, 2 * a)


def test_bf16_output_is_float32(models):
    compiled = ov.Core().compile_model(models["bf16_out"], "CPU")
    x = np.array([[1.0, 1.00390625, 3.14159, -2.5]], np.float32)
    y = compiled(x)[0]
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, np.array([[1.0, 1.0, 3.140625, -2.5]], np.float32))


def test_latency_and_profiling(models):
    compiled = ov.Core().compile_model(models["add"], "CPU", {"PERF_COUNT": True})
    request = compiled.create_infer_request()
    a = np.ones((1, 8), np.float32)
    request.infer([a, a])
    assert request.latency > 0
    info = request.get_profiling_info()
    assert [p.node_name for p in info] == ["add"] and info[0].node_type == "Add"
    assert info[0].status == ov.ProfilingInfo.Status.EXECUTED
