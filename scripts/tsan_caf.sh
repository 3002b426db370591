#!/usr/bin/env bash
# Builds CAF 0.17.6's core library with ThreadSanitizer from Debian's own source package into
# $1 (default build-tsan/caf): Debian ships CAF uninstrumented, and TSan must see CAF's atomics
# and locks to judge the actors' synchronization. Only the upstream tarball of the source
# package is used, checked against the .dsc's SHA-256. Cached: a second run does nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$root/build-tsan/caf}
[ -f "$prefix/lib/libcaf_core.so" ] && exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Debian's source packages come from the same mirror as its binary ones.
if ! apt-cache showsrc libcaf-dev >/dev/null 2>&1 || [ -z "$(apt-cache showsrc libcaf-dev 2>/dev/null)" ]; then
  src_list=/etc/apt/sources.list.d/troupe-deb-src.sources
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$src_list"
  apt-get update -qq
fi
cd "$work"
# The Debian packaging tarball is not needed (and some mirror snapshots lack it).
apt-get source -qq --download-only actor-framework >/dev/null 2>&1 || true
dsc=$(ls actor-framework_0.17.6*.dsc 2>/dev/null | head -n 1)
tarball=actor-framework_0.17.6.orig.tar.gz
if [ -z "$dsc" ] || [ ! -f "$tarball" ]; then
  echo "tsan_caf.sh: could not download Debian's source of actor-framework 0.17.6 (apt-get source)" >&2
  exit 1
fi
want=$(awk '/^Checksums-Sha256:/{f=1;next} f&&/orig.tar.gz/{print $1;exit}' "$dsc")
got=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$want" != "$got" ]; then
  echo "tsan_caf.sh: $tarball: SHA-256 $got, the .dsc says $want" >&2
  exit 1
fi
tar xzf "$tarball"
cmake -S actor-framework-0.17.6 -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCAF_NO_EXAMPLES=yes -DCAF_NO_UNIT_TESTS=yes -DCAF_NO_IO=yes -DCAF_NO_OPENSSL=yes -DCAF_NO_TOOLS=yes \
  -DCAF_NO_PYTHON=yes -DCAF_NO_OPENCL=yes -DCMAKE_CXX_FLAGS="-fsanitize=thread -g" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" >/dev/null
ninja -C build -j "${JOBS:-$(nproc)}" install >/dev/null
echo "tsan_caf.sh: CAF core with ThreadSanitizer in $prefix"
