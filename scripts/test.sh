#!/usr/bin/env bash
# The README's test command: configure (CUDA backend when nvcc is found), build everything,
# run the whole ctest suite. GPU tests run where a GPU is present and are reported as skipped
# elsewhere. Usage: scripts/test.sh [build-dir]   (env: JOBS, CMAKE_ARGS)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
JOBS=${JOBS:-$(nproc)}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
cmake --build "$BUILD" -j "$JOBS"
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS"
