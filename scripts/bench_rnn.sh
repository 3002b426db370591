#!/usr/bin/env bash
# Recurrent layers (scripts/make_rnn_models.py: a CRNN-sized bidirectional LSTM, a GRU and an
# RNN, 80 steps of 256 units) on troupe's CPU side by side with onnxruntime-node, in one run:
# per model, troupe then onnxruntime, ROUNDS rounds of SECONDS_PER_FIGURE each; each runtime's
# best is printed.
#   latency     median ms with 2 threads (troupe -hint latency; onnxruntime's 2-thread session)
#   throughput  inferences/s, troupe -hint throughput -nstreams 2 -nthreads 1 against
#               onnxruntime's two 1-thread workers
# Usage: scripts/bench_rnn.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
troupe=${TROUPE:-$root/build/bin/troupe}
[ -x "$troupe" ] || bash "$root/scripts/build.sh" >/dev/null
bash "$root/scripts/fetch_test_data.sh" >/dev/null
seconds=${SECONDS_PER_FIGURE:-5}
rounds=${ROUNDS:-2}
out=$root/build/bench_rnn
mkdir -p "$out"
/usr/bin/python3 "$root/scripts/make_rnn_models.py" "$out" >/dev/null
best() { sort -g | awk -v hi="$1" 'NR == 1 { lo = $1 } { last = $1 } END { print (hi ? last : lo) }'; }
printf '%-20s %12s %12s %14s %14s\n' model "troupe ms" "ort ms" "troupe inf/s" "ort inf/s"
for m in lstm_bidirectional gru_forward rnn_forward; do
  : > "$out/$m.lat" && : > "$out/$m.tput" && : > "$out/$m.ort_lat" && : > "$out/$m.ort_tput"
  for _ in $(seq "$rounds"); do
    "$troupe" bench -m "$out/$m.onnx" -d CPU -hint latency -t "$seconds" 2>&1 |
      sed -n 's/.*Median: *\([0-9.]*\) ms.*/\1/p' | head -1 >> "$out/$m.lat"
    "$troupe" bench -m "$out/$m.onnx" -d CPU -hint throughput -nstreams 2 -nthreads 1 -t "$seconds" 2>&1 |
      sed -n 's/.*Throughput: *\([0-9.]*\) FPS.*/\1/p' | head -1 >> "$out/$m.tput"
    node "$root/scripts/reference/ort_reference.js" bench "$out/$m.onnx" --seconds "$seconds" > "$out/${m}_ort.json"
    /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["latency"][1]["median_ms"]); print(d["throughput"]["per_s"], file=sys.stderr)' \
      "$out/${m}_ort.json" >> "$out/$m.ort_lat" 2>> "$out/$m.ort_tput"
  done
  printf '%-20s %12s %12s %14s %14s\n' "$m" "$(best 0 < "$out/$m.lat")" "$(best 0 < "$out/$m.ort_lat")" \
    "$(best 1 < "$out/$m.tput")" "$(best 1 < "$out/$m.ort_tput")"
done
