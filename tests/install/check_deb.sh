#!/usr/bin/env bash
# The Debian packages as a user installs them: a fresh Debian 12 (a minbase debootstrap chroot),
# `apt-get install ./*.deb` in it from Debian's mirror (which must resolve every dependency),
# then, inside the chroot: the `troupe` command, examples/first_program compiled against
# libtroupe-dev with pkg-config and with CMake and run on PP-OCR's cls model (its output compared
# with onnxruntime's), `import troupe` and first_program.py.
#   check_deb.sh [DEB_DIR [SOURCE_DIR [DATA_DIR]]]
#     DEB_DIR     the packages (scripts/package_deb.sh's output; default build-deb/packages)
#     DATA_DIR    the test data (scripts/fetch_test_data.sh; default data/)
# Needs root (chroot, mount), debootstrap and Debian's mirror ($MIRROR, default deb.debian.org).
# TROUPE_DEB_BASE=<folder>: copy that minbase bookworm root instead of running debootstrap (it is
# left untouched). The scratch root is under $WORK (default /var/tmp/troupe-check-deb), removed
# at the end unless KEEP=1. Not a CTest test: it downloads ~150 MB and takes minutes.
set -euo pipefail
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
debs=$(cd "${1:-$src/build-deb/packages}" && pwd)
data=${3:-$src/data}
mirror=${MIRROR:-http://deb.debian.org/debian}
work=${WORK:-/var/tmp/troupe-check-deb}
root=$work/root

fail() { echo "check_deb: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (chroot)"
ls "$debs"/*.deb >/dev/null 2>&1 || fail "no .deb files in $debs: run scripts/package_deb.sh"
model=$data/models/ch_ppocr_mobile_v2.0_cls_infer.onnx
ref=$data/ort/ch_ppocr_mobile_v2.0_cls_infer_1x3x48x192
[ -f "$model" ] && [ -f "$ref/meta.json" ] || fail "missing $model or $ref/meta.json: run scripts/fetch_test_data.sh"

unmount() { if mountpoint -q "$root/proc"; then umount "$root/proc"; fi; }
cleanup() {
  unmount
  if [ "${KEEP:-}" != 1 ] && ! mountpoint -q "$root/proc"; then rm -rf "$root"; fi
}
unmount
rm -rf "$root"
mkdir -p "$work"
trap cleanup EXIT

if [ -n "${TROUPE_DEB_BASE:-}" ]; then
  cp -a "$TROUPE_DEB_BASE" "$root"
else
  command -v debootstrap >/dev/null || fail "debootstrap not found (apt-get install debootstrap)"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log"; fail "debootstrap failed"; }
fi
mount -t proc proc "$root/proc"
cp /etc/resolv.conf "$root/etc/resolv.conf"
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s-security bookworm-security main\n' \
  "$mirror" "$mirror" "$mirror" >"$root/etc/apt/sources.list"
rm -rf "$root/root/check"
mkdir -p "$root/root/check/debs" "$root/root/check/ref"
cp "$debs"/*.deb "$root/root/check/debs/"
cp "$model" "$root/root/check/"
cp "$ref"/* "$root/root/check/ref/"
cp "$src/examples/first_program/main.cpp" "$src/examples/first_program/CMakeLists.txt" \
   "$src/examples/first_program/first_program.py" "$root/root/check/"

in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
in_root apt-get update -q >"$work/apt-update.log" 2>&1 || { cat "$work/apt-update.log"; fail "apt-get update failed"; }
# What the README tells a user (apt-get install ./*.deb): it must find every dependency.
(cd "$root/root/check/debs" && ls *.deb)
in_root sh -c 'cd /root/check/debs && apt-get install -y -q ./*.deb' >"$work/apt-install.log" 2>&1 ||
  { tail -n 30 "$work/apt-install.log"; fail "apt-get install ./*.deb failed"; }
grep -E '^([0-9]+ upgraded|Need to get)' "$work/apt-install.log" || true
in_root dpkg-query -W -f '${Package} ${Version} ${Status}\n' 'libtroupe*' python3-troupe

in_root troupe devices || fail "the installed troupe command does not run"
devices=$(in_root python3 -c 'import troupe; print(troupe.Core().available_devices)') ||
  fail "python3 -c 'import troupe' failed"
echo "python3: troupe.Core().available_devices = $devices"
grep -q CPU <<<"$devices" || fail "no CPU device: $devices"

compare() { # the program's line against onnxruntime's output (python3 is in the root now)
  in_root python3 - "$1" <<'EOF'
import json, re, struct, sys
line = sys.argv[1]
meta = json.load(open("/root/check/ref/meta.json"))
expected = struct.unpack("<2f", open("/root/check/ref/" + meta["outputs"][0]["file"], "rb").read()[:8])
got = [float(x) for x in re.findall(r"degrees ([-0-9.e]+)", line)]
if len(got) != 2 or max(abs(a - b) for a, b in zip(got, expected)) > 1e-5:
    sys.exit(f"first_program printed {got}, onnxruntime {list(expected)}")
print(f"  = onnxruntime {list(expected)} within 1e-5")
EOF
}
args="/root/check/ch_ppocr_mobile_v2.0_cls_infer.onnx /root/check/ref/input_x.f32 CPU"

out=$(in_root sh -c "cd /root/check && python3 first_program.py $args") || fail "first_program.py failed"
echo "first_program.py: $out"; compare "$out"

# A compiler and build tools, as a developer has them (not dependencies of libtroupe-dev).
in_root apt-get install -y -q --no-install-recommends g++ pkg-config cmake make >"$work/apt-tools.log" 2>&1 ||
  { tail -n 30 "$work/apt-tools.log"; fail "installing g++ pkg-config cmake make failed"; }
in_root sh -c 'cd /root/check && g++ -O1 main.cpp -o first_program_pc $(pkg-config --cflags --libs troupe)' ||
  fail "g++ main.cpp \$(pkg-config --cflags --libs troupe) failed"
out=$(in_root /root/check/first_program_pc $args) || fail "first_program (pkg-config) failed"
echo "first_program (pkg-config): $out"; compare "$out"
in_root sh -c 'cd /root/check && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >cmake.log && cmake --build build >>cmake.log' ||
  { cat "$root/root/check/cmake.log"; fail "first_program with find_package(troupe) failed to build"; }
out=$(in_root /root/check/build/first_program $args) || fail "first_program (CMake) failed"
echo "first_program (CMake): $out"; compare "$out"
echo "check_deb: passed"
