#!/usr/bin/env bash
# troupe_ocr against @gutenye/ocr-node (PaddleOCR's models on onnxruntime-node) on the same
# rendered images, interleaved in one run: per-image latency (each image RUNS times in a row,
# one at a time), stream throughput (every image ROUNDS times in flight), and exact text
# against what was rendered. Usage: scripts/ocr_bench.sh [DEVICE] (default CPU). RUNS=5 ROUNDS=4.
# Besides troupe_ocr as it comes, the latency is also taken with --no-cls (the stages ocr-node
# runs: it has no angle classifier) and with the device's faster precision where it has one
# (bf16 on a CPU with BF16, f16 on a GPU with FP16), each with its own exact-line count.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
device=${1:-CPU}
runs=${RUNS:-5}
rounds=${ROUNDS:-4}
bash "$root/scripts/install_deps.sh"
bash "$root/scripts/build.sh" >/dev/null
bash "$root/scripts/fetch_test_data.sh"
bin=$root/build/bin
ref=$root/data/ocr-node
if ! cmp -s "$root/scripts/reference/ocr-node/package.json" "$ref/package.json" || [ ! -d "$ref/node_modules/@gutenye/ocr-node" ]; then
  mkdir -p "$ref"
  cp "$root/scripts/reference/ocr-node/package.json" "$ref/package.json"
  (cd "$ref" && ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install --no-audit --no-fund --no-package-lock --loglevel=error)
fi
cp "$root/scripts/reference/ocr-node/ocr_node.mjs" "$ref/ocr_node.mjs"

out=$root/build/ocr_bench
img=$out/images
rm -f "$out"/*.json "$out"/*.txt
mkdir -p "$img"
# name|font|pixels|degrees|lines (separated by ';')
specs=(
  "invoice|DejaVuSans.ttf|28|0|Invoice 2024-0042;Customer: ACME Corp;Amount due: 1250 EUR;Thank you"
  "receipt|DejaVuSans.ttf|22|0|Coffee beans 2 x 7.50;Milk 1 liter 1.20;Bread 2.80;Apples 1 kg 3.10;Cheese 4.95;Total 27.05;Paid by card;Change 0.00"
  "chinese|wqy-microhei.ttc|34|0|中文识别测试;北京欢迎你"
  "line|DejaVuSans.ttf|20|0|The quick brown fox jumps over the lazy dog"
  "tilted|DejaVuSans.ttf|30|8|Hello World;troupe reads text"
  "upside|DejaVuSans.ttf|30|180|Hello World;troupe reads text"
  "page|DejaVuSans.ttf|20|0|Chapter 3: Streams;A stream is a sequence of frames;that arrive one after another.;Each frame is decoded, converted;and handed to the detector.;Boxes go to the recognizer,;and lines come out in order.;Latency is the time per frame;throughput the frames per second.;Both are measured here."
)
images=()
expected=$out/expected.json
echo "{" > "$expected"
first=1
for s in "${specs[@]}"; do
  IFS='|' read -r name font px deg text <<< "$s"
  IFS=';' read -r -a lines <<< "$text"
  "$bin/ocr_render" "$img/$name.png" "$font" "$px" "$deg" "${lines[@]}"
  images+=("$img/$name.png")
  [ $first = 1 ] || echo "," >> "$expected"
  first=0
  /usr/bin/python3 -c 'import json,sys; print(json.dumps(sys.argv[1]) + ": " + json.dumps(sys.argv[2:]), end="")' \
    "$img/$name.png" "${lines[@]}" >> "$expected"
done
echo "}" >> "$expected"

# name|flags of each troupe_ocr latency variant
variants=("default|" "no-cls|--no-cls")
caps=$("$bin/troupe" devices 2>/dev/null | awk -v d="$device" '$1 == d { on = 1; next } /^[^ ]/ { on = 0 } on && $1 == "OPTIMIZATION_CAPABILITIES"' || true)
case "$device:$caps" in
  CPU*:*BF16*) variants+=("bf16|-infer_precision bf16") ;;
  GPU*:*FP16*) variants+=("f16|-infer_precision f16") ;;
esac

repeated=()
for i in "${images[@]}"; do for ((r = 0; r < runs; ++r)); do repeated+=("$i"); done; done
stream=()
for ((r = 0; r < rounds; ++r)); do stream+=("${images[@]}"); done
cd "$root"
for round in 1 2; do
  for v in "${variants[@]}"; do
    IFS='|' read -r name flags <<< "$v"
    echo "=== round $round: latency, troupe_ocr $name"
    # shellcheck disable=SC2086 # flags are words
    "$bin/troupe_ocr" -d "$device" $flags --json "${repeated[@]}" > "$out/troupe_latency_${name}_$round.json"
  done
  echo "=== round $round: latency, ocr-node"
  node "$ref/ocr_node.mjs" latency "$runs" "${images[@]}" > "$out/node_latency_$round.json"
  echo "=== round $round: stream"
  "$bin/troupe_ocr" -d "$device" --stream --json "${stream[@]}" 2> "$out/troupe_stream_$round.txt" > /dev/null
  cat "$out/troupe_stream_$round.txt"
  (cd "$ref" && node ocr_node.mjs stream "$rounds" "${images[@]}") > "$out/node_stream_$round.json"
  cat "$out/node_stream_$round.json"
done
/usr/bin/python3 "$root/scripts/ocr_bench_table.py" "$out" "$device" "$runs"
