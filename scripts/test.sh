#!/usr/bin/env bash
# Installs what is needed, builds, fetches the test data and runs every test through CTest.
# `--sanitize` builds into build-asan with AddressSanitizer + UndefinedBehaviorSanitizer.
# `--tsan` builds into build-tsan with ThreadSanitizer, against a CAF built with it from
# Debian's source (scripts/tsan_caf.sh), and runs the tests of the actors and of what drives
# them (actors, scheduler, runtime, HETERO, MULTI); scripts/tsan.supp names what is not
# instrumented.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
args=()
only=()
bash "$root/scripts/install_deps.sh"
if [ "${1:-}" = "--sanitize" ]; then
  export BUILD_DIR=$root/build-asan BUILD_TYPE=RelWithDebInfo
  args+=(-DTROUPE_SANITIZE=ON)
  # oneDNN's JIT and OpenMP trip LeakSanitizer's at-exit report with their own caches.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
elif [ "${1:-}" = "--tsan" ]; then
  export BUILD_DIR=$root/build-tsan BUILD_TYPE=RelWithDebInfo
  caf=$root/build-tsan/caf
  bash "$root/scripts/tsan_caf.sh" "$caf"
  args+=(-DTROUPE_TSAN=ON -DCAF_INCLUDE_DIR="$caf/include" -DCAF_CORE_LIBRARY="$caf/lib/libcaf_core.so")
  export LD_LIBRARY_PATH=$caf/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # detect_deadlocks=0: lavapipe locks and unlocks its mutexes on different threads, which
  # breaks ThreadSanitizer's lock-order bookkeeping (a CHECK failure in its deadlock detector).
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1 detect_deadlocks=0 suppressions=$root/scripts/tsan.supp}
  # libgomp is not instrumented: one thread per OpenMP team keeps its barriers out of the report.
  export OMP_THREAD_LIMIT=1
  # The 100-split HETERO cases repeat what the other HETERO cases check, at 10x the time.
  only=(-R '^(actors_tests|scheduler_tests|runtime_tests|hetero_tests|multi_tests|embedding_tests|remote_tests|remote_tls_tests)(/|$)' -E 'random_splits')
fi
bash "$root/scripts/build.sh" "${args[@]}"
bash "$root/scripts/fetch_test_data.sh"

# CI has no GPU: two copies of lavapipe's ICD file are two Vulkan devices, GPU.0 and GPU.1
# (the same file named twice would collapse to one). A missing GPU then fails the GPU tests.
build=${BUILD_DIR:-$root/build}
icd=$(ls /usr/share/vulkan/icd.d/lvp_icd."$(uname -m)".json 2>/dev/null || ls /usr/share/vulkan/icd.d/lvp_icd.*.json | head -n 1)
mkdir -p "$build/icd"
cp "$icd" "$build/icd/lvp0.json"
cp "$icd" "$build/icd/lvp1.json"
export VK_DRIVER_FILES=$build/icd/lvp0.json:$build/icd/lvp1.json
export VK_ICD_FILENAMES=$VK_DRIVER_FILES # loaders older than 1.3.207
export TROUPE_REQUIRE_GPU=1
ctest --test-dir "$build" --output-on-failure -j "${JOBS:-1}" "${only[@]}"
# Every libFuzzer target (the ONNX, IR and .npy readers, a worker's node protocol, troupe_ocr's PNG/JPEG reader) for
# FUZZ_SECONDS each (default 60; 0 skips), from their seeds, two at a time on the two cores:
# a crash, a hang or a sanitizer report fails the run. Built with clang in build-fuzz.
if [ ${#args[@]} -eq 0 ] && [ "${FUZZ_SECONDS:-60}" != 0 ]; then
  bash "$root/scripts/fuzz.sh" build
  fuzz_failed=0
  for pair in "onnx ir" "npy node" "image"; do
    pids=()
    for target in $pair; do
      FUZZ_QUIET=1 FUZZ_PREBUILT=1 bash "$root/scripts/fuzz.sh" "$target" "${FUZZ_SECONDS:-60}" &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || fuzz_failed=1; done
  done
  [ "$fuzz_failed" = 0 ] || { echo "test.sh: a fuzz target found something (fuzz/crashes/)" >&2; exit 1; }
fi
