#!/usr/bin/env bash
# The main job: installs, builds, fetches the PP-OCR models, then benchmarks them with
# `troupe bench` on CPU side by side with onnxruntime (scripts/reference/ort_reference.js) in one run.
# Usage: scripts/bench.sh [cls|det|det640|rec ...] (default: cls det det640 rec). SECONDS_PER_RUN=5, ROUNDS=2.
# Per model: latency (2 threads) in f32 and bf16, throughput (2 streams of 1 thread) in f32 and
# bf16, onnxruntime's latency and throughput, and troupe_roofline's FLOP count and measured peak.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install_deps.sh"
bash "$root/scripts/build.sh" >/dev/null
bash "$root/scripts/fetch_test_data.sh"
troupe=$root/build/bin/troupe
t=${SECONDS_PER_RUN:-5}
rounds=${ROUNDS:-2}
out=$root/build/bench
rm -rf "$out"
mkdir -p "$out"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(cls det det640 rec)
for m in "${models[@]}"; do
  case $m in cls | det | det640 | rec) ;; *) echo "unknown model '$m' (cls, det, det640, rec)" >&2; exit 2 ;; esac
done
# This machine's speed drifts for minutes at a time (shared hosts): every figure is taken in
# each of $rounds rounds, troupe and onnxruntime one after the other per model, and the table
# keeps each runtime's best.
for r in $(seq "$rounds"); do
for m in "${models[@]}"; do
  case $m in
    cls) file=ch_ppocr_mobile_v2.0_cls_infer shape=1x3x48x192 ;;
    det) file=ch_PP-OCRv4_det_infer shape=1x3x320x320 ;;
    det640) file=ch_PP-OCRv4_det_infer shape=1x3x640x640 ;;
    rec) file=ch_PP-OCRv4_rec_infer shape=1x3x48x320 ;;
  esac
  model=$root/data/models/$file.onnx
  dims=[${shape//x/,}]
  echo "=== round $r: $m $shape"
  # Each run writes <folder>/benchmark_report.json (benchmark_app's -report_folder/-json_stats).
  # A CPU without bf16 fails those runs; the table then shows '-'.
  bench() { # folder, then troupe bench flags
    local folder=$out/r$r/${m}_$1
    shift
    "$troupe" bench -m "$model" -d CPU -shape "x$dims" -t "$t" -report_type no_counters -report_folder "$folder" -json_stats "$@"
  }
  bench latency -hint latency -nthreads 2
  bench bf16 -hint latency -nthreads 2 -infer_precision bf16 || true
  bench throughput -hint throughput -nstreams 2 -nthreads 1 -api async -nireq 2
  bench bf16_throughput -hint throughput -nstreams 2 -nthreads 1 -api async -nireq 2 -infer_precision bf16 || true
  node "$root/scripts/reference/ort_reference.js" bench "$model" --shape "$shape" --seconds "$t" > "$out/r$r/${m}_ort.json"
  # The model's FLOPs and the machine's peak (a 3x3 Conv and a MatMul probe) for the % of peak column.
  "$root/build/bin/troupe_roofline" -m "$model" -shape "x$dims" -nthreads 2 -niter 5 -top 1 > "$out/r$r/${m}_roofline.txt"
done
done
[ -x "$root/build/bin/troupe_overhead" ] && "$root/build/bin/troupe_overhead" CPU | tee "$out/overhead.txt"
/usr/bin/python3 "$root/scripts/bench_table.py" "$out" "${models[@]}"
