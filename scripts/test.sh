#!/usr/bin/env bash
# Installs what is needed, builds, fetches the test data and runs every test through CTest.
# `--sanitize` builds into build-asan with AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
args=()
if [ "${1:-}" = "--sanitize" ]; then
  export BUILD_DIR=$root/build-asan BUILD_TYPE=RelWithDebInfo
  args+=(-DTROUPE_SANITIZE=ON)
  # oneDNN's JIT and OpenMP trip LeakSanitizer's at-exit report with their own caches.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
fi
bash "$root/scripts/install_deps.sh"
bash "$root/scripts/build.sh" "${args[@]}"
bash "$root/scripts/fetch_test_data.sh"
ctest --test-dir "${BUILD_DIR:-$root/build}" --output-on-failure -j "${JOBS:-1}"
