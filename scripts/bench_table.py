"""Prints troupe's and onnxruntime's figures side by side from scripts/bench.sh's JSON files."""
import json
import os
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


rows = []
for m in models:
    lat, bf16, tp = (troupe_results(f"{m}_{k}") for k in ("latency", "bf16", "throughput"))
    ort = load(f"{m}_ort.json")
    ort_lat2 = next((l["median_ms"] for l in ort.get("latency", []) if l.get("threads") == 2), None)
    ort_tp = (ort.get("throughput") or {}).get("per_s")
    rows.append((m, lat.get("latency_median"), ort_lat2, bf16.get("latency_median"),
                 tp.get("throughput"), ort_tp))


def fmt(x, d=2):
    return "-" if x is None else f"{x:.{d}f}"


print()
print(f"{'model':8} {'troupe f32 2T ms':>17} {'ORT 2T ms':>10} {'troupe bf16 ms':>15} "
      f"{'troupe 2x1 /s':>14} {'ORT 2x1 /s':>11}")
for m, a, b, c, d, e in rows:
    print(f"{m:8} {fmt(a, 3):>17} {fmt(b, 3):>10} {fmt(c, 3):>15} {fmt(d, 1):>14} {fmt(e, 1):>11}")
