#!/usr/bin/env bash
# One device call: build for sm_90, run the GPU test suite, a reduced suite under
# compute-sanitizer (memcheck, racecheck), then foldkit-bench; every log goes under $OUT.
# Usage (on the GPU machine, from the repo root):
#   scripts/gpu_check.sh [all|build|test|sanitize|sanitize-scan|bench|scan|cpu|sass|sweep|ladder|ladder-sweep|trace|scan-trace|tensor-scan-trace|copyprobe|ab|ab-axes|ab-patches|axes|axes-sweep|ncu-axes]...
# (all = build test sanitize bench scan cpu sass ladder; the sweeps, traces, copyprobe and axes only when named)
# (axes: foldkit-bench axes (tensors along axes, segmented sums; issue #22) into axes-gpu.csv, then PyTorch on the
#  same cases (scripts/torch_axes.py --foldkit: foldkit/torch per case) into axes-torch.csv, then
#  foldkit-bench axes --backend cpu into axes-cpu.csv (AXES_SKIP_CPU=1: not); one log, axes.txt. AXES_ARGS (e.g. --quick), TORCH_AXES_ARGS.)
# (ncu-axes: ncu sections (NCU_SECTIONS: ncu's --section options) of foldkit's kernel in a few axes cases (NCU_CASES), into ncu-axes.txt.)
# (axes-sweep: foldkit-bench axes --sweep, the column-scan tile geometries, into axes-sweep.csv / axes-sweep.txt; AXES_SWEEP_ARGS.)
# (copyprobe: foldkit-copy-probe, copy kernels against cudaMemcpyAsync, COPY_PROBE_MIB sizes.)
# (trace: foldkit-trace, the reduction kernel's timeline, for each of TRACE_CASES "CASE N"; "launch-ab N" and "floor N" too.)
# (scan-trace: foldkit-scan-trace, the scan kernel's timeline, for each of SCAN_TRACE_CASES "f32|i32 N".)
# (tensor-scan-trace: foldkit-tensor-scan-trace, cumsum over dim 0 per tile, for each of TENSOR_SCAN_TRACE_CASES "ROWS COLS".)
# (sanitize-scan: only the whole-array scans' memcheck past one wave (user operators too) and a scan racecheck.)
# (ab: foldkit-bench of a baseline tree (AB_BASE, a `git archive` tarball) and of this tree, alternately, AB_ROUNDS
#  rounds each on this one machine; tools/probes/compare_reduce_ab.py compares them into ab.txt.)
# (ab-axes: the same with `foldkit-bench axes --only "$AB_ONLY"`; tools/probes/compare_axes_ab.py, into ab-axes.txt.)
# (ab-patches: this tree against itself with each of AB_PATCHES applied, built incrementally; AB_ONLY, AB_ROUNDS,
#  AB_PATCH_TESTS (a gtest filter run on each variant); into ab-patch-K.txt. AB_PLANTS, AB_PLANT_TESTS: planted
#  bugs as patches, each built the same way and tested, never benched: "caught" or "NOT CAUGHT".)
# Env: SCAN_ARGS (e.g. --sweep), BENCH_ARGS, SWEEP_ARGS (e.g. --dtypes f32), LADDER_ARGS, CTEST_ARGS (e.g. -E ^ladder/),
#      SCAN_REPEAT (runs of the scan step), TEST_TIMEOUT (seconds per ctest test), SKIP_LADDER_SANITIZE=1 (sanitize: library only),
#      BUILD_TARGETS (e.g. "foldkit-trace": build only those), TRACE_CASES, SCAN_TRACE_CASES, SCAN_TRACE_CALLS, SCAN_TRACE_BINS.
# Every step runs under a timeout, so that a hang costs minutes, not the whole device call.
set -uo pipefail
# NVLink multicast stays off in every process this starts (the device's KINDS.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# The commit every CSV row names: pass FOLDKIT_COMMIT where the tree travels without .git.
export FOLDKIT_COMMIT=${FOLDKIT_COMMIT:-$(git describe --always --dirty --abbrev=12 --match=NONE 2>/dev/null || echo unknown)}
OUT=${OUT:-/tmp/foldkit-out}
BUILD=${BUILD:-/tmp/foldkit-build}
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(all)
has() {
  local s
  for s in "${steps[@]}"; do
    [ "$s" = "$1" ] && return 0
    [ "$s" = all ] && case "$1" in sweep|ladder-sweep|trace|scan-trace|tensor-scan-trace|copyprobe|ab|ab-axes|ab-patches|axes|axes-sweep|ncu-axes) ;; *) return 0 ;; esac
  done
  return 1
}
status=0
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }
gpu_test_binary() { find "$BUILD/tests" -maxdepth 1 -name 'foldkit_gpu_tests' -type f | head -1; }
# The sources' contents, the record of what the build folder last built (the build step below).
hashes="$BUILD/.source-sha1"
source_hashes() {
  local roots=() r
  for r in CMakeLists.txt cmake include src tools tests python; do [ -e "$r" ] && roots+=("$r"); done
  find "${roots[@]}" -type f \( -name '*.c*' -o -name '*.h*' -o -name 'CMakeLists.txt' \) | sort | xargs sha1sum
}

