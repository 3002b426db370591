#!/usr/bin/env bash
# Soak: MINUTES (default 60) of async requests on MULTI over the GPU, the CPU and two
# `troupe worker` processes on loopback, and on HETERO:GPU,CPU, while a worker is killed and
# restarted, another stalled, priorities rotate and bad inputs are mixed in
# (benchmarks/soak.cpp); then many short GPU and HETERO:GPU,CPU processes, two at a time, none
# of which may die. Without a GPU it runs on lavapipe, as CI does.
#
#   scripts/soak.sh [MINUTES]       prints the tables; build/soak/soak-DATE.md keeps them
#   PUBLISH=1 scripts/soak.sh 60    also writes them into docs/reliability.md's soak section
#
# KILL_EVERY (seconds, default 20), FAIL_EVERY (the local CPU's injected failures, every 40th run;
# 0: none), IN_FLIGHT (6), LINK_DELAY_MS and LINK_LOSS (worker 2's link: 5 ms each way, 1 % of
# chunks a 200-ms retransmission late; a proxy in the client, as tc netem would on a veth pair),
# SHORT_RUNS (processes, default 20 a minute
# of soak, at most 1000), CONFORMANCE_PASSES (full passes over the ONNX test models on GPU and
# HETERO:GPU,CPU; default 1 for runs of 30 minutes or more, else 0), BUILD_DIR (default build),
# SANITIZE=1 (the ASan/UBSan build, build-asan).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
minutes=${1:-60}
build=${BUILD_DIR:-$root/build}
args=()
if [ "${SANITIZE:-}" = 1 ]; then
  build=$root/build-asan args=(--sanitize)
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
fi
[ -x "$build/bin/troupe_soak" ] && [ -x "$build/bin/troupe" ] || BUILD_DIR=$build bash "$root/scripts/build.sh" "${args[@]}" >/dev/null
bash "$root/scripts/fetch_test_data.sh" >/dev/null
if ! "$build/bin/troupe" devices 2>/dev/null | grep -q '^GPU'; then
  icd=$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json | head -n 1)
  export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
fi
out=$build/soak
mkdir -p "$out"
report=$out/soak-$(date -u +%Y-%m-%dT%H%M).md
{
  echo "### $(date -u '+%Y-%m-%d %H:%M UTC'), ${minutes} minutes, $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), GPU: $("$build/bin/troupe" devices 2>/dev/null | grep -m1 '^GPU' || echo none)"
  echo
} >"$report"
status=0
"$build/bin/troupe_soak" -models "$root/data/models" -minutes "$minutes" -kill-every "${KILL_EVERY:-20}" \
  -fail-every "${FAIL_EVERY:-40}" -in-flight "${IN_FLIGHT:-6}" -link-delay-ms "${LINK_DELAY_MS:-5}" \
  -link-loss "${LINK_LOSS:-1}" | tee -a "$report" || status=1

# Short processes: each compiles, runs one request and exits at once (the exit race of issue 32).
runs=${SHORT_RUNS:-$(awk -v m="$minutes" 'BEGIN { r = int(m * 20); print (r > 1000 ? 1000 : r) }')}
model=$root/data/models/ch_ppocr_mobile_v2.0_cls_infer.onnx
crashed=0 failed=0
one_run() { # device index
  local dev=GPU log
  [ $(($1 % 2)) = 1 ] && dev=HETERO:GPU,CPU
  log=$(mktemp -d)
  "$build/bin/troupe" run -m "$model" -d "$dev" -shape "x[1,3,48,192]" -o "$log" >"$log/log" 2>&1
  local rc=$?
  [ $rc = 0 ] || echo "rc $rc $dev: $(tail -n 1 "$log/log")"
  rm -rf "$log"
}
export -f one_run
export build model
results=$(seq 1 "$runs" | xargs -P 2 -I{} bash -c 'one_run {}' || true)
failed=$(awk '$1 == "rc"' <<<"$results" | wc -l)
crashed=$(awk '$1 == "rc" && $2 > 128' <<<"$results" | wc -l) # 128 + the signal's number
{
  echo
  echo "| short processes (cls, GPU and HETERO:GPU,CPU, two at a time) | runs | exited non-zero | died of a signal |"
  echo "|---|---|---|---|"
  echo "| | $runs | $failed | $crashed |"
} | tee -a "$report"
[ -n "$results" ] && echo "$results" | head -n 5
[ "$failed" = 0 ] || status=1

# Full conformance passes: every model of the ONNX test data (1072) on GPU and on
# HETERO:GPU,CPU, two processes at a time, with random inputs: where issue 32's exit-time crash
# showed first (1 to 3 cases a pass, a different one each time). A model troupe refuses exits
# non-zero with its error (counted, not a failure); a process killed by a signal, or one still
# running after 120 s, fails the soak.
passes=${CONFORMANCE_PASSES:-$([ "$minutes" -ge 30 ] && echo 1 || echo 0)}
testdata=/usr/share/libonnx-testdata/data
if [ "$passes" -gt 0 ] && [ -d "$testdata" ]; then
  conf_run() { # device model
    local out rc
    out=$(mktemp -d)
    timeout 120 "$build/bin/troupe" run -m "$2" -d "$1" -o "$out" >"$out/log" 2>&1
    rc=$?
    [ $rc = 0 ] || echo "rc $rc $1 $2: $(tail -n 1 "$out/log")"
    rm -rf "$out"
  }
  export -f conf_run
  export build
  cases=$(find "$testdata" -name model.onnx | sort)
  {
    echo
    echo "| conformance pass (troupe run of each ONNX test model, two at a time) | device | runs | exited non-zero | timed out (120 s) | died of a signal |"
    echo "|---|---|---|---|---|---|"
  } | tee -a "$report"
  for pass in $(seq 1 "$passes"); do
    for dev in GPU HETERO:GPU,CPU; do
      results=$(echo "$cases" | xargs -P 2 -I{} bash -c 'conf_run "$0" "$1"' "$dev" {} || true)
      nonzero=$(awk '$1 == "rc"' <<<"$results" | wc -l)
      hung=$(awk '$1 == "rc" && $2 == 124' <<<"$results" | wc -l)
      killed=$(awk '$1 == "rc" && $2 > 128' <<<"$results" | wc -l)
      echo "| $pass | $dev | $(wc -l <<<"$cases") | $nonzero | $hung | $killed |" | tee -a "$report"
      awk '$1 == "rc" && ($2 == 124 || $2 > 128)' <<<"$results" | head -n 5
      [ "$hung" = 0 ] && [ "$killed" = 0 ] || status=1
    done
  done
fi

if [ "${PUBLISH:-}" = 1 ]; then
  /usr/bin/python3 - "$root/docs/reliability.md" "$report" <<'PY'
import sys
doc, report = sys.argv[1], open(sys.argv[2]).read()
text = open(doc).read()
begin, end = "<!-- soak:begin -->", "<!-- soak:end -->"
if begin not in text or end not in text:
    sys.exit(f"{doc} has no {begin} ... {end} section")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(doc, "w").write(head + begin + "\n" + report.rstrip() + "\n" + end + tail)
print(f"soak: wrote {doc}")
PY
fi
echo "soak: $report"
exit $status
