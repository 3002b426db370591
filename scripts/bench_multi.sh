#!/usr/bin/env bash
# MULTI and AUTO against each device alone, on the PP-OCR models, in one run: `troupe bench`
# async throughput on CPU, GPU, MULTI:GPU,CPU and AUTO -hint ctput, in interleaved rounds (the
# machines are shared and noisy), then a table of the best round of each and the ratio of
# MULTI and AUTO to the best single device. Expects a build (scripts/build.sh) and the data
# (scripts/fetch_test_data.sh). Usage: scripts/bench_multi.sh [cls|det|rec ...]
# SECONDS_PER_RUN=5 ROUNDS=2.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
troupe=$root/build/bin/troupe
t=${SECONDS_PER_RUN:-5}
rounds=${ROUNDS:-2}
out=$root/build/bench_multi
rm -rf "$out"
mkdir -p "$out"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(cls det rec)
configs=("CPU|-hint throughput" "GPU|-hint throughput" "MULTI:GPU,CPU|-hint ctput" "AUTO|-hint ctput")
for m in "${models[@]}"; do
  case $m in
    cls) file=ch_ppocr_mobile_v2.0_cls_infer shape=1x3x48x192 ;;
    det) file=ch_PP-OCRv4_det_infer shape=1x3x320x320 ;;
    rec) file=ch_PP-OCRv4_rec_infer shape=1x3x48x320 ;;
    *) echo "unknown model '$m' (cls, det, rec)" >&2; exit 2 ;;
  esac
  dims=[${shape//x/,}]
  for r in $(seq 1 "$rounds"); do
    for i in "${!configs[@]}"; do
      dev=${configs[$i]%%|*}
      flags=${configs[$i]#*|}
      # shellcheck disable=SC2086 # flags are words
      "$troupe" bench -m "$root/data/models/$file.onnx" -d "$dev" -shape "x$dims" $flags -api async -t "$t" \
        -report_type no_counters -report_folder "$out/${m}_${i}_$r" -json_stats >"$out/${m}_${i}_$r.log" 2>&1 ||
        echo "$m on $dev failed: see $out/${m}_${i}_$r.log" >&2
    done
  done
done
/usr/bin/python3 - "$out" "$rounds" "${models[@]}" <<'PY'
import json, os, sys
out, rounds, models = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
names = ["CPU", "GPU", "MULTI:GPU,CPU", "AUTO ctput"]
def fps(m, i):
    best, served = None, ""
    for r in range(1, rounds + 1):
        p = os.path.join(out, f"{m}_{i}_{r}", "benchmark_report.json")
        if not os.path.exists(p):
            continue
        res = json.load(open(p)).get("execution_results", {})
        v = float(res.get("throughput", 0))
        if best is None or v > best:
            best, served = v, res.get("requests_served", "")
    return best, served
print("| model | " + " | ".join(names) + " | MULTI / best single | AUTO / best single |")
print("|---" * (len(names) + 3) + "|")
for m in models:
    vals = [fps(m, i) for i in range(len(names))]
    single = max(v for v, _ in vals[:2] if v is not None) if any(v for v, _ in vals[:2]) else None
    cells = []
    for v, served in vals:
        cells.append("-" if v is None else f"{v:.1f} /s" + (f" ({served})" if served else ""))
    ratio = lambda v: "-" if v is None or not single else f"{v / single:.2f}x"
    print(f"| {m} | " + " | ".join(cells) + f" | {ratio(vals[2][0])} | {ratio(vals[3][0])} |")
PY
