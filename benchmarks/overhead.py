"""The Python binding's cost per sync infer(): the same one-op model as troupe_overhead (Add of
two 1x8 f32 tensors), its median latency through troupe's Python API in three forms.
scripts/bench_python.sh prints it beside troupe_overhead's C++ figure, in one run.
usage: python3 benchmarks/overhead.py [DEVICE=CPU] [RUNS=20000]"""
import os
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto, helper, save

import troupe as ov


def add_model(path):
    f32 = TensorProto.FLOAT
    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"], name="add")], "add",
                              [helper.make_tensor_value_info("a", f32, [1, 8]),
                               helper.make_tensor_value_info("b", f32, [1, 8])],
                              [helper.make_tensor_value_info("y", f32, [1, 8])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def median_us(fn, runs):
    for _ in range(200):  # warm-up
        fn()
    times = []
    clock = time.perf_counter_ns
    for _ in range(runs):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    times.sort()
    return times[len(times) // 2] / 1000.0, times[int(len(times) * 0.9)] / 1000.0


def main():
    device = sys.argv[1] if len(sys.argv) > 1 else "CPU"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "add.onnx")
        add_model(path)
        compiled = ov.Core().compile_model(path, device, {"PERFORMANCE_HINT": "LATENCY"})
    request = compiled.create_infer_request()
    a = np.arange(8, dtype=np.float32).reshape(1, 8)
    b = np.ones((1, 8), np.float32)
    inputs = {"a": a, "b": b}
    assert request.infer(inputs)["y"][0, 7] == 8.0
    forms = [
        ("request.infer() (inputs already set)", request.infer),
        ("request.infer({'a': a, 'b': b}, share_inputs=True)", lambda: request.infer(inputs, share_inputs=True)),
        ("request.infer({'a': a, 'b': b}) (copies, as OpenVINO's default)", lambda: request.infer(inputs)),
    ]
    for name, fn in forms:
        med, p90 = median_us(fn, runs)
        print(f"python sync {name} of Add 1x8 on {device}, {runs} runs: median {med:.2f} us, p90 {p90:.2f} us")


if __name__ == "__main__":
    main()
