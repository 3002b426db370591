#!/usr/bin/env bash
# The Python package against the C++ API, side by side in one run:
# 1. the cost per call: the median sync infer() of a one-op model (Add 1x8) through
#    troupe_overhead (C++) and through Python (benchmarks/overhead.py); the difference is what
#    the binding adds per inference;
# 2. throughput: `troupe bench` and `python -m troupe.benchmark` (an AsyncInferQueue) on the
#    PP-OCR cls and rec models, SECONDS each (default 10), same device and hint.
# usage: bash scripts/bench_python.sh [DEVICE=CPU] [RUNS=20000]   (BUILD_DIR: build/ by default;
#        the models from scripts/fetch_test_data.sh in data/, or DATA_DIR)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
device=${1:-CPU} runs=${2:-20000}
data=${DATA_DIR:-$root/data}
seconds=${SECONDS_PER_RUN:-10}
ninja -C "$build" troupe_overhead troupe_python troupe_cli >/dev/null
echo "== C++ (troupe_overhead) =="
"$build/bin/troupe_overhead" "$device" "$runs"
echo "== Python (benchmarks/overhead.py, /usr/bin/python3) =="
PYTHONPATH=$build/python /usr/bin/python3 "$root/benchmarks/overhead.py" "$device" "$runs"
echo "== C++ again (the machine may have changed in between) =="
"$build/bin/troupe_overhead" "$device" "$runs"

for m in "ch_ppocr_mobile_v2.0_cls_infer 1,3,48,192" "ch_PP-OCRv4_rec_infer 1,3,48,320"; do
  set -- $m
  model=$data/models/$1.onnx
  [ -f "$model" ] || { echo "missing $model: run scripts/fetch_test_data.sh" >&2; exit 1; }
  echo "== $1 [$2] on $device, ${seconds} s each: troupe bench (C++), then python -m troupe.benchmark =="
  "$build/bin/troupe" bench -m "$model" -shape "[$2]" -d "$device" -t "$seconds" 2>/dev/null | grep -E "Count|Median|Throughput"
  PYTHONPATH=$build/python /usr/bin/python3 -m troupe.benchmark -m "$model" -shape "$2" -d "$device" -t "$seconds" |
    grep -E "Device|Count|Median|Throughput"
done
