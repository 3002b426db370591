#!/usr/bin/env bash
# The Python package's cost per call, side by side with the C++ API's in one run: the median
# sync infer() of a one-op model (Add 1x8) through troupe_overhead (C++) and through Python
# (benchmarks/overhead.py); the difference is what the binding adds per inference.
# usage: bash scripts/bench_python.sh [DEVICE=CPU] [RUNS=20000]   (BUILD_DIR: build/ by default)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
device=${1:-CPU} runs=${2:-20000}
ninja -C "$build" troupe_overhead troupe_python >/dev/null
echo "== C++ (troupe_overhead) =="
"$build/bin/troupe_overhead" "$device" "$runs"
echo "== Python (benchmarks/overhead.py, /usr/bin/python3) =="
PYTHONPATH=$build/python /usr/bin/python3 "$root/benchmarks/overhead.py" "$device" "$runs"
echo "== C++ again (the machine may have changed in between) =="
"$build/bin/troupe_overhead" "$device" "$runs"
