#!/usr/bin/env bash
# The installed package as a user meets it: installs troupe into a scratch prefix, builds
# examples/first_program against it with find_package(troupe) and with pkg-config, runs both on
# PP-OCR's cls model with onnxruntime's seeded input and compares with onnxruntime's output.
#   check_install.sh static BUILD_DIR SOURCE_DIR DATA_DIR   (installs the tests' own build)
#   check_install.sh shared BUILD_DIR SOURCE_DIR DATA_DIR   (configures and links a shared
#                                                            libtroupe under BUILD_DIR first,
#                                                            from BUILD_DIR's objects)
# Exit 77 (CTest: skipped) only when the data is missing and TROUPE_TESTS_OFFLINE=1 says so.
set -euo pipefail
mode=$1 build=$2 src=$3 data=$4
case $mode in static|shared) ;; *) echo "check_install: mode must be static or shared, got '$mode'" >&2; exit 2 ;; esac

model=$data/models/ch_ppocr_mobile_v2.0_cls_infer.onnx
ref=$data/ort/ch_ppocr_mobile_v2.0_cls_infer_1x3x48x192
if [ ! -f "$model" ] || [ ! -f "$ref/meta.json" ]; then
  if [ "${TROUPE_TESTS_OFFLINE:-}" = 1 ]; then
    echo "skipped install_$mode: TROUPE_TESTS_OFFLINE=1 and $model or $ref/meta.json is missing"
    exit 77
  fi
  echo "check_install: missing $model or $ref/meta.json: run scripts/fetch_test_data.sh" >&2
  exit 1
fi

work=$build/install-check-$mode
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
if [ "$mode" = shared ]; then
  # Every file is compiled alike for a static and a shared libtroupe: this build links the static
  # build's internal layers and the objects of runtime/, the command-line tool and the Python
  # extension (TROUPE_LAYERS_FROM, cmake/reused_objects.cmake), so it checks the linking: the
  # version script's exports suffice for the tool and the extension.
  # A sanitizer build's layers need its runtime: that one builds a plain shared libtroupe whole.
  build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
  reuse=(-DTROUPE_LAYERS_FROM="$build")
  grep -qE '^TROUPE_(SANITIZE|TSAN):BOOL=ON' "$build/CMakeCache.txt" && reuse=() build_type=Release
  cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE="${build_type:-Release}" -DBUILD_SHARED_LIBS=ON \
        "${reuse[@]}" >"$work/configure.log"
  # The command-line tool too: it links the public API alone, so a shared build proves the exports.
  # And the Python package where it is built (TROUPE_PYTHON): its extension links the shared library.
  targets=(troupe troupe_cli)
  grep -q '^TROUPE_PYTHON:BOOL=ON' "$work/build/CMakeCache.txt" && targets+=(troupe_python)
  ninja -C "$work/build" "${targets[@]}" >"$work/build.log" || { tail -n 30 "$work/build.log"; exit 1; }
  cmake --install "$work/build" --prefix "$prefix" >/dev/null
else
  cmake --install "$build" --prefix "$prefix" >/dev/null
fi
libdir=$(cd "$prefix" && ls -d lib*/cmake/troupe | head -n 1 | cut -d/ -f1)

fail() { echo "check_install ($mode): $*" >&2; exit 1; }

[ -x "$prefix/bin/troupe" ] || fail "bin/troupe not installed"
"$prefix/bin/troupe" devices >/dev/null || fail "the installed bin/troupe does not run"
# Only the public headers are installed.
extra=$(cd "$prefix/include" && find . -type f ! -path './troupe/*.hpp')
[ -z "$extra" ] || fail "headers outside include/troupe/: $extra"
for h in troupe.hpp version.hpp export.hpp core.hpp; do
  [ -f "$prefix/include/troupe/$h" ] || fail "include/troupe/$h not installed"
done
# Every installed header compiles on its own, and only troupe/caf.hpp (the opt-in CAF embedding)
# needs CAF: every other header compiles with a caf/ folder in front of CAF's whose every header
# is an #error. The headers are the same in both installs: checked once, in the static one, a
# compiler per core (CI's 2-core machine spent ~80 s here when both modes checked them in turn).
if [ "$mode" = static ]; then
  for f in caf/all.hpp $(cd /usr/include 2>/dev/null && find caf -name '*.hpp'); do
    mkdir -p "$(dirname "$work/no-caf/$f")"
    echo '#error "this header needs CAF; only troupe/caf.hpp may"' >"$work/no-caf/$f"
  done
  check_header() { # header file name; prints what fails
    local h=$1
    echo "#include <troupe/$h>" | g++ -std=c++20 -fsyntax-only -I"$prefix/include" -x c++ - 2>&1 ||
      { echo "FAIL: include/troupe/$h does not compile on its own"; return 0; }
    [ "$h" = caf.hpp ] && return 0
    echo "#include <troupe/$h>" | g++ -std=c++20 -fsyntax-only -I"$work/no-caf" -I"$prefix/include" -x c++ - 2>&1 ||
      echo "FAIL: include/troupe/$h needs CAF (only troupe/caf.hpp may)"
  }
  export -f check_header
  export prefix work
  failed=$(cd "$prefix/include/troupe" && ls -- *.hpp | xargs -P "$(nproc)" -I{} bash -c 'check_header "$1"' _ {})
  if grep -q '^FAIL' <<<"$failed"; then
    echo "$failed" >&2
    fail "$(grep '^FAIL' <<<"$failed" | head -n 3 | sed 's/^FAIL: //')"
  fi
