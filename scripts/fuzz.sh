#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time (default 300 s), built with clang in build-fuzz:
#   fuzz.sh [onnx] [SECONDS]  the ONNX reader, seeded with the real models and conformance models
#   fuzz.sh ir [SECONDS]      the OpenVINO IR reader, seeded with IR `troupe convert` writes from
#                             those models (an input is the .xml, a NUL byte, then the .bin)
#   fuzz.sh npy [SECONDS]     the .npy reader of the troupe command, seeded with NumPy's files
#   fuzz.sh node [SECONDS]    a worker's node actor fed a client's messages (hello, compile,
#                             infer, any CAF message; fuzz/node_protocol_fuzz.cpp), seeded with
#                             what a real client sends
#   fuzz.sh image [SECONDS]   the PNG/JPEG reader of troupe_ocr (examples/ocr/image.cpp),
#                             seeded with small PNGs and JPEGs the target writes
#   fuzz.sh build             builds the five (then FUZZ_PREBUILT=1 runs build nothing: CI runs
#                             two side by side)
#   fuzz.sh minimize KIND     replaces fuzz/corpus/KIND (committed) by the smallest set of inputs
#                             of up to 64 KB, from it and build-fuzz/corpus_KIND, that covers what
#                             they cover (libFuzzer's -merge=1)
# A run starts from the committed corpus fuzz/corpus/KIND and grows build-fuzz/corpus_KIND; the
# regular build replays fuzz/corpus/KIND and fuzz/regressions/KIND (inputs that once crashed a
# target: never minimized away) as the CTest tests fuzz_corpus_KIND.
# It ends with one line: target, seconds, executions, executions/s, corpus, crashes (0, or the
# files). PUBLISH=1 also adds that line, dated, to docs/reliability.md's fuzzing table; FUZZ_QUIET=1
# keeps libFuzzer's progress in build-fuzz/TARGET.log (printing its tail on a finding);
# FUZZ_RUNS=N also stops at N executions (the goal's 1 million, whichever comes first). Crashing
# inputs land in fuzz/crashes/TARGET-* (ignored by git): fix the code, then turn each into a test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kind=onnx
minimize=0
if [ "${1:-}" = minimize ]; then
  minimize=1
  shift
fi
case "${1:-}" in
  onnx | ir | npy | node | image | build) kind=$1; shift ;;
esac
seconds=${1:-300}
# Undefined behaviour is a finding like a crash: stop at the first report and keep the input.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# Leaks are checked per input; what the OpenMP runtime keeps until exit is not one of them.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/fuzz/lsan.supp:print_suppressions=0}
build=$root/build-fuzz
case $kind in
  onnx) target=onnx_reader_fuzz ;;
  ir) target=ir_reader_fuzz ;;
  npy) target=npy_reader_fuzz ;;
  node) target=node_protocol_fuzz ;;
  image) target=image_reader_fuzz ;;
  build) target= ;;
esac
if [ "$kind" = build ]; then # every target, so that runs side by side need not build
  CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTROUPE_FUZZ=ON -DTROUPE_TESTS=OFF >/dev/null
  # Quiet when it builds; the compiler's messages when it does not (CI would fail without a word).
  ninja -C "$build" onnx_reader_fuzz ir_reader_fuzz npy_reader_fuzz node_protocol_fuzz image_reader_fuzz > "$build/build.log" 2>&1 || {
    grep -E -A12 'FAILED|error' "$build/build.log" | head -n 80 >&2
    echo "fuzz.sh: the clang fuzz build failed (whole log: $build/build.log)" >&2
    exit 1
  }
  exit 0
fi
if [ "${FUZZ_PREBUILT:-}" != 1 ]; then
  CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTROUPE_FUZZ=ON -DTROUPE_TESTS=OFF >/dev/null
  ninja -C "$build" "$target" > "$build/build_$kind.log" 2>&1 || {
    grep -E -A12 'FAILED|error' "$build/build_$kind.log" | head -n 80 >&2
    echo "fuzz.sh: the clang fuzz build of $target failed (whole log: $build/build_$kind.log)" >&2
    exit 1
  }
fi
corpus=$build/corpus_$kind
committed=$root/fuzz/corpus/$kind
mkdir -p "$corpus" "$committed" "$root/fuzz/crashes"
if [ "$minimize" = 1 ]; then
  tmp=$(mktemp -d)
  find "$committed" "$corpus" -type f -size -65k -exec cp {} "$tmp/" \;
  rm -rf "$committed"
  mkdir -p "$committed"
  LSAN_OPTIONS=detect_leaks=0 "$build/bin/$target" -merge=1 -rss_limit_mb=4096 "$committed" "$tmp" >"$build/$target.merge.log" 2>&1 ||
    { tail -n 30 "$build/$target.merge.log"; exit 1; }
  echo "fuzz: fuzz/corpus/$kind: $(ls "$tmp" | wc -l) inputs -> $(ls "$committed" | wc -l) ($(du -sh "$committed" | cut -f1))"
  rm -rf "$tmp"
  exit 0
