#!/usr/bin/env bash
# One device call's driver (the `device` tool returns at most 8 files from $OUT): runs the given
# steps in order, each step's logs under $OUT/x, and after every step tars them into
# $OUT/logs.tgz, so that a call cut short by its time limit still returns what it did.
# Usage (on the GPU machine, from the repo root; FOLDKIT_COMMIT names the commit, as the tree
# travels without .git):
#   scripts/device_run.sh STEP...
# Steps:
#   any scripts/gpu_check.sh step (build, axes, ab-axes, ...; its environment variables apply)
#   suite              foldkit_gpu_tests in 4 shards at once (the whole GPU suite in ~75 s)
#   tests:FILTER       foldkit_gpu_tests --gtest_filter=FILTER
#   memcheck:FILTER    compute-sanitizer memcheck over FILTER (sizes capped at MEM_MAX_N, 400000)
#   racecheck:FILTER   compute-sanitizer racecheck over FILTER (RACE_MAX_N, 150000)
#   probe:NAME ARGS    tools/probes/NAME with the words of ARGS (e.g. 'probe:foldkit-colscan-l2-probe 4194304 16')
#   ncu-probe:NAME ARGS  the same under ncu (clocks and caches left alone): NCU_COUNT (4) launches
#                      of the kernels matching NCU_KERNELS (a regex; all), after NCU_SKIP (2) of
#                      them, into ncu-NAME.txt (e.g. NCU_KERNELS='segmented_group_chunks_kernel|long_kernel_b4'
#                      'ncu-probe:foldkit-seg-group-probe 1'); NCU_EXTRA: more ncu options (e.g.
#                      '--section SourceCounters --section WarpStateStats': stalls sampled by SASS line)
# The build folder is gpu_check.sh's (BUILD, /tmp/foldkit-build): build first.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export FOLDKIT_COMMIT=${FOLDKIT_COMMIT:-unknown}
BUILD=${BUILD:-/tmp/foldkit-build}
REAL_OUT=${OUT:-/tmp/foldkit-out}
export OUT=$REAL_OUT/x
mkdir -p "$OUT"
gpu_tests=$BUILD/tests/foldkit_gpu_tests
log_name() { echo "$1" | tr -c 'A-Za-z0-9' _ | cut -c1-40; }
for step in "$@"; do
  echo "== $(date -u +%T) $step"
  case "$step" in
    suite)
      for i in 0 1 2 3; do
        GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 400 "$gpu_tests" > "$OUT/suite-$i.log" 2>&1 &
      done
      wait
      grep -hE "^\[  (PASSED|FAILED) " "$OUT"/suite-*.log
      grep -h "FAILED  \]" "$OUT"/suite-*.log | head -20 ;;
    tests:*)
      f=${step#tests:}
      timeout 400 "$gpu_tests" --gtest_filter="$f" > "$OUT/gtest-$(log_name "$f").log" 2>&1
      grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/gtest-$(log_name "$f").log" | head -20 ;;
    memcheck:*)
      f=${step#memcheck:}
      FOLDKIT_TEST_MAX_N=${MEM_MAX_N:-400000} timeout 400 compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$gpu_tests" --gtest_filter="$f" > "$OUT/memcheck-$(log_name "$f").log" 2>&1
      grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck-$(log_name "$f").log" | tail -3 ;;
    racecheck:*)
      f=${step#racecheck:}
      FOLDKIT_TEST_MAX_N=${RACE_MAX_N:-150000} timeout 400 compute-sanitizer --tool racecheck --error-exitcode 9 \
        "$gpu_tests" --gtest_filter="$f" > "$OUT/racecheck-$(log_name "$f").log" 2>&1
      grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$OUT/racecheck-$(log_name "$f").log" | tail -3 ;;
    probe:*)
      read -r -a words <<< "${step#probe:}"
      # shellcheck disable=SC2068  # the probe's arguments: words
      timeout 300 "$BUILD/tools/probes/${words[0]}" ${words[@]:1} > "$OUT/${words[0]}.txt" 2>&1
      echo "rc=$?"
      cat "$OUT/${words[0]}.txt" ;;
    ncu-probe:*)
      read -r -a words <<< "${step#ncu-probe:}"
      # shellcheck disable=SC2068  # the probe's arguments: words
      # shellcheck disable=SC2086  # NCU_EXTRA: more ncu options, as words
      timeout 400 ncu --clock-control none --cache-control none -k "regex:${NCU_KERNELS:-.}" --launch-skip "${NCU_SKIP:-2}" \
        --launch-count "${NCU_COUNT:-4}" --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section SchedulerStats --section MemoryWorkloadAnalysis ${NCU_EXTRA:-} "$BUILD/tools/probes/${words[0]}" ${words[@]:1} \
        > "$OUT/ncu-${words[0]}.txt" 2>&1
      echo "rc=$?"
      grep -E "^  [A-Za-z_].*\(|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size|Stall Long Scoreboard|Issue Slots Busy|No Eligible" \
        "$OUT/ncu-${words[0]}.txt" | head -80 ;;
    *) scripts/gpu_check.sh "$step" ;;
  esac
  tar -czf "$REAL_OUT/logs.tgz" -C "$OUT" .
done
