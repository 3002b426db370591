#!/usr/bin/env bash
# The main job: installs, builds, fetches the PP-OCR models, then benchmarks them with
# `troupe bench` on CPU side by side with onnxruntime (scripts/reference/ort_reference.js) in one run.
# Usage: scripts/bench.sh [cls|det|det640|rec ...] (default: cls det det640 rec). SECONDS_PER_RUN=10.
# Per model: latency (2 threads) in f32 and bf16, throughput (2 streams of 1 thread) in f32 and
# bf16, onnxruntime's latency and throughput, and troupe_roofline's FLOP count and measured peak.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install_deps.sh"
bash "$root/scripts/build.sh" >/dev/null
bash "$root/scripts/fetch_test_data.sh"
troupe=$root/build/bin/troupe
t=${SECONDS_PER_RUN:-10}
out=$root/build/bench
mkdir -p "$out"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(cls det det640 rec)
for m in "${models[@]}"; do
  case $m in
    cls) file=ch_ppocr_mobile_v2.0_cls_infer shape=1x3x48x192 ;;
    det) file=ch_PP-OCRv4_det_infer shape=1x3x320x320 ;;
    det640) file=ch_PP-OCRv4_det_infer shape=1x3x640x640 ;;
    rec) file=ch_PP-OCRv4_rec_infer shape=1x3x48x320 ;;
    *) echo "unknown model '$m' (cls, det, det640, rec)" >&2; exit 2 ;;
  esac
  model=$root/data/models/$file.onnx
  dims=[${shape//x/,}]
  echo "=== $m $shape"
  # Each run writes <folder>/benchmark_report.json (benchmark_app's -report_folder/-json_stats).
  "$troupe" bench -m "$model" -d CPU -shape "x$dims" -hint latency -nthreads 2 -t "$t" \
    -report_type no_counters -report_folder "$out/${m}_latency" -json_stats
  rm -rf "$out/${m}_bf16" # a CPU without bf16 fails; the table then shows '-'
  "$troupe" bench -m "$model" -d CPU -shape "x$dims" -hint latency -nthreads 2 -infer_precision bf16 -t "$t" \
    -report_type no_counters -report_folder "$out/${m}_bf16" -json_stats || true
  "$troupe" bench -m "$model" -d CPU -shape "x$dims" -hint throughput -nstreams 2 -nthreads 1 -api async -nireq 2 -t "$t" \
    -report_type no_counters -report_folder "$out/${m}_throughput" -json_stats
  rm -rf "$out/${m}_bf16_throughput"
  "$troupe" bench -m "$model" -d CPU -shape "x$dims" -hint throughput -nstreams 2 -nthreads 1 -api async -nireq 2 \
    -infer_precision bf16 -t "$t" -report_type no_counters -report_folder "$out/${m}_bf16_throughput" -json_stats || true
  # The model's FLOPs and the machine's peak (a 3x3 Conv and a MatMul probe) for the % of peak column.
  "$root/build/bin/troupe_roofline" -m "$model" -shape "x$dims" -nthreads 2 -niter 5 -top 1 > "$out/${m}_roofline.txt"
  node "$root/scripts/reference/ort_reference.js" bench "$model" --shape "$shape" --seconds "$t" > "$out/${m}_ort.json"
done
[ -x "$root/build/bin/troupe_overhead" ] && "$root/build/bin/troupe_overhead" CPU | tee "$out/overhead.txt"
/usr/bin/python3 "$root/scripts/bench_table.py" "$out" "${models[@]}"
