#!/usr/bin/env bash
# HETERO's placement rules side by side in one run (issue 33): per model, each device alone
# (CPU, GPU) and HETERO:GPU,CPU placed by PRIORITY (OpenVINO's rule) and by COST (measured),
# ROUNDS rounds with the four configurations interleaved, SECONDS_PER_FIGURE each figure. The
# table keeps each configuration's best round:
#
#   latency     median ms of one request at a time (troupe bench -hint latency -api sync)
#   throughput  inferences/s with -hint throughput (its optimal requests in flight)
#   cost/best   COST against the best single device, latency (best / COST) and throughput
#               (COST / best): 1.00 = as fast; the goal is >= 0.95
#
# COST's compile (calibration included) is printed too. GPU is GPU.0 (lavapipe where there is
# no GPU: CI's two ICD copies, scripts/test.sh).
#
# COMPLEMENTARY=1: the devices made complementary, as a real GPU beside a CPU would be: the CPU
# runs only Conv (TROUPE_EXCLUDED_OPS excludes every other op type of the model), WHOLE
# (GPU.0, or REFERENCE) runs everything; there is no CPU column (it cannot run the model
# alone), HETERO's list is CPU,WHOLE (PRIORITY: each Conv to the CPU, the rest to WHOLE,
# OpenVINO's ping-pong) and COST_NOMINAL is added.
#
# Usage: scripts/bench_hetero.sh [MODEL:SHAPE ...]
#   default: PP-OCR cls [1,3,48,192], rec [1,3,48,320], det [1,3,320,320], bert_tiny and
#   lm_tiny at 32 tokens (SHAPE as troupe bench's -shape)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
troupe=${TROUPE:-$root/build/bin/troupe}
[ -x "$troupe" ] || bash "$root/scripts/build.sh" >/dev/null
bash "$root/scripts/fetch_test_data.sh" >/dev/null
models_dir=$root/data/models
seconds=${SECONDS_PER_FIGURE:-4}
rounds=${ROUNDS:-2}
out=$root/build/bench_hetero
mkdir -p "$out"
echo '{"HETERO": {"HETERO_PLACEMENT": "COST"}}' > "$out/cost.json"
echo '{"HETERO": {"HETERO_PLACEMENT": "PRIORITY"}}' > "$out/priority.json"
echo '{"HETERO": {"HETERO_PLACEMENT": "COST_NOMINAL"}}' > "$out/cost_nominal.json"
complementary=${COMPLEMENTARY:-0}
list=GPU.0,CPU
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(
  "ch_ppocr_mobile_v2.0_cls_infer:[1,3,48,192]"
  "ch_PP-OCRv4_rec_infer:[1,3,48,320]"
  "ch_PP-OCRv4_det_presigmoid:[1,3,320,320]"
  "bert_tiny:input_ids[1,32],attention_mask[1,32]"
  "lm_tiny:input_ids[1,32]")
configs=(CPU GPU.0 PRIORITY COST)
if [ "$complementary" = 1 ]; then
  whole=${WHOLE:-GPU.0}
  configs=("$whole" PRIORITY COST COST_NOMINAL)
  list=CPU,$whole
fi

figures() { # model shape config round: prints "latency throughput compile"
  local m=$1 shape=$2 c=$3 r=$4 dev=$3 extra=() log lat tput comp
  case $c in PRIORITY|COST|COST_NOMINAL) dev=HETERO:$list extra=(-load_config "$out/$(echo "$c" | tr A-Z a-z).json") ;; esac
  log=$out/${m}_${c}_${r}
  lat=$("$troupe" bench -m "$models_dir/$m.onnx" -d "$dev" -shape "$shape" -hint latency -api sync -t "$seconds" \
    "${extra[@]}" 2>&1 | tee "$log.latency.log" | sed -n 's/.*Median: *\([0-9.]*\) ms.*/\1/p' | head -1)
  tput=$("$troupe" bench -m "$models_dir/$m.onnx" -d "$dev" -shape "$shape" -hint throughput -t "$seconds" \
    "${extra[@]}" 2>&1 | tee "$log.throughput.log" | sed -n 's/.*Throughput: *\([0-9.]*\) FPS.*/\1/p' | head -1)
  comp=$(sed -n 's/.*Compile model took *\([0-9.]*\) ms.*/\1/p' "$log.latency.log" | head -1)
  echo "${lat:--} ${tput:--} ${comp:--}"
}

lines=$out/lines.tsv
: > "$lines"
for case in "${cases[@]}"; do
  m=${case%%:*} shape=${case#*:}
  [ -f "$models_dir/$m.onnx" ] || { echo "bench_hetero: no model $models_dir/$m.onnx" >&2; exit 2; }
  unset TROUPE_EXCLUDED_OPS
  if [ "$complementary" = 1 ]; then
    others=$("$troupe" query -m "$models_dir/$m.onnx" -d CPU -shape "$shape" | awk '$3 == "supported" && $2 != "Conv" {print $2}' | sort -u | paste -sd,)
    export TROUPE_EXCLUDED_OPS="CPU:$others"
  fi
  for r in $(seq "$rounds"); do
    for c in "${configs[@]}"; do
      read -r lat tput comp < <(figures "$m" "$shape" "$c" "$r")
      printf '%s\t%s\t%s\t%s\t%s\n' "$m" "$c" "$lat" "$tput" "$comp" >> "$lines"
      echo "  $m $c round $r: latency $lat ms, $tput FPS, compile $comp ms" >&2
    done
  done
done

/usr/bin/python3 - "$lines" <<'EOF'
import sys
best = {}
for line in open(sys.argv[1]):
    m, c, lat, tput, comp = line.rstrip("\n").split("\t")
    b = best.setdefault((m, c), [None, None, None])
    if lat != "-" and (b[0] is None or float(lat) < b[0]): b[0] = float(lat)
    if tput != "-" and (b[1] is None or float(tput) > b[1]): b[1] = float(tput)
    if comp != "-" and (b[2] is None or float(comp) < b[2]): b[2] = float(comp)
models = list(dict.fromkeys(m for m, _ in best))
fmt = lambda v, f: "-" if v is None else f % v
columns = list(dict.fromkeys(c for _, c in best))
print("| model | " + " | ".join(c + " ms / FPS" for c in columns) + " | COST compile ms | cost/best latency | cost/best throughput |")
print("|---" * (len(columns) + 4) + "|")
for m in models:
    cells, singles_lat, singles_tput = [], [], []
    for c in columns:
        lat, tput, comp = best.get((m, c), [None, None, None])
        cells.append(fmt(lat, "%.2f") + " / " + fmt(tput, "%.1f"))
        if c in ("CPU", "GPU.0", "REFERENCE"):
            if lat is not None: singles_lat.append(lat)
            if tput is not None: singles_tput.append(tput)
    lat, tput, comp = best.get((m, "COST"), [None, None, None])
    rl = fmt(min(singles_lat) / lat if lat and singles_lat else None, "%.2f")
    rt = fmt(tput / max(singles_tput) if tput and singles_tput else None, "%.2f")
    print(f"| {m} | " + " | ".join(cells) + f" | {fmt(comp, '%.0f')} | {rl} | {rt} |")
EOF