fi

if [ "$mode" = shared ]; then
  so=$prefix/$libdir/libtroupe.so
  [ -f "$so" ] || fail "no $so"
  [ ! -e "$prefix/$libdir/troupe" ] || fail "a shared install holds the internal archives ($prefix/$libdir/troupe)"
  # The shared library exports the public API and nothing else: no internal layer, no CAF, no oneDNN.
  exported=$(nm -D -C --defined-only "$so" | awk '{ $1 = ""; $2 = ""; print }')
  # troupe/caf.hpp's functions take CAF types (troupe::make_core(caf::actor_system&)); no symbol of
  # CAF's own may be exported ("caf::..." or "typeinfo for caf::...").
  leaked=$(echo "$exported" | grep -E 'troupe::(graph|kernels|actors|cli|detail)|::Impl\b|(^|[[:space:]])caf::|dnnl|onnx::|google::protobuf' | head -n 5 || true)
  [ -z "$leaked" ] || fail "libtroupe.so exports internals, e.g.: $leaked"
  echo "$exported" | grep -q 'troupe::Core::compile_model' || fail "libtroupe.so does not export troupe::Core::compile_model"
  echo "$exported" | grep -q 'troupe::spawn_model_actor' || fail "libtroupe.so does not export troupe::spawn_model_actor (troupe/caf.hpp)"
  echo "libtroupe.so exports $(echo "$exported" | grep -c 'troupe::') troupe:: symbols, no internals"
fi

compare() { # program output line, e.g. "troupe 0.1.0, CPU: 0 degrees 0.912345, 180 degrees 0.087655"
  /usr/bin/python3 - "$1" "$ref" <<'EOF'
import json, os, re, struct, sys
line, ref = sys.argv[1], sys.argv[2]
meta = json.load(open(os.path.join(ref, "meta.json")))
raw = open(os.path.join(ref, meta["outputs"][0]["file"]), "rb").read()
expected = struct.unpack("<2f", raw[:8])
got = [float(x) for x in re.findall(r"degrees ([-0-9.e]+)", line)]
if len(got) != 2 or max(abs(a - b) for a, b in zip(got, expected)) > 1e-5:
    sys.exit(f"first_program printed {got}, onnxruntime {list(expected)}")
print(f"first_program {got} = onnxruntime {list(expected)} within 1e-5")
EOF
}

# The README's first program is this program, as written (it is compiled and run below).
for page in "$src/README.md" "$src/docs/getting-started.md"; do
  /usr/bin/python3 - "$page" "$src/examples/first_program/main.cpp" <<'EOF' || fail "the first program of $page is not examples/first_program/main.cpp"
import sys
page, program = open(sys.argv[1]).read(), open(sys.argv[2]).read()
section = page[page.index("## A first program"):]
block = section[section.index("```cpp\n") + 7:]
sys.exit(0 if block[:block.index("```")] == program else 1)
EOF
done

# find_package(troupe CONFIG REQUIRED) + troupe::troupe, exactly as examples/first_program has it.
cmake -S "$src/examples/first_program" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/consumer-configure.log" || { cat "$work/consumer-configure.log"; fail "consumer configure failed"; }
ninja -C "$work/consumer" >"$work/consumer-build.log" || { cat "$work/consumer-build.log"; fail "consumer build failed"; }
out=$("$work/consumer/first_program" "$model" "$ref/input_x.f32" CPU)
echo "$out"
grep -q "^troupe $(sed -n 's/^project(troupe VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")," <<<"$out" ||
  fail "troupe::version() does not print the project version: $out"
compare "$out"

# OpenVINO's samples on troupe/openvino.hpp (examples/openvino), built against the package as a
# port from OpenVINO would be. hello_classification runs and prints what the build tree's copy
# prints; in the shared install (what the .deb packages hold) every sample is built and
# openvino_examples_tests runs them all (CPU; GPU, HETERO, MULTI and AUTO where a GPU is), each
# against troupe's native API.
cmake -S "$src/examples/openvino" -B "$work/ov-consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/ov-configure.log" || { cat "$work/ov-configure.log"; fail "examples/openvino configure failed"; }
ov_targets=(ov_hello_classification)
[ "$mode" = shared ] && ov_targets=(all)
ninja -C "$work/ov-consumer" "${ov_targets[@]}" >"$work/ov-build.log" ||
  { cat "$work/ov-build.log"; fail "examples/openvino does not build against the package"; }
