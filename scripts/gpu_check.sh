#!/usr/bin/env bash
# One device call: build for sm_90, run the GPU test suite, a reduced suite under
# compute-sanitizer (memcheck, racecheck), then foldkit-bench; every log goes under $OUT.
# Usage (on the GPU machine, from the repo root):
#   scripts/gpu_check.sh [all|build|test|sanitize|bench|scan|sweep|ladder|ladder-sweep]...
# (all = build test sanitize bench scan ladder; the sweeps only when named)
set -uo pipefail
OUT=${OUT:-/tmp/foldkit-out}
BUILD=${BUILD:-/tmp/foldkit-build}
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(all)
has() {
  local s
  for s in "${steps[@]}"; do
    [ "$s" = "$1" ] && return 0
    [ "$s" = all ] && case "$1" in sweep|ladder-sweep) ;; *) return 0 ;; esac
  done
  return 1
}
status=0
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

if has build || has test || has sanitize || has bench || has scan || has sweep || has ladder || has ladder-sweep; then
  stamp build
  if ! { cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFOLDKIT_CUDA=ON \
         && cmake --build "$BUILD" -j16; } > "$OUT/build.log" 2>&1; then
    tail -50 "$OUT/build.log"; echo "BUILD FAILED"; exit 1
  fi
  tail -3 "$OUT/build.log"
fi

if has test; then
  stamp ctest
  ctest --test-dir "$BUILD" --output-on-failure -j8 --timeout 600 > "$OUT/ctest.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|Failed|SKIPPED|\*\*\*" "$OUT/ctest.log" | tail -25
fi

if has sanitize; then
  # memcheck: the whole GPU suite, sizes capped at 400000 so that the multi-block (flagged
  # slot) path runs too (it starts at 17 blocks' worth: 139264 f32). racecheck is ~30x slower
  # per access: a filtered suite that still covers both cross-block paths and every dtype.
  gpu_tests=$(find "$BUILD/tests" -maxdepth 1 -name 'foldkit_gpu_tests' -type f | head -1)
  stamp "compute-sanitizer memcheck"
  FOLDKIT_TEST_MAX_N=${SANITIZE_MAX_N:-400000} compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$gpu_tests" > "$OUT/sanitize_memcheck.log" 2>&1 || status=1
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/sanitize_memcheck.log" | tail -3
  stamp "compute-sanitizer racecheck"
  FOLDKIT_TEST_MAX_N=${RACECHECK_MAX_N:-150000} compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$gpu_tests" --gtest_filter="${RACECHECK_FILTER:-*SumAndMeanExact*:*FourStreamsFromOneThread*:*Custom*:CudaScan.Sum_*:CudaScan.Max_f16:CudaScanBlocked.SumBitExact_i32:CudaScanSegmented.SumBitExact_f32:CudaScanSegmented.MaxBitExact_f16}" \
    > "$OUT/sanitize_racecheck.log" 2>&1 || status=1
  grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$OUT/sanitize_racecheck.log" | tail -3
  # The seeds' ladder: memcheck over every variant and shape at small sizes; racecheck (about
  # 100x slower per shared-memory access) over the reduced matrix FOLDKIT_LADDER_SHAPES=sanitize
  # (every power-of-two block, n = 33 and 1025), Serial left out (one thread, no sharing).
  ladder_tests=$(find "$BUILD/tests" -maxdepth 1 -name 'foldkit_ladder_tests' -type f | head -1)
  if [ -n "$ladder_tests" ]; then
    stamp "compute-sanitizer memcheck (ladder)"
    FOLDKIT_TEST_MAX_N=${LADDER_SANITIZE_MAX_N:-5000} compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$ladder_tests" > "$OUT/sanitize_ladder_memcheck.log" 2>&1 || status=1
    grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/sanitize_ladder_memcheck.log" | tail -3
    stamp "compute-sanitizer racecheck (ladder)"
    FOLDKIT_LADDER_SHAPES=sanitize compute-sanitizer --tool racecheck --error-exitcode 9 \
      "$ladder_tests" --gtest_filter='*ExactSums*:-*Serial*' > "$OUT/sanitize_ladder_racecheck.log" 2>&1 || status=1
    grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$OUT/sanitize_ladder_racecheck.log" | tail -3
  fi
fi

if has bench; then
  stamp bench
  "$BUILD/tools/bench/foldkit-bench" ${BENCH_ARGS:-} --csv "$OUT/bench.csv" 2>&1 | tee "$OUT/bench.txt" || status=1
fi

if has scan; then
  stamp "scan (foldkit vs cub::DeviceScan vs copy)"
  "$BUILD/tools/bench/foldkit-bench" scan --csv "$OUT/scan.csv" > "$OUT/scan.txt" 2>&1 || status=1
  tail -12 "$OUT/scan.txt"
fi

if has ladder; then
  stamp "ladder (the seeds' tables)"
  "$BUILD/tools/bench/foldkit-bench" ladder ${LADDER_ARGS:-} --csv "$OUT/ladder.csv" > "$OUT/ladder.txt" 2>&1 || status=1
  grep -E "^== |result checks" "$OUT/ladder.txt"
fi

if has ladder-sweep; then
  stamp "ladder --sweep"
  "$BUILD/tools/bench/foldkit-bench" ladder --sweep --csv "$OUT/ladder_sweep.csv" > "$OUT/ladder_sweep.txt" 2>&1 || status=1
  tail -80 "$OUT/ladder_sweep.txt"
fi

if has sweep; then
  stamp sweep
  "$BUILD/tools/bench/foldkit-bench" sweep --csv "$OUT/sweep.csv" > "$OUT/sweep.txt" 2>&1 || status=1
  tail -60 "$OUT/sweep.txt"
fi
stamp "done (status $status)"
exit $status
