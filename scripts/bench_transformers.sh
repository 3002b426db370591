#!/usr/bin/env bash
# The transformer test models (scripts/make_transformer_models.py) and their dynamically
# quantized versions (scripts/quantize_dynamic.py) on troupe's CPU side by side with
# onnxruntime-node, in one run: per model, at seq 32, at seq 128 and on a stream of varying
# lengths, troupe then onnxruntime, ROUNDS rounds of SECONDS_PER_FIGURE each (the table keeps
# each runtime's best, as scripts/bench.sh).
#
#   latency     median ms, 1 thread each (troupe -hint latency -nthreads 1; onnxruntime's
#               1-thread session): 2-thread medians swing on a loaded 2-core machine
#   throughput  inferences/s, troupe -hint throughput -nstreams 2 -nthreads 1 against
#               onnxruntime's two 1-thread workers
#
# Fixed lengths: both read the token ids (and bert's attention mask) that onnxruntime's
# reference run used (data/ort/<model>_1x<seq>/input_*.i64). The stream: STREAM_LENGTHS (default
# 64 lengths drawn uniformly from 1..128 with a fixed seed) used in turn, as troupe bench's
# -data_shape configurations and onnxruntime's --stream; inputs are the seeded generator's
# (integer inputs 0) in both: the work does not depend on the token values. troupe compiles
# each new length when it first comes (docs/cli.md), inside the measurement: STREAM_SECONDS
# (default SECONDS_PER_FIGURE) sets how long the stream runs.
#
# TROUPE_FLAGS adds flags to every troupe bench run: TROUPE_FLAGS='-infer_precision bf16' compares
# troupe in bf16 (on a CPU with bf16: AVX-512 BF16 or AMX) with onnxruntime in f32, as issue 29's
# bf16 goal does.
#
# Usage: scripts/bench_transformers.sh [bert_tiny bert_tiny_int8 lm_tiny lm_tiny_int8 ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
troupe=${TROUPE:-$root/build/bin/troupe}
[ -x "$troupe" ] || bash "$root/scripts/build.sh" >/dev/null
bash "$root/scripts/fetch_test_data.sh"
models_dir=$root/data/models
seconds=${SECONDS_PER_FIGURE:-5}
stream_seconds=${STREAM_SECONDS:-$seconds}
rounds=${ROUNDS:-2}
out=$root/build/bench_transformers
mkdir -p "$out"
lines=$out/lines.tsv
: > "$lines"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(bert_tiny bert_tiny_int8 lm_tiny lm_tiny_int8)
for m in "${models[@]}"; do
  [ -f "$models_dir/$m.onnx" ] || { echo "bench_transformers: no model $models_dir/$m.onnx" >&2; exit 2; }
done
stream=${STREAM_LENGTHS:-$(/usr/bin/python3 -c 'import random; r = random.Random(20261127); print(",".join(str(r.randint(1, 128)) for _ in range(64)))')}

inputs_of() { # model: its input names
  case $1 in bert_tiny*) echo input_ids attention_mask ;; *) echo input_ids ;; esac
}

troupe_figures() { # model case, then troupe bench flags; prints "latency throughput"
  local m=$1 c=$2 lat tput sync=() t=$seconds
  shift 2
  # Several -data_shape shapes need the async API: one request in flight is the sync loop.
  [ "$c" = stream ] && sync=(-api async -nireq 1) t=$stream_seconds
  read -r -a extra <<< "${TROUPE_FLAGS:-}"
  set -- "$@" "${extra[@]}"
  lat=$("$troupe" bench -m "$models_dir/$m.onnx" "$@" -hint latency "${sync[@]}" -nthreads 1 -t "$t" 2>&1 |
    tee "$out/${m}_${c}_latency.log" | sed -n 's/.*Median: *\([0-9.]*\) ms.*/\1/p' | head -1)
  tput=$("$troupe" bench -m "$models_dir/$m.onnx" "$@" -hint throughput -nstreams 2 -nthreads 1 -t "$t" 2>&1 |
    tee "$out/${m}_${c}_throughput.log" | sed -n 's/.*Throughput: *\([0-9.]*\) FPS.*/\1/p' | head -1)
  echo "${lat:--} ${tput:--}"
}

