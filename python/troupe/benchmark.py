"""python -m troupe.benchmark: a minimal benchmark_app (`troupe bench`) in Python, through the
package's API: seeded random inputs, sync infer() or an AsyncInferQueue, and benchmark_app's
report (count, duration, latency median/average/min/max, throughput).

    python3 -m troupe.benchmark -m model.onnx [-d CPU] [-api async|sync] [-hint throughput|latency|
        cumulative_throughput|none] [-nireq N] [-nstreams N] [-nthreads N] [-niter N] [-t SECONDS]
        [-shape 1,3,48,192] [-infer_precision bf16]
"""
from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Dict, List

import numpy as np

import troupe as ov


def _args(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m troupe.benchmark", description=__doc__.split("\n\n")[0])
    p.add_argument("-m", required=True, help="an .onnx model")
    p.add_argument("-d", default="CPU", help="device string (CPU, GPU, HETERO:..., MULTI:..., AUTO)")
    p.add_argument("-api", choices=["async", "sync"], default="async")
    p.add_argument("-hint", choices=["throughput", "tput", "latency", "cumulative_throughput", "ctput", "none"])
    p.add_argument("-nireq", type=int, default=0, help="requests (async); 0: OPTIMAL_NUMBER_OF_INFER_REQUESTS")
    p.add_argument("-nstreams", help="NUM_STREAMS")
    p.add_argument("-nthreads", type=int, help="INFERENCE_NUM_THREADS")
    p.add_argument("-niter", type=int, help="iterations")
    p.add_argument("-t", type=float, help="seconds to run (default 60 when neither -t nor -niter is given)")
    p.add_argument("-shape", help="the input shape (one-input models: 1,3,48,192) or name[1,3,48,192],...")
    p.add_argument("-infer_precision", help="INFERENCE_PRECISION_HINT (f32, bf16, f16)")
    return p.parse_args(argv)


def _config(a: argparse.Namespace) -> Dict[str, str]:
    hint = a.hint or ("latency" if a.api == "sync" else "throughput")
    names = {"tput": "THROUGHPUT", "ctput": "CUMULATIVE_THROUGHPUT"}
    config: Dict[str, str] = {}
    if hint != "none":
        config["PERFORMANCE_HINT"] = names.get(hint, hint.upper())
    if a.nstreams:
        config["NUM_STREAMS"] = a.nstreams
    if a.nthreads:
        config["INFERENCE_NUM_THREADS"] = str(a.nthreads)
    if a.infer_precision:
        config["INFERENCE_PRECISION_HINT"] = a.infer_precision
    return config


def _reshape(model: ov.Model, text: str) -> None:
    if "[" not in text:
        model.reshape(text)
        return
    shapes = {}
    for part in text.replace("],", "];").split(";"):
        name, dims = part.split("[", 1)
        shapes[name] = dims.rstrip("]")
    model.reshape(shapes)


def _inputs(compiled: ov.CompiledModel) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(12345)
    out = {}
    for port in compiled.inputs:
        if not port.partial_shape.is_static:
            raise SystemExit(f"input '{port.get_any_name()}' has the dynamic shape {port.partial_shape}: give -shape")
        dtype = port.element_type.to_dtype()
        shape = list(port.shape)
        if np.issubdtype(dtype, np.floating) or port.element_type == ov.Type.bf16:
            out[port.get_any_name()] = rng.random(shape, dtype=np.float32).astype(
                np.float32 if port.element_type == ov.Type.bf16 else dtype)
        else:
            out[port.get_any_name()] = rng.integers(0, 2, shape).astype(dtype)
    return out


def main(argv: List[str]) -> int:
    a = _args(argv)
    seconds = a.t if a.t is not None else (None if a.niter is not None else 60.0)
    core = ov.Core()
    model = core.read_model(a.m)
    if a.shape:
        _reshape(model, a.shape)
    t0 = time.perf_counter()
    compiled = core.compile_model(model, a.d, _config(a))
    print(f"[ INFO ] Compile model took {(time.perf_counter() - t0) * 1000:.2f} ms")
    inputs = _inputs(compiled)
    latencies: List[float] = []
    lock = threading.Lock()

    def more(count: int, started: float) -> bool:
        if a.niter is not None and count < a.niter:
            return True
        return seconds is not None and time.perf_counter() - started < seconds

    count = 0
    if a.api == "sync":
        request = compiled.create_infer_request()
        request.infer(inputs)  # the first inference, as benchmark_app: not counted
        start = time.perf_counter()
        while more(count, start):
            request.infer(inputs, share_inputs=True)
            latencies.append(request.latency)
            count += 1
        nireq = 1
    else:
        queue = ov.AsyncInferQueue(compiled, a.nireq)
        nireq = len(queue)

        def done(request: ov.InferRequest, userdata: object) -> None:
            with lock:
                latencies.append(request.latency)

        queue.set_callback(done)
        for r in queue:  # every request once, not counted
            r.infer(inputs)
        start = time.perf_counter()
        while more(count, start):
            queue.start_async(inputs, share_inputs=True)
            count += 1
        queue.wait_all()
    duration = time.perf_counter() - start
    lat = np.array(latencies)
    print(f"[ INFO ] Device: {a.d}, {a.api} API, {nireq} request(s), "
          f"PERFORMANCE_HINT {compiled.get_property('PERFORMANCE_HINT')}, NUM_STREAMS {compiled.get_property('NUM_STREAMS')}")
    print(f"[ INFO ] Count:               {count} iterations")
    print(f"[ INFO ] Duration:            {duration * 1000:.2f} ms")
    print("[ INFO ] Latency:")
    print(f"[ INFO ] \tMedian:     {np.median(lat):.2f} ms")
    print(f"[ INFO ] \tAverage:    {lat.mean():.2f} ms")
    print(f"[ INFO ] \tMin:        {lat.min():.2f} ms")
    print(f"[ INFO ] \tMax:        {lat.max():.2f} ms")
    print(f"[ INFO ] Throughput:          {count / duration:.2f} FPS")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (RuntimeError, ValueError, TypeError) as e:
        print(f"[ ERROR ] {e}", file=sys.stderr)
        sys.exit(1)
