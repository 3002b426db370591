#!/usr/bin/env bash
# Fuzzes the ONNX reader with libFuzzer for a bounded time (default 300 s), seeded with the
# real models and the conformance models; `fuzz.sh ir [seconds]` fuzzes the OpenVINO IR reader
# instead, seeded with IR written by `troupe convert` from those models (an input is the .xml,
# a NUL byte, then the .bin); `fuzz.sh npy [seconds]` fuzzes the .npy reader of the troupe
# command, seeded with NumPy's own files; `fuzz.sh node [seconds]` fuzzes a worker's node actor
# with a client's messages (hello, compile, infer, any CAF message; fuzz/node_protocol_fuzz.cpp),
# seeded with what a real client sends. Crashing inputs land in fuzz/crashes/ (ignored by git):
# fix the code, then turn each into a test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=onnx_reader_fuzz
case "${1:-}" in
  ir) target=ir_reader_fuzz; shift ;;
  npy) target=npy_reader_fuzz; shift ;;
  node) target=node_protocol_fuzz; shift ;;
esac
seconds=${1:-300}
# Undefined behaviour is a finding like a crash: stop at the first report and keep the input.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
build=$root/build-fuzz
CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTROUPE_FUZZ=ON -DTROUPE_TESTS=OFF >/dev/null
ninja -C "$build" "$target"
if [ "$target" = ir_reader_fuzz ]; then
  # Seeds: small conformance models converted by the regular build's troupe (build/), as xml NUL bin.
  corpus=$build/corpus_ir
  mkdir -p "$corpus" "$root/fuzz/crashes"
  tmp=$(mktemp -d)
  for f in /usr/share/libonnx-testdata/data/node/test_{conv,add,reshape,slice,resize,gemm}*/model.onnx; do
    if "$root/build/bin/troupe" convert -m "$f" -o "$tmp/m.xml" >/dev/null 2>&1; then
      { cat "$tmp/m.xml"; printf '\0'; cat "$tmp/m.bin"; } > "$corpus/$(echo "$f" | md5sum | cut -c1-12).ir"
    fi
  done
  rm -rf "$tmp"
  exec "$build/bin/ir_reader_fuzz" "$corpus" -max_total_time="$seconds" -max_len=1000000 -rss_limit_mb=4096 \
    -artifact_prefix="$root/fuzz/crashes/" -print_final_stats=1
fi
if [ "$target" = node_protocol_fuzz ]; then
  corpus=$build/corpus_node
  mkdir -p "$corpus" "$root/fuzz/crashes"
  TROUPE_FUZZ_SEEDS=$corpus "$build/bin/node_protocol_fuzz"
  # A message gets 10 s to be answered (the target aborts past it); libFuzzer's own -timeout
  # catches what blocks the target outright.
  exec "$build/bin/node_protocol_fuzz" "$corpus" -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 \
    -timeout=60 -artifact_prefix="$root/fuzz/crashes/" -print_final_stats=1
fi
if [ "$target" = npy_reader_fuzz ]; then
  corpus=$build/corpus_npy
  mkdir -p "$corpus" "$root/fuzz/crashes"
  /usr/bin/python3 - "$corpus" <<'PY'
import sys, numpy as np
d = sys.argv[1]
for i, a in enumerate([np.zeros((2, 3), "<f4"), np.arange(5, dtype="<i8"), np.ones((1, 2, 2), "|u1"),
                       np.array(True), np.zeros((0, 4), "<f2"), np.arange(6, dtype="<f8").reshape(2, 3)]):
    np.save(f"{d}/seed{i}.npy", a)
PY
  exec "$build/bin/npy_reader_fuzz" "$corpus" -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 \
    -artifact_prefix="$root/fuzz/crashes/" -print_final_stats=1
fi
corpus=$build/corpus
mkdir -p "$corpus" "$root/fuzz/crashes"
for f in /usr/share/libonnx-testdata/data/node/test_{conv,add,reshape,slice,resize,gemm}*/model.onnx; do
  cp "$f" "$corpus/$(echo "$f" | md5sum | cut -c1-12).onnx"
done
[ -f "$root/data/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" ] && cp "$root/data/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$corpus/"
"$build/bin/onnx_reader_fuzz" "$corpus" -max_total_time="$seconds" -max_len=1000000 -rss_limit_mb=4096 \
  -artifact_prefix="$root/fuzz/crashes/" -print_final_stats=1