ort_figures() { # model case, then ort_reference.js bench flags
  local m=$1 c=$2 t=$seconds
  shift 2
  [ "$c" = stream ] && t=$stream_seconds
  node "$root/scripts/reference/ort_reference.js" bench "$models_dir/$m.onnx" --seconds "$t" "$@" > "$out/${m}_${c}_ort.json"
  /usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(next(l for l in r["latency"] if l["threads"] == 1)["median_ms"], r["throughput"]["per_s"])' "$out/${m}_${c}_ort.json"
}

echo "# $(date -u '+%F %H:%M') UTC, $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg),$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "# stream lengths: $stream"
[ -z "${TROUPE_FLAGS:-}" ] || echo "# troupe bench flags: $TROUPE_FLAGS"
for r in $(seq "$rounds"); do
  for m in "${models[@]}"; do
    names=$(inputs_of "$m")
    for seq in 32 128; do
      ref=$root/data/ort/${m}_1x$seq
      shape= files=()
      for n in $names; do
        shape=${shape:+$shape,}$n[1,$seq]
        files+=("$n:$ref/input_$n.i64")
      done
      echo "=== round $r: $m seq $seq" >&2
      printf '%s\t%s\ttroupe\t%s\n' "$m" "$seq" "$(troupe_figures "$m" "$seq" -shape "$shape" -i "${files[@]}")" >> "$lines"
      fill=$(grep -o 'filled: [^"]*' "$ref/meta.json" | sed 's/filled: //' || true)
      printf '%s\t%s\tonnxruntime\t%s\n' "$m" "$seq" "$(ort_figures "$m" "$seq" --shape "1x$seq" ${fill:+--fill "$fill"})" >> "$lines"
    done
    echo "=== round $r: $m stream" >&2
    data_shape= ort_stream=
    for n in $names; do
      configs=
      for l in ${stream//,/ }; do configs+="[1,$l]"; done
      data_shape=${data_shape:+$data_shape,}$n$configs
    done
    for l in ${stream//,/ }; do ort_stream=${ort_stream:+$ort_stream;}1x$l; done
    printf '%s\tstream\ttroupe\t%s\n' "$m" "$(troupe_figures "$m" stream -data_shape "$data_shape")" >> "$lines"
    printf '%s\tstream\tonnxruntime\t%s\n' "$m" "$(ort_figures "$m" stream --stream "$ort_stream")" >> "$lines"
  done
done

/usr/bin/python3 - "$lines" <<'EOF'
import sys
best = {}
for line in open(sys.argv[1]):
    m, case, runtime, figures = line.rstrip("\n").split("\t")
    lat, tput = figures.split()
    key = (m, case, runtime)
    old = best.get(key, (None, None))
    lat = float(lat) if lat != "-" else None
    tput = float(tput) if tput != "-" else None
    best[key] = (min(x for x in (old[0], lat) if x is not None) if (old[0] or lat) else None,
                 max(x for x in (old[1], tput) if x is not None) if (old[1] or tput) else None)
fmt = "| {:<15} | {:<6} | {:>10} | {:>10} | {:>6} | {:>10} | {:>10} | {:>6} |"
print(fmt.format("model", "seq", "troupe ms", "ort ms", "ort/tr", "troupe /s", "ort /s", "tr/ort"))
print("|" + "|".join("-" * w for w in (17, 8, 12, 12, 8, 12, 12, 8)) + "|")
seen = []
for (m, case, _) in best:
    if (m, case) not in seen:
        seen.append((m, case))
f = lambda x, d=2: "-" if x is None else f"{x:.{d}f}"
for m, case in seen:
    tl, tt = best.get((m, case, "troupe"), (None, None))
    ol, ot = best.get((m, case, "onnxruntime"), (None, None))
    print(fmt.format(m, case, f(tl), f(ol), f(ol / tl) if tl and ol else "-", f(tt, 1), f(ot, 1),
                     f(tt / ot) if tt and ot else "-"))
EOF