fi
cp -n "$committed"/* "$corpus"/ 2>/dev/null || true
flags=(-max_total_time="$seconds" -rss_limit_mb=4096 -max_len=1000000)
case $kind in
  onnx)
    for f in /usr/share/libonnx-testdata/data/node/test_{conv,add,reshape,slice,resize,gemm}*/model.onnx; do
      cp "$f" "$corpus/$(echo "$f" | md5sum | cut -c1-12).onnx"
    done
    [ -f "$root/data/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" ] && cp "$root/data/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$corpus/"
    ;;
  ir)
    # Seeds: small conformance models converted by the regular build's troupe (build/), as xml NUL bin.
    tmp=$(mktemp -d)
    for f in /usr/share/libonnx-testdata/data/node/test_{conv,add,reshape,slice,resize,gemm}*/model.onnx; do
      if "$root/build/bin/troupe" convert -m "$f" -o "$tmp/m.xml" >/dev/null 2>&1; then
        { cat "$tmp/m.xml"; printf '\0'; cat "$tmp/m.bin"; } > "$corpus/$(echo "$f" | md5sum | cut -c1-12).ir"
      fi
    done
    rm -rf "$tmp"
    ;;
  npy)
    /usr/bin/python3 - "$corpus" <<'PY'
import sys, numpy as np
d = sys.argv[1]
for i, a in enumerate([np.zeros((2, 3), "<f4"), np.arange(5, dtype="<i8"), np.ones((1, 2, 2), "|u1"),
                       np.array(True), np.zeros((0, 4), "<f2"), np.arange(6, dtype="<f8").reshape(2, 3)]):
    np.save(f"{d}/seed{i}.npy", a)
PY
    flags=(-max_total_time="$seconds" -rss_limit_mb=2048 -max_len=4096)
    ;;
  image)
    TROUPE_FUZZ_SEEDS=$corpus "$build/bin/$target"
    flags=(-max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536)
    ;;
  node)
    TROUPE_FUZZ_SEEDS=$corpus "$build/bin/$target"
    # A message gets 10 s to be answered (the target aborts past it); libFuzzer's -timeout
    # catches what blocks the target outright. No per-input leak check: actors end on their own
    # threads after an input returns, so what one input allocated may still be held (and freed
    # later) when libFuzzer checks; with the committed corpus's 1022 inputs clang 14's check
    # reported device workers' executables and glibc's thread-exit lists that way. Leaks are
    # checked at process exit instead, when all is torn down: fuzz_corpus_node in the ASan build.
    flags=(-max_total_time="$seconds" -rss_limit_mb=2048 -max_len=4096 -timeout=60 -detect_leaks=0)
    ;;
esac
[ -n "${FUZZ_RUNS:-}" ] && flags+=(-runs="$FUZZ_RUNS")
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "?") # what is fuzzed: the tree at the start
log=$build/$target.log
crashes() { ls "$root/fuzz/crashes" | grep "^$target-" || true; }
before=$(crashes | wc -l)
set +e
if [ "${FUZZ_QUIET:-}" = 1 ]; then # CI: the log's tail only when something was found
  "$build/bin/$target" "$corpus" "${flags[@]}" -artifact_prefix="$root/fuzz/crashes/$target-" -print_final_stats=1 >"$log" 2>&1
  status=$?
  [ "$status" = 0 ] || tail -n 60 "$log"
else
  "$build/bin/$target" "$corpus" "${flags[@]}" -artifact_prefix="$root/fuzz/crashes/$target-" -print_final_stats=1 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
fi
set -e
new_crashes=$(ls -t "$root/fuzz/crashes" | grep "^$target-" | head -n $(( $(crashes | wc -l) - before )) | tr '\n' ' ' || true)
line=$(/usr/bin/python3 - "$log" "$target" "$corpus" "$status" "$new_crashes" <<'PY'
import os, re, sys
log, target, corpus, status, crashes = sys.argv[1:6]
text = open(log, errors="replace").read()
stat = lambda k: (re.findall(rf"stat::{k}:\s*(\d+)", text) or ["?"])[-1]
secs = (re.findall(r"Done \d+ runs in (\d+) second", text) or ["?"])[-1]
found = crashes.split() or (["exit status " + status] if status != "0" else [])
print(f"| {target} | {secs} | {stat('number_of_executed_units')} | {stat('average_exec_per_sec')} | "
      f"{len(os.listdir(corpus))} | {stat('peak_rss_mb')} | {', '.join(found) if found else '0'} |")
PY
)
echo "fuzz: $line"
if [ "${PUBLISH:-}" = 1 ]; then
  /usr/bin/python3 - "$root/docs/reliability.md" "$line" "$(date -u '+%Y-%m-%d %H:%M')" "$(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), $commit" <<'PY'
import sys
doc, line, date, machine = sys.argv[1:5]
text = open(doc).read()
end = "<!-- fuzz:end -->"
if end not in text:
    sys.exit(f"{doc} has no <!-- fuzz:begin --> ... {end} section")
row = "| " + date + " UTC, " + machine + " " + line
text = text.replace(end, row + "\n" + end)
open(doc, "w").write(text)
print(f"fuzz: wrote {doc}")
PY
fi
exit "$status"
