#!/usr/bin/env bash
# Rewrites the generated sections of docs/*.md (properties per device, supported ops per device)
# from the code's own tables: builds troupe_docgen into build/ (or $BUILD_DIR), then runs it.
# The docs_up_to_date test fails until this has run after a change to those tables.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
[ -f "$build/build.ninja" ] || cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release}
cmake --build "$build" --target troupe_docgen -j "${JOBS:-$(nproc)}"
"$build/bin/troupe_docgen" update "$root/docs"
