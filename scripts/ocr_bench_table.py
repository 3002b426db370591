#!/usr/bin/env python3
"""The tables of scripts/ocr_bench.sh: per image, the median latency of troupe_ocr and of
@gutenye/ocr-node (the first run of each image left out: troupe compiles each new input shape
then), the better of the two rounds; exact lines against the rendered text; the sums for each
troupe_ocr variant (default, --no-cls, lower precision); stream images/s."""
import json
import statistics
import sys
from pathlib import Path

out, device, runs = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
expected = json.loads((out / "expected.json").read_text())


def troupe_latency(path):
    per = {}
    for item in json.loads(path.read_text()):
        per.setdefault(item["image"], []).append(item)
    return {k: (statistics.median(x["ms"] for x in v[1:]), [l["text"] for l in v[-1]["lines"]]) for k, v in per.items()}


def node_latency(path):
    return {x["image"]: (statistics.median(x["ms"][1:]), x["lines"]) for x in json.loads(path.read_text())}


def exact(got, want):
    """Rendered lines found exactly among the lines read (each read line counts once; an image
    upside down is read bottom line first, so order is not asked here: ocr_tests checks it)."""
    left = list(got)
    n = 0
    for line in want:
        if line in left:
            left.remove(line)
            n += 1
    return n


rounds = sorted({int(p.stem.rsplit("_", 1)[1]) for p in out.glob("node_latency_*.json")})
variants = sorted({p.stem[len("troupe_latency_"):].rsplit("_", 1)[0] for p in out.glob("troupe_latency_*_*.json")},
                  key=lambda v: (v != "default", v))
node = [node_latency(out / f"node_latency_{r}.json") for r in rounds]
summary = []
for variant in variants:
    troupe = [troupe_latency(out / f"troupe_latency_{variant}_{r}.json") for r in rounds]
    if variant == "default":
        print(f"\nPer-image latency on {device} (median of runs 2..{runs}, best of {len(rounds)} interleaved rounds)")
        print(f"{'image':<12} {'troupe ms':>10} {'ocr-node ms':>12} {'speed-up':>9}  {'troupe exact':>12} {'ocr-node exact':>14}")
    t_all = n_all = 0.0
    t_ok = n_ok = total = 0
    for image, want in expected.items():
        t = min(r[image][0] for r in troupe)
        n = min(r[image][0] for r in node)
        t_lines, n_lines = troupe[-1][image][1], node[-1][image][1]
        te, ne = exact(t_lines, want), exact(n_lines, want)
        t_all += t
        n_all += n
        t_ok += te
        n_ok += ne
        total += len(want)
        if variant == "default":
            print(f"{Path(image).stem:<12} {t:>10.1f} {n:>12.1f} {n / t:>8.2f}x  {te:>5}/{len(want):<6} {ne:>7}/{len(want):<6}")
    if variant == "default":
        print(f"{'all':<12} {t_all:>10.1f} {n_all:>12.1f} {n_all / t_all:>8.2f}x  {t_ok:>5}/{total:<6} {n_ok:>7}/{total:<6}")
    summary.append((variant, t_all, n_all, t_ok, n_ok, total))

print(f"\nSum of the per-image latencies on {device}, each troupe_ocr variant against the same ocr-node runs")
print(f"{'troupe_ocr':<12} {'troupe ms':>10} {'ocr-node ms':>12} {'speed-up':>9}  {'troupe exact':>12} {'ocr-node exact':>14}")
for variant, t_all, n_all, t_ok, n_ok, total in summary:
    print(f"{variant:<12} {t_all:>10.1f} {n_all:>12.1f} {n_all / t_all:>8.2f}x  {t_ok:>5}/{total:<6} {n_ok:>7}/{total:<6}")

best_t = max(float(p.read_text().split(": ")[-1].split()[0]) for p in out.glob("troupe_stream_*.txt"))
best_n = max((lambda j: j["images"] / j["seconds"])(json.loads(p.read_text())) for p in out.glob("node_stream_*.json"))
print(f"\nStream throughput on {device}: troupe_ocr {best_t:.2f} images/s, ocr-node {best_n:.2f} images/s "
      f"({best_t / best_n:.2f}x), best of {len(rounds)} rounds")