ov_out=$("$work/ov-consumer/ov_hello_classification" "$model" CPU | grep '^result:') ||
  fail "ov_hello_classification against the package failed"
if [ -x "$build/bin/ov_hello_classification" ]; then
  [ "$ov_out" = "$("$build/bin/ov_hello_classification" "$model" CPU | grep '^result:')" ] ||
    fail "ov_hello_classification against the package printed '$ov_out', the build tree's copy differs"
fi
echo "ov_hello_classification (installed package): $ov_out"
if [ "$mode" = shared ]; then
  samples=$(cd "$work/ov-consumer" && ls ov_* | tr '\n' ' ')
  [ "$(echo "$samples" | wc -w)" -eq "$(ls "$src"/examples/openvino/*.cpp | wc -l)" ] ||
    fail "not every sample of examples/openvino was built: $samples"
  # The samples must use the package's libtroupe.so, not one from the build tree.
  ldd "$work/ov-consumer/ov_hello_classification" | grep -q "$prefix/$libdir/libtroupe.so" ||
    fail "ov_hello_classification does not load $prefix/$libdir/libtroupe.so: $(ldd "$work/ov-consumer/ov_hello_classification" | grep troupe)"
  if [ -x "$build/bin/openvino_examples_tests" ]; then
    TROUPE_OV_EXAMPLES_DIR="$work/ov-consumer" "$build/bin/openvino_examples_tests" >"$work/ov-examples.log" 2>&1 ||
      { tail -n 30 "$work/ov-examples.log"; fail "openvino_examples_tests on the samples built against the package failed"; }
    echo "openvino_examples_tests passed on the package's samples ($samples)"
  fi
fi

# pkg-config.
flags=$(PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig pkg-config --cflags --libs troupe) || fail "pkg-config troupe failed"
g++ -O1 "$src/examples/first_program/main.cpp" -o "$work/first_program_pc" $flags -Wl,-rpath,"$prefix/$libdir" ||
  fail "building with \$(pkg-config --cflags --libs troupe) failed"
compare "$("$work/first_program_pc" "$model" "$ref/input_x.f32")"

# The CAF embedding (troupe/caf.hpp) as an application with its own actor system builds it:
# examples/caf_embedding with pkg-config's flags, linking CAF itself.
g++ -O1 "$src/examples/caf_embedding/main.cpp" -o "$work/caf_embedding_pc" $flags -lcaf_core -Wl,-rpath,"$prefix/$libdir" ||
  fail "building examples/caf_embedding with \$(pkg-config --cflags --libs troupe) -lcaf_core failed"
out=$("$work/caf_embedding_pc" -m "$model" -shape 1x3x48x192 -d CPU -n 20) || fail "caf_embedding failed: $out"
echo "$out" | tail -n 1
[ "$(echo "$out" | tail -n 1)" = "20 requests, 20 replies, 0 errors" ] || fail "caf_embedding's last line: $(echo "$out" | tail -n 1)"

# The Python package (where the build has it): the README's first program in Python, run from
# the prefix, gives onnxruntime's answer too.
if [ "$mode" = shared ]; then cache=$work/build/CMakeCache.txt; else cache=$build/CMakeCache.txt; fi
if grep -q '^TROUPE_PYTHON:BOOL=ON' "$cache"; then
  site=$(cd "$prefix" && ls -d lib*/python3*/site-packages 2>/dev/null | head -n 1)
  [ -n "$site" ] && [ -f "$prefix/$site/troupe/__init__.py" ] && [ -f "$prefix/$site/troupe/_troupe.pyi" ] ||
    fail "the Python package (with its .pyi stubs) is not installed under $prefix/lib*/python3*/site-packages"
  out=$(cd "$work" && PYTHONPATH="$prefix/$site" /usr/bin/python3 "$src/examples/first_program/first_program.py" \
        "$model" "$ref/input_x.f32" CPU) || fail "first_program.py with the installed package failed"
  echo "$out"
  compare "$out"
fi

# A missing dependency is named (a static package finds its dependencies; here none are found).
if [ "$mode" = static ]; then
  if cmake -S "$src/examples/first_program" -B "$work/consumer-nodeps" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
       -DCMAKE_IGNORE_PREFIX_PATH=/usr >"$work/nodeps.log" 2>&1; then
    fail "configuring with dependencies hidden succeeded"
  fi
  # find_dependency passes REQUIRED on: the first missing one fails with its own name.
  grep -E -m1 "Could NOT find [A-Za-z]+|could not be found because dependency [A-Za-z]+" "$work/nodeps.log" ||
    { cat "$work/nodeps.log"; fail "a missing dependency is not named"; }
fi
echo "install_$mode: passed"
