#!/usr/bin/env bash
# Fuzzes the ONNX reader with libFuzzer for a bounded time (default 300 s), seeded with the
# real models and the conformance models. Crashing inputs land in fuzz/crashes/ (ignored by
# git): fix the reader, then turn each into a graph_tests case that expects a troupe::Exception.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-300}
build=$root/build-fuzz
CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTROUPE_FUZZ=ON -DTROUPE_TESTS=OFF >/dev/null
ninja -C "$build" onnx_reader_fuzz
corpus=$build/corpus
mkdir -p "$corpus" "$root/fuzz/crashes"
for f in /usr/share/libonnx-testdata/data/node/test_{conv,add,reshape,slice,resize,gemm}*/model.onnx; do
  cp "$f" "$corpus/$(echo "$f" | md5sum | cut -c1-12).onnx"
done
[ -f "$root/data/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" ] && cp "$root/data/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$corpus/"
"$build/bin/onnx_reader_fuzz" "$corpus" -max_total_time="$seconds" -max_len=1000000 -rss_limit_mb=4096 \
  -artifact_prefix="$root/fuzz/crashes/" -print_final_stats=1
