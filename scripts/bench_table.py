"""Prints troupe's and onnxruntime's figures side by side from scripts/bench.sh's files.

Latency: median of one request at a time on 2 threads. Throughput: the better of 2 streams of
1 thread and 1000 / the 2-thread latency, for each runtime (its best mode here). x: how many
times onnxruntime's f32 time (or rate) troupe's is. % peak: the model's FLOPs (direct
convolution count) at troupe's f32 throughput against the peak troupe_roofline measured.
"""
import json
import os
import re
import sys

out, models = sys.argv[1], sys.argv[2:]


def load(name):
    path = os.path.join(out, name)
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def troupe_results(name):
    """execution_results of `troupe bench -report_folder DIR -json_stats` (DIR/benchmark_report.json)."""
    return load(os.path.join(name, "benchmark_report.json")).get("execution_results", {})


def roofline(m):
    """(GFLOP per inference, peak GFLOP/s) from troupe_roofline's heading line."""
    try:
        with open(os.path.join(out, f"{m}_roofline.txt")) as f:
            text = f.read()
    except OSError:
        return None, None
    g = re.search(r"([0-9.]+) GFLOP; peak[^)]*\) ([0-9.]+) GFLOP/s", text)
    return (float(g.group(1)), float(g.group(2))) if g else (None, None)


def best(rate, latency_ms):
    rates = [r for r in (rate, 1000.0 / latency_ms if latency_ms else None) if r]
    return max(rates) if rates else None


def ratio(a, b):
    return None if not a or not b else a / b


def fmt(x, d=2, suffix=""):
    return "-" if x is None else f"{x:.{d}f}{suffix}"


columns = [("model", 7), ("f32 ms", 8), ("ORT ms", 8), ("x", 6), ("bf16 ms", 8), ("x", 6),
           ("f32 /s", 8), ("ORT /s", 8), ("x", 6), ("bf16 /s", 8), ("x", 6), ("GFLOP", 6), ("% peak", 7)]
print()
print(" ".join(f"{name:>{w}}" if i else f"{name:{w}}" for i, (name, w) in enumerate(columns)))
for m in models:
    lat, bf16, tp, bf16_tp = (troupe_results(f"{m}_{k}") for k in ("latency", "bf16", "throughput", "bf16_throughput"))
    ort = load(f"{m}_ort.json")
    ort_lat = next((l["median_ms"] for l in ort.get("latency", []) if l.get("threads") == 2), None)
    ort_tp = best((ort.get("throughput") or {}).get("per_s"), ort_lat)
    t_lat, b_lat = lat.get("latency_median"), bf16.get("latency_median")
    t_tp, b_tp = best(tp.get("throughput"), t_lat), best(bf16_tp.get("throughput"), b_lat)
    gflop, peak = roofline(m)
    pct = 100.0 * gflop * t_tp / peak if gflop and peak and t_tp else None
    cells = [fmt(t_lat, 3), fmt(ort_lat, 3), fmt(ratio(ort_lat, t_lat), 2, "x"), fmt(b_lat, 3),
             fmt(ratio(ort_lat, b_lat), 2, "x"), fmt(t_tp, 1), fmt(ort_tp, 1), fmt(ratio(t_tp, ort_tp), 2, "x"),
             fmt(b_tp, 1), fmt(ratio(b_tp, ort_tp), 2, "x"), fmt(gflop, 3), fmt(pct, 1)]
    print(f"{m:7} " + " ".join(f"{c:>{w}}" for c, (_, w) in zip(cells, columns[1:])))
