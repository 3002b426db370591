#!/usr/bin/env bash
# CACHE_DIR never makes a compile slower (issue 32): compile times of the PP-OCR models with
# `troupe bench -niter 0`, per device, in ROUNDS interleaved rounds of three runs each: no
# CACHE_DIR, a first run with an empty one, a second run with the folder the first left.
# Usage: scripts/bench_cache.sh [DEVICE ...] (default: CPU, and GPU.0 where a Vulkan device is).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
troupe=${TROUPE:-$root/build/bin/troupe}
[ -x "$troupe" ] || bash "$root/scripts/build.sh" >/dev/null
bash "$root/scripts/fetch_test_data.sh"
rounds=${ROUNDS:-3}
devices=("$@")
if [ ${#devices[@]} -eq 0 ]; then
  devices=(CPU)
  "$troupe" devices 2>/dev/null | grep -q '^GPU\.0' && devices+=(GPU.0)
fi
models=("ch_PP-OCRv4_det_infer [1,3,640,640]" "ch_PP-OCRv4_rec_infer [1,3,48,320]" "ch_ppocr_mobile_v2.0_cls_infer [1,3,48,192]")
compile_ms() { # model shape device [-cache_dir DIR]: troupe's "Compile model took N ms"
  local m=$1 s=$2 d=$3
  shift 3
  "$troupe" bench -m "$root/data/models/$m.onnx" -shape "$s" -d "$d" -niter 0 "$@" 2>&1 |
    sed -n 's/.*Compile model took \([0-9.]*\) ms.*/\1/p'
}
echo "# $(date -u '+%F %H:%M') UTC, $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg),$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "| device | model | no cache (ms) | first, empty CACHE_DIR | second, from CACHE_DIR | second / none |"
echo "|---|---|---|---|---|---|"
for d in "${devices[@]}"; do
  for ms in "${models[@]}"; do
    read -r m s <<< "$ms"
    none=() first=() again=()
    for r in $(seq "$rounds"); do
      dir=$(mktemp -d)
      none+=("$(compile_ms "$m" "$s" "$d")")
      first+=("$(compile_ms "$m" "$s" "$d" -cache_dir "$dir")")
      again+=("$(compile_ms "$m" "$s" "$d" -cache_dir "$dir")")
      rm -rf "$dir"
    done
    ratio=$(/usr/bin/python3 -c 'import sys, statistics as st
a = [float(x) for x in sys.argv[1].split()]; b = [float(x) for x in sys.argv[2].split()]
print(f"{st.median(b) / st.median(a):.2f} (medians)")' "${none[*]}" "${again[*]}")
    j() { local IFS=/; echo "$*"; }
    echo "| $d | ${m%%_infer} $s | $(j "${none[@]}") | $(j "${first[@]}") | $(j "${again[@]}") | $ratio |"
  done
done