# The whole-array scans past one wave of tiles (~2.2M 4-byte elements on an H100), and past the
# four waves from which they prefetch their input into L2 (tuning/scan_tuning.hpp: from 2^24 + 1
# the i32 -> i64 sums and the f64 scans do): one memcheck pass over a few whole-array sweeps at
# sizes up to 2^24 + 1, above the suite-wide size cap.
# racecheck of the GPU suite over a gtest filter, into $OUT/<log>; sizes up to RACECHECK_MAX_N
# (racecheck is ~30x slower per access than a plain run).
gpu_racecheck() {  # filter log
  FOLDKIT_TEST_MAX_N=${RACECHECK_MAX_N:-150000} timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$(gpu_test_binary)" --gtest_filter="$1" > "$OUT/$2" 2>&1 || status=1
  grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$OUT/$2" | tail -3
}

scan_memcheck_past_one_wave() {
  stamp "compute-sanitizer memcheck (whole-array scans past one wave)"
  FOLDKIT_TEST_MAX_N=${SCAN_SANITIZE_MAX_N:-16777217} timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$(gpu_test_binary)" --gtest_filter='CudaScan.Sum_f32:CudaScan.Max_i32:CudaScan.Sum_i32:CudaScan.Prod_f16:CudaScan.Min_f64:CudaScanCustom.AffineComposition*:CudaScanCustom.BlockedAndSegmented*' \
    > "$OUT/sanitize_scan_memcheck.log" 2>&1 || status=1
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/sanitize_scan_memcheck.log" | tail -3
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

if has build || has test || has sanitize || has sanitize-scan || has bench || has scan || has cpu || has sass || has sweep || has ladder || has ladder-sweep || has trace || has scan-trace || has tensor-scan-trace || has copyprobe || has ab || has ab-axes || has ab-patches || has axes || has axes-sweep || has ncu-axes; then
  stamp build
  # Ninja rebuilds by modification time. A source restored to older bytes with an older time (a
  # carried tree after an in-place planted bug: on 2026-11-27 the axes table's binary kept
  # fold_column_groups' planted bug from the previous call's build, and its (32768, 32) row
  # read a quarter of the sums) would not be rebuilt: touch every source whose content differs
  # from what this build folder last built.
  # (ab-patches keeps this record true while it builds variants: see there.)
  mkdir -p "$BUILD"
  source_hashes > "$hashes.now"
  if [ -f "$hashes" ]; then
    changed=$(diff "$hashes" "$hashes.now" | sed -n 's/^> [0-9a-f]*  //p')
    [ -n "$changed" ] && echo "$changed" | xargs touch && echo "build: $(echo "$changed" | wc -l) source(s) changed since this folder's last build"
  fi
  if ! { cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFOLDKIT_CUDA=ON \
         && cmake --build "$BUILD" -j16 ${BUILD_TARGETS:+--target $BUILD_TARGETS}; } > "$OUT/build.log" 2>&1; then
    tail -50 "$OUT/build.log"; echo "BUILD FAILED"; exit 1
  fi
  mv "$hashes.now" "$hashes"
  tail -3 "$OUT/build.log"
fi

if has test; then
  stamp ctest
  ctest --test-dir "$BUILD" --output-on-failure -j8 --timeout "${TEST_TIMEOUT:-180}" ${CTEST_ARGS:-} > "$OUT/ctest.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|Failed|SKIPPED|\*\*\*" "$OUT/ctest.log" | tail -25
fi

if has sanitize; then
  # memcheck: the whole GPU suite, sizes capped at 400000 so that the multi-block (flagged
  # slot) path runs too (it starts at 17 blocks' worth: 139264 f32). racecheck is ~30x slower
  # per access: a filtered suite that still covers both cross-block paths and every dtype.
  gpu_tests=$(gpu_test_binary)
  stamp "compute-sanitizer memcheck"
  FOLDKIT_TEST_MAX_N=${SANITIZE_MAX_N:-400000} timeout 400 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$gpu_tests" > "$OUT/sanitize_memcheck.log" 2>&1 || status=1
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/sanitize_memcheck.log" | tail -3
  scan_memcheck_past_one_wave
  stamp "compute-sanitizer racecheck"
  gpu_racecheck "${RACECHECK_FILTER:-*SumAndMeanExact*:*FourStreamsFromOneThread*:*Custom*:CudaScan.Sum_*:CudaScan.Max_f16:CudaScanBlocked.SumBitExact_i32:CudaScanSegmented.SumBitExact_f32:CudaScanSegmented.MaxBitExact_f16:CudaScanCustom.*}" \
    sanitize_racecheck.log
  # The seeds' ladder: memcheck over every variant and shape at small sizes; racecheck (about
  # 100x slower per shared-memory access) over the reduced matrix FOLDKIT_LADDER_SHAPES=sanitize
  # (every power-of-two block, n = 33 and 1025), Serial left out (one thread, no sharing).
  ladder_tests=$(find "$BUILD/tests" -maxdepth 1 -name 'foldkit_ladder_tests' -type f | head -1)
  if [ -n "$ladder_tests" ] && [ -z "${SKIP_LADDER_SANITIZE:-}" ]; then
    stamp "compute-sanitizer memcheck (ladder)"
    FOLDKIT_TEST_MAX_N=${LADDER_SANITIZE_MAX_N:-5000} timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$ladder_tests" > "$OUT/sanitize_ladder_memcheck.log" 2>&1 || status=1
    grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/sanitize_ladder_memcheck.log" | tail -3
    stamp "compute-sanitizer racecheck (ladder)"
    FOLDKIT_LADDER_SHAPES=sanitize timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 \
      "$ladder_tests" --gtest_filter='*ExactSums*:-*Serial*' > "$OUT/sanitize_ladder_racecheck.log" 2>&1 || status=1
    grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$OUT/sanitize_ladder_racecheck.log" | tail -3
  fi
fi

if has sanitize-scan && ! has sanitize; then
  scan_memcheck_past_one_wave
  stamp "compute-sanitizer racecheck (whole-array scans)"
  gpu_racecheck 'CudaScan.Sum_*:CudaScan.Max_f16:CudaScan.Prod_f64:CudaScanConcurrency.*:CudaScanCustom.*' sanitize_scan_racecheck.log
fi

if has bench; then
  stamp bench
  timeout 400 "$BUILD/tools/bench/foldkit-bench" ${BENCH_ARGS:-} --csv "$OUT/bench.csv" 2>&1 | tee "$OUT/bench.txt" || status=1
fi

# A/B: foldkit-bench of the baseline tree $AB_BASE (a `git archive` tarball, built once) and of
# this tree, alternately, AB_ROUNDS rounds each on this one machine, compared by a script into
# $OUT/NAME.txt. Usage: ab_run NAME COMPARATOR FOLDKIT_BENCH_ARGS...
ab_built=0
ab_run() {
  local name=$1 compare=$2
  shift 2
  local base_src=/tmp/foldkit-ab-src base_build=/tmp/foldkit-ab-build
  if [ "$ab_built" != 1 ]; then
    rm -rf "$base_src" && mkdir -p "$base_src" && tar -xf "$AB_BASE" -C "$base_src"
    if ! { cmake -S "$base_src" -B "$base_build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFOLDKIT_CUDA=ON \
           && cmake --build "$base_build" -j16 --target foldkit-bench; } > "$OUT/ab_build.log" 2>&1; then
      tail -30 "$OUT/ab_build.log"; echo "AB BASELINE BUILD FAILED"; status=1; return
    fi
    ab_built=1
  fi
  local base_runs="" new_runs="" r
  for r in $(seq 1 "${AB_ROUNDS:-2}"); do
    timeout 300 "$base_build/tools/bench/foldkit-bench" "$@" --csv "$OUT/$name-base-$r.csv" > /dev/null 2>&1 || status=1
    timeout 300 "$BUILD/tools/bench/foldkit-bench" "$@" --csv "$OUT/$name-new-$r.csv" > /dev/null 2>&1 || status=1
    base_runs="$base_runs${base_runs:+,}$OUT/$name-base-$r.csv"; new_runs="$new_runs${new_runs:+,}$OUT/$name-new-$r.csv"
  done
  python3 "$compare" "$base_runs" "$new_runs" > "$OUT/$name.txt" 2>&1 || status=1
  cat "$OUT/$name.txt"
}

if has ab; then
  stamp "ab (foldkit-bench: the baseline tree $AB_BASE and this tree, alternately)"
  # shellcheck disable=SC2086  # BENCH_ARGS: words
  ab_run ab tools/probes/compare_reduce_ab.py ${BENCH_ARGS:-}
fi

if has ab-axes; then
  # `foldkit-bench axes --only "$AB_ONLY"` (tensors along axes; '|' separates cases, a leading '^'
  # matches a prefix), compared per case by tools/probes/compare_axes_ab.py.
  stamp "ab-axes (foldkit-bench axes --only: the baseline tree $AB_BASE and this tree, alternately)"
  ab_run ab-axes tools/probes/compare_axes_ab.py axes --only "${AB_ONLY:?AB_ONLY: the cases}"
fi

if has ab-patches; then
  # This tree against itself with each of AB_PATCHES (patch files against this tree, `git apply`
  # -p1, one at a time), every variant built incrementally in this build folder (only what the
  # patch touches recompiles: no second full build), then `foldkit-bench axes --only "$AB_ONLY"`
  # of the tree and the variants alternately, AB_ROUNDS rounds; each variant compared with the
  # tree into ab-patch-K.txt. AB_PATCH_TESTS: a gtest filter each variant's foldkit_gpu_tests runs.
  # AB_PLANTS: patches that plant a bug, each built the same way (foldkit_gpu_tests only, ~80 s
  # against planted_bug.sh's own build folder's ~170 s) and tested with AB_PLANT_TESTS, which must
  # fail ("caught"; "NOT CAUGHT" fails the step); never benched.
  stamp "ab-patches (this tree against: ${AB_PATCHES:-no variant}; plants: ${AB_PLANTS:-none})"
  [ -n "${AB_PATCHES:-}${AB_PLANTS:-}" ] || { echo "ab-patches: give AB_PATCHES or AB_PLANTS"; exit 1; }
  # Applies a variant's patch (git apply -p1). The build folder's record names the variant's
  # sources from here until the tree's objects are back (the restore below): a call cut short in
  # between leaves variant objects, and the next call's tree arrives with its own, older times,
  # which ninja alone takes for up to date (2026-11-29: a call cut short in the restore left the
  # planted unreset slot of its third variant in the library, and the next call's axes table
  # failed 3 result checks with it).
  apply_variant() {
    if ! git apply -p1 "$1"; then
      echo "PATCH $1 DOES NOT APPLY"; status=1; return 1
    fi
    source_hashes > "$hashes"
  }
  vdir=/tmp/foldkit-ab-variants
  rm -rf "$vdir" && mkdir -p "$vdir"
  bench_bin=$BUILD/tools/bench/foldkit-bench
  cp "$bench_bin" "$vdir/bench-0"
  targets=(foldkit-bench)
  [ -n "${AB_PATCH_TESTS:-}" ] && targets+=(foldkit_gpu_tests)
  k=0
  for patch_file in ${AB_PATCHES:-}; do
    k=$((k + 1))
    echo "variant $k: $patch_file"
    apply_variant "$patch_file" || continue
    if timeout 500 cmake --build "$BUILD" -j16 --target "${targets[@]}" > "$OUT/ab-patch-$k-build.log" 2>&1; then
      cp "$bench_bin" "$vdir/bench-$k"
      if [ -n "${AB_PATCH_TESTS:-}" ]; then
        timeout 400 "$(gpu_test_binary)" --gtest_filter="$AB_PATCH_TESTS" > "$OUT/ab-patch-$k-tests.log" 2>&1 || status=1
        grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/ab-patch-$k-tests.log" | head -10
      fi
    else
      tail -20 "$OUT/ab-patch-$k-build.log"; echo "VARIANT $k BUILD FAILED"; status=1
    fi
    git apply -R -p1 "$patch_file" || { echo "PATCH $patch_file DOES NOT REVERT"; status=1; break; }
  done
  p=0
  for plant in ${AB_PLANTS:-}; do
    p=$((p + 1))
    echo "plant $p: $plant"
    apply_variant "$plant" || continue
    if timeout 500 cmake --build "$BUILD" -j16 --target foldkit_gpu_tests > "$OUT/ab-plant-$p-build.log" 2>&1; then
      timeout 400 "$(gpu_test_binary)" --gtest_filter="${AB_PLANT_TESTS:?AB_PLANT_TESTS: the tests that must catch the plants}" \
        > "$OUT/ab-plant-$p-tests.log" 2>&1
      rc=$?
      if [ "$rc" -eq 0 ]; then
        echo "NOT CAUGHT: $plant"; status=1
      elif [ "$rc" -eq 124 ] || ! grep -q "FAILED  \]" "$OUT/ab-plant-$p-tests.log"; then
        echo "NO VERDICT (rc $rc, no failed test): $plant"; status=1
      else
        echo "caught: $plant"
        grep "FAILED  \]" "$OUT/ab-plant-$p-tests.log" | sort -u | head -5
      fi
    else
      tail -20 "$OUT/ab-plant-$p-build.log"; echo "PLANT $p BUILD FAILED"; status=1
    fi
    git apply -R -p1 "$plant" || { echo "PLANT $plant DOES NOT REVERT"; status=1; break; }
  done
  # This tree's binaries again (the reverted sources are newer than the variants' objects).
  [ "$p" -gt 0 ] && targets+=(foldkit_gpu_tests)
  if timeout 500 cmake --build "$BUILD" -j16 --target "${targets[@]}" > "$OUT/ab-patch-restore.log" 2>&1; then
    source_hashes > "$hashes"
  else
    status=1
  fi
  [ "$k" -gt 0 ] && for r in $(seq 1 "${AB_ROUNDS:-2}"); do
    for i in $(seq 0 "$k"); do
      [ -x "$vdir/bench-$i" ] || continue
      timeout 300 "$vdir/bench-$i" axes --only "${AB_ONLY:?AB_ONLY: the cases}" --csv "$OUT/ab-patch-run-$i-$r.csv" > /dev/null 2>&1 || status=1
    done
  done
  runs_of() { local i=$1 r list=""; for r in $(seq 1 "${AB_ROUNDS:-2}"); do list="$list${list:+,}$OUT/ab-patch-run-$i-$r.csv"; done; echo "$list"; }
  for i in $(seq 1 "$k"); do
    [ -x "$vdir/bench-$i" ] || continue
    echo "== variant $i against this tree"
    python3 tools/probes/compare_axes_ab.py "$(runs_of 0)" "$(runs_of "$i")" > "$OUT/ab-patch-$i.txt" 2>&1 || status=1
    cat "$OUT/ab-patch-$i.txt"
  done
fi

if has scan; then
  stamp "scan (foldkit vs cub::DeviceScan vs copy)"
  timeout 420 "$BUILD/tools/bench/foldkit-bench" scan ${SCAN_ARGS:-} --csv "$OUT/scan.csv" > "$OUT/scan.txt" 2>&1 || status=1
  tail -12 "$OUT/scan.txt"
  # SCAN_REPEAT=k: k - 1 more runs (scan-2.csv ...), to see the run-to-run spread on one machine.
  for r in $(seq 2 "${SCAN_REPEAT:-1}"); do
    stamp "scan, run $r"
    timeout 420 "$BUILD/tools/bench/foldkit-bench" scan ${SCAN_ARGS:-} --csv "$OUT/scan-$r.csv" > "$OUT/scan-$r.txt" 2>&1 || status=1
    tail -3 "$OUT/scan-$r.txt"
  done
fi

if has cpu; then
  stamp "cpu (foldkit-bench --backend cpu: reductions and the scan on this host's cores)"
  timeout 300 "$BUILD/tools/bench/foldkit-bench" --backend cpu --csv "$OUT/cpu.csv" > "$OUT/cpu.txt" 2>&1 || status=1
  grep -E "^incl_sum|^sum f32 2\^26|^ +ceiling|worst|result checks" "$OUT/cpu.txt" | tail -14
fi

if has sass; then
  # The whole-array scan's f32 inclusive sum: 16-byte copies into shared memory (LDGSTS.128),
  # 16-byte global stores, no local memory.
  stamp "sass (scan_kernel, f32 inclusive sum, whole array)"
  obj=$(find "$BUILD/src" -name 'scan_f32.cu.o' | head -1)
  if [ -n "$obj" ]; then
    cuobjdump --dump-sass "$obj" > "$OUT/sass_scan_f32.txt" 2>&1 || status=1
    want='scan_kernel.*Lb0ENS0_8ScanSpecIfffNS_2op3SumIf.*7NoHeads'
    awk -v w="$want" '/Function : /{p = ($0 ~ w)} p' "$OUT/sass_scan_f32.txt" > "$OUT/sass_scan_f32_incl_sum.txt"
    echo "LDG: $(grep -oE 'LDG[.A-Z0-9]*|LDGSTS[.A-Z0-9]*' "$OUT/sass_scan_f32_incl_sum.txt" | sort | uniq -c | tr '\n' ' ')"
    echo "STG: $(grep -o 'STG[.A-Z0-9]*' "$OUT/sass_scan_f32_incl_sum.txt" | sort | uniq -c | tr '\n' ' ')"
    echo "local memory: $(grep -cE 'LDL|STL' "$OUT/sass_scan_f32_incl_sum.txt") instructions"
    echo "L2 bulk prefetch (UBLKPF): $(grep -c 'UBLKPF' "$OUT/sass_scan_f32_incl_sum.txt")"
    rm -f "$OUT/sass_scan_f32.txt"  # (the device tool returns at most 8 files: keep the CSVs)
  fi
  # Every reduction kernel's loops issue all their 16-byte loads before using any
  # (vector_load.cuh, after_all_loads): a loop listed here has a split batch. Reported, not
  # failed (none since 2026-11-25, when every load's first word joined the tie).
  stamp "sass (reduction loops: loads issued before the first use)"
  lib=$(find "$BUILD/src" -name 'libfoldkit.a' | head -1)
  if [ -n "$lib" ]; then
    cuobjdump --dump-sass "$lib" | python3 scripts/sass_load_batches.py > "$OUT/sass_load_batches.txt" 2>&1 || status=1
    python3 - "$OUT/sass_load_batches.txt" <<'PY'
import re, sys
bad = [l.rstrip() for l in open(sys.argv[1]) if any(a != b for a, b in re.findall(r"(\d+) loads, (\d+) before", l))]
print("WARNING: split load batches:" if bad else "every loop issues all its loads first", *bad[:20], sep="\n")
PY
  fi
fi

if has ncu-axes; then
  # Hardware counters (ncu; Firecracker machines, not gVisor: the device's KINDS.md) of foldkit's
  # kernel in a few `foldkit-bench axes` cases, one log: NCU_CASES is "ONLY@KERNEL_REGEX;..." (ONLY
  # as for --only; a leading ^ matches a prefix). Default: one case of each family that fell
  # short on the H200 (docs/perf.md, Known gaps), beside the outer sum that met its bar.
  stamp "ncu-axes (Speed of light, occupancy, warp states of foldkit's kernels in a few axes cases)"
  cases=${NCU_CASES:-"^argmax f32 1048576x64 axes=0@outer_kernel;^sum f32 1048576x64 axes=0@outer_kernel;^argmax f32 4194304x16 axes=1@rows_;^sum f32 64x4096x256 axes=0,2@rows_;^cumsum f32 1048576x64 axes=0@tile_scan_kernel;^segmented_sum f32 2^22@segmented_reduce_kernel"}
  : > "$OUT/ncu-axes.txt"
  IFS=';' read -ra entries <<< "$cases"
  for e in "${entries[@]}"; do
    echo "######## $e" >> "$OUT/ncu-axes.txt"
    timeout 240 ncu --clock-control none --cache-control none -k "regex:${e#*@}" --launch-skip 10 --launch-count 2 \
      ${NCU_SECTIONS:---section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section SchedulerStats} \
      "$BUILD/tools/bench/foldkit-bench" axes --only "${e%@*}" >> "$OUT/ncu-axes.txt" 2>&1 || status=1
  done
  grep -E "^######## |Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size|Stall Long Scoreboard|Issue Slots Busy|Issued Ipc|No Eligible|^  [a-z_]+_kernel" "$OUT/ncu-axes.txt" | head -140
fi
if has axes-sweep; then
  stamp "axes-sweep (foldkit-bench axes --sweep: the column-scan tile geometries on cumsum over dim 0)"
  timeout 400 "$BUILD/tools/bench/foldkit-bench" axes --sweep ${AXES_SWEEP_ARGS:-} --csv "$OUT/axes-sweep.csv" \
    > "$OUT/axes-sweep.txt" 2>&1 || status=1
  grep -E "^== |the library's geometry|!!!!" "$OUT/axes-sweep.txt" | tail -60
fi
if has axes; then
  # Three parts, one log (the device tool returns at most 8 files): the GPU suite, torch on the
  # same cases beside it (foldkit/torch per case, the issue's bar), the CPU section on this host.
  stamp "axes (foldkit-bench axes: tensors along axes and segmented sums vs the ceilings and CUB)"
  timeout 300 "$BUILD/tools/bench/foldkit-bench" axes ${AXES_ARGS:-} --csv "$OUT/axes-gpu.csv" > "$OUT/axes.txt" 2>&1 || status=1
  grep -E "bars met|below the bar|result checks|FAILED|fatal" "$OUT/axes.txt" | tail -60
  if [ -s "$OUT/axes-gpu.csv" ]; then
    stamp "axes: PyTorch on the same cases (scripts/torch_axes.py)"
    echo "== scripts/torch_axes.py" >> "$OUT/axes.txt"
    timeout 400 python3 scripts/torch_axes.py ${TORCH_AXES_ARGS:-} --csv "$OUT/axes-torch.csv" \
      --foldkit "$OUT/axes-gpu.csv" >> "$OUT/axes.txt" 2>&1 || status=1
    sed -n '/== foldkit vs torch/,$p' "$OUT/axes.txt" | grep -E "NO$|at least as fast|no foldkit row" | tail -40
  fi
  if [ -z "${AXES_SKIP_CPU:-}" ]; then
    stamp "axes --backend cpu (foldkit::cpu::reduce along the axes on this host)"
    echo "== foldkit-bench axes --backend cpu" >> "$OUT/axes.txt"
    timeout 300 "$BUILD/tools/bench/foldkit-bench" axes --backend cpu ${AXES_ARGS:-} --csv "$OUT/axes-cpu.csv" \
      >> "$OUT/axes.txt" 2>&1 || status=1
    grep -E "bars met|result checks" "$OUT/axes.txt" | tail -2
  fi
fi

if has ladder; then
  stamp "ladder (the seeds' tables)"
  timeout 400 "$BUILD/tools/bench/foldkit-bench" ladder ${LADDER_ARGS:-} --csv "$OUT/ladder.csv" > "$OUT/ladder.txt" 2>&1 || status=1
  grep -E "^== |result checks" "$OUT/ladder.txt"
fi

if has ladder-sweep; then
  stamp "ladder --sweep"
  "$BUILD/tools/bench/foldkit-bench" ladder --sweep --csv "$OUT/ladder_sweep.csv" > "$OUT/ladder_sweep.txt" 2>&1 || status=1
  tail -80 "$OUT/ladder_sweep.txt"
fi

if has sweep; then
  stamp sweep
  timeout 480 "$BUILD/tools/bench/foldkit-bench" sweep ${SWEEP_ARGS:-} --csv "$OUT/sweep.csv" > "$OUT/sweep.txt" 2>&1 || status=1
  grep -E "result checks|FAIL|!!!" "$OUT/sweep.txt" | tail -5
  python3 tools/probes/pick_reduce_table.py "$OUT/sweep.csv" || status=1
fi
if has trace; then
  stamp "trace (foldkit-trace: the reduction kernel's timeline)"
  cases=${TRACE_CASES:-"sum-f32 2097152;sum-f64 1048576;argmax-f32 2097152;sum-f32 8388608;sum-f64 4194304;argmax-f32 8388608"}
  IFS=';' read -ra list <<< "$cases"
  for c in "${list[@]}"; do
    case "$c" in
      launch-ab*|block-reduce*|floor*)  # one run each, no CALLS or --batch
        timeout 120 "$BUILD/tools/probes/foldkit-trace" $c >> "$OUT/trace.txt" 2>&1 || status=1 ;;
      *)
        for mode in "" --batch; do
          timeout 60 "$BUILD/tools/probes/foldkit-trace" $c 40 $mode >> "$OUT/trace.txt" 2>&1 || status=1
        done ;;
    esac
  done
  cat "$OUT/trace.txt"
