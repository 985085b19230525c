#!/usr/bin/env bash
# The README's main job: build foldkit-bench and print the benchmark table (GPU when present,
# else the CPU backend). Extra arguments go to foldkit-bench (default: --quick).
# Usage: scripts/bench.sh [foldkit-bench args...]   (env: BUILD, JOBS, CMAKE_ARGS)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
JOBS=${JOBS:-$(nproc)}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target foldkit-bench >/dev/null
[ $# -eq 0 ] && set -- --quick
exec "$BUILD/tools/bench/foldkit-bench" "$@"
