#!/usr/bin/env bash
# Builds the Debian packages libtroupeN, libtroupe-dev and python3-troupe (cmake/packaging.cmake):
# a Release shared libtroupe in build-deb/ (or $BUILD_DIR), only what the packages hold, then
# cpack -G DEB. Prints the folder the .deb files are in (build-deb/packages). Install them with
#   apt-get install ./build-deb/packages/*.deb
# Extra arguments go to cmake (e.g. -DTROUPE_PYTHON=OFF: no python3-troupe).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-deb}
for tool in dpkg-shlibdeps file; do
  command -v $tool >/dev/null || { echo "package_deb: $tool not found: apt-get install dpkg-dev file (scripts/install_deps.sh)" >&2; exit 1; }
done
# Recompiles hit ccache where it is installed (paths relative to the source: any checkout).
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
fi
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DTROUPE_TESTS=OFF \
      -DCMAKE_INSTALL_PREFIX=/usr -DTROUPE_PACKAGE_DEB=ON "$@" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 1; }
targets=(troupe troupe_cli)
grep -q '^TROUPE_PYTHON:BOOL=ON' "$build/CMakeCache.txt" && targets+=(troupe_python)
nice -n "${NICE:-10}" ninja -C "$build" -j "${JOBS:-$(nproc)}" "${targets[@]}"
rm -rf "$build/packages"
(cd "$build" && cpack -G DEB) >"$build/cpack.log" 2>&1 || { cat "$build/cpack.log" >&2; exit 1; }
ls -l "$build"/packages/*.deb >&2
echo "$build/packages"
