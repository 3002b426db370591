"""Prints troupe's and onnxruntime's figures side by side from scripts/bench.sh's files.

Latency: median of one request at a time on 2 threads. Throughput: the better of 2 streams of
1 thread and 1000 / the 2-thread latency, for each runtime (its best mode here). Each figure is
the best of bench.sh's rounds (build/bench/r1, r2, ...). x: how many
times onnxruntime's f32 time (or rate) troupe's is. % peak: the model's FLOPs (direct
convolution count) at troupe's f32 throughput against the peak troupe_roofline measured.
"""
import json
import os
import re
import sys

out, models = sys.argv[1], sys.argv[2:]


rounds = sorted(d for d in os.listdir(out) if re.fullmatch(r"r[0-9]+", d))


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def best_of_rounds(values, pick):
    values = [v for v in values if v]
    return pick(values) if values else None


def troupe_figure(m, run, key, pick):
    """`key` of execution_results in each round's `troupe bench -report_folder DIR -json_stats`
    (DIR/benchmark_report.json), the best of the rounds by `pick`."""
    return best_of_rounds([load(os.path.join(out, r, f"{m}_{run}", "benchmark_report.json"))
                           .get("execution_results", {}).get(key) for r in rounds], pick)


def ort_figures(m):
    """onnxruntime's best 2-thread median latency and 2x1 throughput over the rounds."""
    lat, tp = [], []
    for r in rounds:
        o = load(os.path.join(out, r, f"{m}_ort.json"))
        lat.append(next((l["median_ms"] for l in o.get("latency", []) if l.get("threads") == 2), None))
        tp.append((o.get("throughput") or {}).get("per_s"))
    return best_of_rounds(lat, min), best_of_rounds(tp, max)


def roofline(m):
    """(GFLOP per inference, peak GFLOP/s) from troupe_roofline's heading line; the highest peak
    of the rounds."""
    found = []
    for r in rounds:
        try:
            with open(os.path.join(out, r, f"{m}_roofline.txt")) as f:
                g = re.search(r"([0-9.]+) GFLOP; peak[^)]*\) ([0-9.]+) GFLOP/s", f.read())
        except OSError:
            continue
        if g:
            found.append((float(g.group(1)), float(g.group(2))))
    return max(found, key=lambda x: x[1]) if found else (None, None)


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
    t_lat, b_lat = (troupe_figure(m, run, "latency_median", min) for run in ("latency", "bf16"))
    t_tp = best(troupe_figure(m, "throughput", "throughput", max), t_lat)
    b_tp = best(troupe_figure(m, "bf16_throughput", "throughput", max), b_lat)
    ort_lat, ort_tp = ort_figures(m)
    ort_tp = best(ort_tp, ort_lat)
    gflop, peak = roofline(m)
    pct = 100.0 * gflop * t_tp / peak if gflop and peak and t_tp else None
    cells = [fmt(t_lat, 3), fmt(ort_lat, 3), fmt(ratio(ort_lat, t_lat), 2, "x"), fmt(b_lat, 3),
             fmt(ratio(ort_lat, b_lat), 2, "x"), fmt(t_tp, 1), fmt(ort_tp, 1), fmt(ratio(t_tp, ort_tp), 2, "x"),
             fmt(b_tp, 1), fmt(ratio(b_tp, ort_tp), 2, "x"), fmt(gflop, 3), fmt(pct, 1)]
    print(f"{m:7} " + " ".join(f"{c:>{w}}" for c, (_, w) in zip(cells, columns[1:])))
