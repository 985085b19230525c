#!/usr/bin/env bash
# Plants a bug in a copy of this tree, builds a test binary there and runs the tests that ought
# to catch it: prints "caught" (exit 0) when they fail, "NOT CAUGHT" (exit 1) when they pass, and
# exits 2 when the plant or the build goes wrong. A test that cannot fail is a defect: this shows
# that one can. The working tree is not touched.
#
# Usage: scripts/planted_bug.sh FILE SED_EXPRESSION TEST_BINARY GTEST_FILTER
#   FILE            the file to break, relative to the repository root
#   SED_EXPRESSION  a sed -E expression that must change FILE (e.g. 's/- 1; j >= 0/- 2; j >= 0/')
#   TEST_BINARY     foldkit_gpu_tests or foldkit_cpu_tests (a target under tests/)
#   GTEST_FILTER    the tests that should fail
# Env: PLANTED_BUILD (build folder, default /tmp/foldkit-planted-build), CMAKE_ARGS (default
# -DFOLDKIT_CUDA=ON; -DFOLDKIT_CUDA=OFF for CPU tests on a machine without nvcc), JOBS.
# Example (on the GPU machine): the window look-back folding one predecessor too few:
#   scripts/planted_bug.sh include/foldkit/cuda/device/tensor_scan_kernel.cuh \
#     's/for \(int j = s_stop\[c\] - 1; j >= 0; --j\)/for (int j = s_stop[c] - 2; j >= 0; --j)/' \
#     foldkit_gpu_tests 'CudaTensorScan.ShapesAroundTheTiles:CudaTensorScan.SameBitsOnEveryCall'
set -uo pipefail
if [ $# -ne 4 ]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
file=$1 expr=$2 binary=$3 filter=$4
root=$(cd "$(dirname "$0")/.." && pwd)
src=${PLANTED_SRC:-/tmp/foldkit-planted-src}
build=${PLANTED_BUILD:-/tmp/foldkit-planted-build}
[ -f "$root/$file" ] || { echo "planted_bug: no file $file"; exit 2; }

# A copy of the tree without build folders and git metadata (kept between runs: the build folder
# then rebuilds only what the plant touches).
mkdir -p "$src"
(cd "$root" && tar --exclude=./.git --exclude='./build*' --exclude=./.carry -cf - .) | (cd "$src" && tar -xf -)
sed -E -i "$expr" "$src/$file"
if cmp -s "$root/$file" "$src/$file"; then
  echo "planted_bug: the expression changed nothing in $file"
  exit 2
fi
echo "planted in $file:"
diff "$root/$file" "$src/$file" | sed 's/^/  /'

log=$build/planted.log
mkdir -p "$build"
if ! { cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:--DFOLDKIT_CUDA=ON} \
       && cmake --build "$build" --target "$binary" -j"${JOBS:-16}"; } > "$log" 2>&1; then
  tail -30 "$log"
  echo "planted_bug: the build failed (log: $log)"
  exit 2
fi
exe=$(find "$build/tests" -maxdepth 1 -name "$binary" -type f | head -1)
[ -n "$exe" ] || { echo "planted_bug: no $binary under $build/tests"; exit 2; }
"$exe" --gtest_filter="$filter" > "$build/planted-tests.log" 2>&1
rc=$?
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran" "$build/planted-tests.log" | tail -8
# The file is restored in the copy, so the next plant starts from the tree as it is.
cp "$root/$file" "$src/$file"
if grep -q "SKIPPED" "$build/planted-tests.log" && ! grep -q "FAILED" "$build/planted-tests.log"; then
  echo "planted_bug: the tests skipped (no GPU?): nothing shown"
  exit 2
fi
if [ $rc -ne 0 ]; then
  echo "caught"
  exit 0
fi
echo "NOT CAUGHT"
exit 1
