#!/usr/bin/env bash
# Compile time of troupe/openvino.hpp against troupe/troupe.hpp (issue 31's bound: 1.5x), as a
# user's build meets it: g++ -std=c++20, -fsyntax-only (the headers' own cost) and -O2 -c (with
# code generation), RUNS runs of each, alternating, medians.
#   scripts/compile_time.sh [BUILD_DIR]      (BUILD_DIR: where include/troupe/export.hpp was
#                                            generated; default build)
# Pairs: the include alone with an empty main; examples/openvino/hello_classification.cpp and
# the same program in troupe's spelling (benchmarks/compile_time/hello_classification_troupe.cpp).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${RUNS:-7}
cxx=${CXX:-g++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#include <troupe/troupe.hpp>\nint main() { return 0; }\n' >"$work/include_troupe.cpp"
printf '#include <troupe/openvino.hpp>\nint main() { return 0; }\n' >"$work/include_openvino.cpp"
flags=(-std=c++20 -I"$root/include" -I"$build/include")

# median of the seconds `$cxx flags... file` takes, over $runs runs: one line per (mode, file)
time_once() { # mode file
  local start end
  start=$(date +%s.%N)
  if [ "$1" = syntax ]; then "$cxx" "${flags[@]}" -fsyntax-only "$2"; else "$cxx" "${flags[@]}" -O2 -c "$2" -o "$work/out.o"; fi
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "compiler: $($cxx --version | head -n 1); $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg); $runs runs each, medians"
echo "| file | mode | troupe/troupe.hpp | troupe/openvino.hpp | ratio |"
echo "|---|---|---|---|---|"
for pair in "include_troupe.cpp include_openvino.cpp the include alone, empty main" \
            "$root/benchmarks/compile_time/hello_classification_troupe.cpp $root/examples/openvino/hello_classification.cpp hello_classification"; do
  read -r a b label <<<"$pair"
  [ -f "$a" ] || a=$work/$a
  [ -f "$b" ] || b=$work/$b
  for mode in syntax O2; do
    ta=() tb=()
    for ((i = 0; i < runs; ++i)); do
      ta+=("$(time_once "$mode" "$a")")
      tb+=("$(time_once "$mode" "$b")")
    done
    ma=$(printf '%s\n' "${ta[@]}" | median)
    mb=$(printf '%s\n' "${tb[@]}" | median)
    printf '| %s | %s | %.2f s | %.2f s | %.2f |\n' "$label" "$([ "$mode" = syntax ] && echo -fsyntax-only || echo '-O2 -c')" "$ma" "$mb" \
      "$(echo "$mb / $ma" | bc -l)"
  done
done