fi
if has scan-trace; then
  stamp "scan-trace (foldkit-scan-trace: the whole-array scan kernel's timeline)"
  cases=${SCAN_TRACE_CASES:-"f32 67108864;i32 67108864;f32 4194304;f32 268435456"}
  IFS=';' read -ra list <<< "$cases"
  for c in "${list[@]}"; do
    timeout 120 "$BUILD/tools/probes/foldkit-scan-trace" $c ${SCAN_TRACE_CALLS:-9} ${SCAN_TRACE_BINS:-40} >> "$OUT/scan_trace.txt" 2>&1 || status=1
    echo >> "$OUT/scan_trace.txt"
  done
  cat "$OUT/scan_trace.txt"
fi
if has tensor-scan-trace; then
  stamp "tensor-scan-trace (foldkit-tensor-scan-trace: the column scan's tiles and look-back distances)"
  cases=${TENSOR_SCAN_TRACE_CASES:-"4194304 16;1048576 64;16777216 4;65536 1024"}
  IFS=';' read -ra list <<< "$cases"
  for c in "${list[@]}"; do
    timeout 120 "$BUILD/tools/probes/foldkit-tensor-scan-trace" $c ${TENSOR_SCAN_TRACE_CALLS:-9} >> "$OUT/tensor_scan_trace.txt" 2>&1 || status=1
    echo >> "$OUT/tensor_scan_trace.txt"
  done
  cat "$OUT/tensor_scan_trace.txt"
fi
if has copyprobe; then
  stamp "copyprobe (foldkit-copy-probe: copy kernels against cudaMemcpyAsync)"
  (cd "$OUT" && timeout 300 "$BUILD/tools/probes/foldkit-copy-probe" ${COPY_PROBE_MIB:-256 1024}) > "$OUT/copy_probe.txt" 2>&1 || status=1
  cat "$OUT/copy_probe.txt"
fi
stamp "done (status $status)"
exit $status
