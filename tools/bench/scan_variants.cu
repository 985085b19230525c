// Instantiations of the scan policies `foldkit-bench scan --sweep` compares (scan_variants.hpp).
// Each goes through the library's own launch code (src/cuda/dispatch/scan_typed.cuh), so a
// variant differs from foldkit::cuda::inclusive_scan only in its policy or grid.
#include <cstdint>

#include "cuda/dispatch/scan_typed.cuh"
#include "foldkit/cuda/scan_custom.cuh"
#include "scan_variants.hpp"

namespace fkbench {
namespace {

namespace fc = foldkit::cuda;
using foldkit::ReduceOp;

template <class T>
using SumSpec = fc::ScanSpec<T, foldkit::scan_accum_t<ReduceOp::sum, T>, foldkit::scan_result_t<ReduceOp::sum, T>,
                             fc::detail::scan_combine_t<ReduceOp::sum, foldkit::scan_accum_t<ReduceOp::sum, T>>>;

// The tiled kernel (scan_kernel.cuh, the library's whole-array scan) at another tile shape or
// occupancy: kThreads x kItems elements per tile, __launch_bounds__ min blocks kMinBlocks.
template <class T, int kThreads, int kItems, int kMinBlocks, int kWindows = 16, bool kDeferredPrefix = true,
          int kPrefetchTiles = 0, int kFirstWaveLag = 0, bool kTreeFold = false>
void run_tiled(const void* in, void* out, std::int64_t n, void* ws, cudaStream_t s) {
  using Spec = SumSpec<T>;
  using A = typename Spec::accum_type;
  using Policy =
      fc::tuning::ScanPolicy<kThreads, kItems, kMinBlocks, kWindows, kDeferredPrefix, kPrefetchTiles, kFirstWaveLag,
                             kTreeFold>;
  fc::detail::prefer_shared_memory<Policy, false, Spec, fc::NoHeads>(fc::detail::current_device_for_checks());
  const auto tiles = static_cast<unsigned>((n + Policy::kTile - 1) / Policy::kTile);
  auto* header = static_cast<fc::ScanHeader*>(ws);
  auto* slots = reinterpret_cast<fc::ScanTileSlots<A>*>(static_cast<char*>(ws) + fc::kScanHeaderBytes);
  fc::scan_kernel<Policy, false, Spec><<<tiles, kThreads, 0, s>>>(
      static_cast<const T*>(in), n, static_cast<typename Spec::output_type*>(out), A{}, header, slots, tiles, Spec{});
}

// A user operator through the public custom-scan path (scan_custom.cuh): float addition, to
// see what a user's functor costs against the built-in sum's kernel.
struct PlusFloat {
  __host__ __device__ float operator()(float a, float b) const { return a + b; }
};
void run_custom_plus(const void* in, void* out, std::int64_t n, void* ws, cudaStream_t s) {
  fc::inclusive_scan_custom(static_cast<const float*>(in), n, static_cast<float*>(out), PlusFloat{}, -0.0f,
                            fc::Workspace{ws, fc::scan_custom_workspace_bytes<float>(n)}, s);
}

// The smallest tile of any variant below: 2048 elements (256 threads x 2 rows x 4).
constexpr std::int64_t kSmallestTile = 2048;

}  // namespace

std::vector<ScanVariant> scan_variants(foldkit::DType dtype) {
  // (No variant may be an instantiation the library also makes (tuning/scan_tuning.hpp): a
  // kernel that raised its shared-memory limit failed to launch when instantiated in two
  // modules, 2026-11-23.)
  if (dtype == foldkit::DType::f32) {
    using T = float;
    return {
        {"tiled 256 thr x 16 items (16 KiB tiles), >= 8/SM (the 2026-11-23 library policy)", &run_tiled<T, 256, 16, 8>},
        {"tiled 256 x 32 (32 KiB), >= 6/SM, 16 look-back windows (the 2026-11-23c..25 library policy)",
         &run_tiled<T, 256, 32, 6, 16>},
        {"tiled 288 x 32 (36 KiB), >= 6/SM, 4 windows, prefix in the element pass (the 2026-11-25..25e library kernel)",
         &run_tiled<T, 288, 32, 6, 4, false>},
        {"288 x 32 (36 KiB), >= 6/SM, 4 windows, no L2 prefetch (the 2026-11-25f..25j library kernel)",
         &run_tiled<T, 288, 32, 6, 4, true, 0>},
        {"288 x 32, L2 prefetch 24 tiles (0.8 MiB) ahead", &run_tiled<T, 288, 32, 6, 4, true, 24>},
        {"288 x 32, L2 prefetch 112 tiles (3.9 MiB) ahead", &run_tiled<T, 288, 32, 6, 4, true, 112>},
        {"256 x 32 (32 KiB), >= 6/SM, L2 prefetch 64 tiles (2 MiB) ahead", &run_tiled<T, 256, 32, 6, 16, true, 64>},
        // The first wave's later tiles load only once tile t - lag has landed
        // (tuning/scan_tuning.hpp, kFirstWaveLag; docs/perf-log/2026-11-26.md).
        {"288 x 32, prefetch 56 ahead, every first-wave tile loads at once (the 2026-11-25k..26 library kernel)",
         &run_tiled<T, 288, 32, 6, 4, true, 56, 0>},
        {"288 x 32, prefetch 56 ahead; first-wave tile t loads once t - 2/8 wave landed",
         &run_tiled<T, 288, 32, 6, 4, true, 56, 2>},
        {"288 x 32, prefetch 40 ahead; first-wave lag 3/8 wave", &run_tiled<T, 288, 32, 6, 4, true, 40, 3>},
        {"user operator (float plus) through inclusive_scan_custom: 256 x 32 (32 KiB), >= 6/SM", &run_custom_plus},
    };
  }
  if (dtype == foldkit::DType::i32) {
    using T = std::int32_t;
    return {
        {"tiled 256 x 8 (8 KiB in, 16 KiB out), >= 8/SM", &run_tiled<T, 256, 8, 8>},
        {"256 x 16 (16 KiB in, 32 KiB out), >= 6/SM, no L2 prefetch (the 2026-11-25g..25j library kernel)",
         &run_tiled<T, 256, 16, 6, 16, true, 0>},
        {"256 x 16, L2 prefetch 64 tiles (1 MiB) ahead", &run_tiled<T, 256, 16, 6, 16, true, 64>},
        {"256 x 16, L2 prefetch 256 tiles (4 MiB) ahead", &run_tiled<T, 256, 16, 6, 16, true, 256>},
        {"256 x 16, prefetch 128 ahead, every first-wave tile loads at once (the 2026-11-25k..26 library kernel)",
         &run_tiled<T, 256, 16, 6, 16, true, 128, 0>},
        {"256 x 16, prefetch 128 ahead; first-wave tile t loads once t - 2/8 wave landed",
         &run_tiled<T, 256, 16, 6, 16, true, 128, 2>},
        // Larger tiles, in the shared memory the look-back windows held (16 windows of 8-byte
        // aggregates are 4 KiB a block): 210 KiB of tiles per SM instead of 192. (192 x 24 at
        // 6/SM, 2 windows, measured 94.0 / 95.6 % at 2^26 / 2^28 on 2026-11-26: worse.)
        {"224 x 24 (21 KiB in, 42 KiB out), >= 5/SM, 8 windows, prefetch 97 ahead, lag 3/8",
         &run_tiled<T, 224, 24, 5, 8, true, 97, 3>},
        // The look-back folds across the warp in the library (integers: any order, same bits;
        // kTreeFold); one value at a time, as before:
        {"256 x 16, prefetch 128, lag 3/8, look-back folded one value at a time (the bdfb350 library kernel)",
         &run_tiled<T, 256, 16, 6, 16, true, 128, 3, false>},
        {"256 x 16, prefetch 128, lag 2/8, look-back folded across the warp", &run_tiled<T, 256, 16, 6, 16, true, 128, 2, true>},
        {"224 x 24, 5/SM, 8 windows, prefetch 97, lag 3/8, look-back folded across the warp",
         &run_tiled<T, 224, 24, 5, 8, true, 97, 3, true>},
        {"tiled 256 x 16 (16 KiB in, 32 KiB out), >= 6/SM, prefix in the element pass (the 2026-11-25e library kernel)",
         &run_tiled<T, 256, 16, 6, 16, false>},
    };
  }
  return {};
}

std::size_t scan_variant_workspace_bytes(foldkit::DType dtype, std::int64_t n) {
  (void)dtype;
  // The library's layout, for the smallest tile (+2: a partial last tile, and one to spare) and
  // 8-byte accumulators.
  return fc::detail::scan_workspace_bytes_for(n / kSmallestTile + 2, 8);
}

}  // namespace fkbench
