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


def compare(variant):
    """Per image: name, troupe ms, ocr-node ms, exact lines of each, rendered lines (best of the rounds)."""
    troupe = [troupe_latency(out / f"troupe_latency_{variant}_{r}.json") for r in rounds]
    rows = []
    for image, want in expected.items():
        t = min(r[image][0] for r in troupe)
        n = min(r[image][0] for r in node)
        rows.append((Path(image).stem, t, n, exact(troupe[-1][image][1], want), exact(node[-1][image][1], want), len(want)))
    return rows


def total(name, rows):
    return (name, *(sum(r[i] for r in rows) for i in range(1, 6)))


def print_row(name, t, n, te, ne, lines):
    print(f"{name:<12} {t:>10.1f} {n:>12.1f} {n / t:>8.2f}x  {te:>5}/{lines:<6} {ne:>7}/{lines:<6}")


header = f"{'troupe ms':>10} {'ocr-node ms':>12} {'speed-up':>9}  {'troupe exact':>12} {'ocr-node exact':>14}"
default = compare("default")
print(f"\nPer-image latency on {device} (median of runs 2..{runs}, best of {len(rounds)} interleaved rounds)")
print(f"{'image':<12} {header}")
for r in default + [total("all", default)]:
    print_row(*r)

print(f"\nSum of the per-image latencies on {device}, each troupe_ocr variant against the same ocr-node runs")
print(f"{'troupe_ocr':<12} {header}")
for variant in variants:
    print_row(*total(variant, default if variant == "default" else compare(variant)))

best_t = max(float(p.read_text().split(": ")[-1].split()[0]) for p in out.glob("troupe_stream_*.txt"))
best_n = max((lambda j: j["images"] / j["seconds"])(json.loads(p.read_text())) for p in out.glob("node_stream_*.json"))
print(f"\nStream throughput on {device}: troupe_ocr {best_t:.2f} images/s, ocr-node {best_n:.2f} images/s "
      f"({best_t / best_n:.2f}x), best of {len(rounds)} rounds")
