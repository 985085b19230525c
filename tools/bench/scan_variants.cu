// Instantiations of the scan policies `foldkit-bench scan --sweep` compares (scan_variants.hpp).
// Each goes through the library's own launch code (src/cuda/dispatch/scan_typed.cuh), so a
// variant differs from foldkit::cuda::inclusive_scan only in its policy or grid.
#include <cstdint>

#include "cuda/dispatch/scan_typed.cuh"
#include "scan_variants.hpp"

namespace fkbench {
namespace {

namespace fc = foldkit::cuda;
using foldkit::ReduceOp;

template <class T>
using SumSpec = fc::ScanSpec<T, foldkit::scan_accum_t<ReduceOp::sum, T>, foldkit::scan_result_t<ReduceOp::sum, T>,
                             fc::detail::scan_combine_t<ReduceOp::sum, foldkit::scan_accum_t<ReduceOp::sum, T>>>;

// A pipelined policy at `per_sm` resident blocks per SM (0: as many as fit).
template <class T, int kThreads, int kRows, int kMinBlocks, int kSleepNs, int kPerSm>
void run_pipelined(const void* in, void* out, std::int64_t n, void* ws, cudaStream_t s) {
  using Spec = SumSpec<T>;
  using Policy = fc::tuning::PipelinedScanPolicy<kThreads, kRows, kMinBlocks, 24, kSleepNs>;
  const int fit = fc::detail::pipelined_blocks_per_sm<Policy, false, Spec>();
  fc::detail::launch_pipelined_scan<Policy, false, Spec>(
      static_cast<const T*>(in), n, static_cast<typename Spec::output_type*>(out), typename Spec::accum_type{}, ws, s,
      kPerSm > 0 && kPerSm < fit ? kPerSm : fit);
}

// The scan kernel the library used for whole arrays until 2026-11-23 (one tile per block, 256
// threads x 16 items through shared memory); it still serves blocked and segmented scans.
template <class T>
void run_previous(const void* in, void* out, std::int64_t n, void* ws, cudaStream_t s) {
  using Spec = SumSpec<T>;
  using A = typename Spec::accum_type;
  using Policy = fc::tuning::ScanPolicyFor<sizeof(T), sizeof(A), false>;
  const std::int64_t tiles = (n + Policy::kTile - 1) / Policy::kTile;
  auto* header = static_cast<fc::ScanHeader*>(ws);
  auto* slots = reinterpret_cast<fc::ScanTileSlots<A>*>(static_cast<char*>(ws) + fc::kScanHeaderBytes);
  fc::scan_kernel<Policy, false, Spec, fc::NoHeads><<<static_cast<unsigned>(tiles), Policy::kThreads, 0, s>>>(
      static_cast<const T*>(in), n, static_cast<typename Spec::output_type*>(out), A{}, header, slots,
      static_cast<unsigned>(tiles), Spec{}, fc::NoHeads{});
}

// The smallest tile of any variant below: 2048 elements (256 threads x 2 rows x 4).
constexpr std::int64_t kSmallestTile = 2048;

}  // namespace

std::vector<ScanVariant> scan_variants(foldkit::DType dtype) {
  if (dtype == foldkit::DType::f32) {
    using T = float;
    return {
        {"pipelined 256 thr x 4 rows (16 KiB tiles), all that fit (library)", &run_pipelined<T, 256, 4, 4, 0, 0>},
        {"pipelined 256 x 4, 3/SM", &run_pipelined<T, 256, 4, 4, 0, 3>},
        {"pipelined 256 x 4, 2/SM", &run_pipelined<T, 256, 4, 4, 0, 2>},
        {"pipelined 256 x 4, look-back sleep 64 ns", &run_pipelined<T, 256, 4, 4, 64, 0>},
        {"pipelined 256 x 2 rows (8 KiB tiles), <= 5/SM", &run_pipelined<T, 256, 2, 5, 0, 0>},
        {"pipelined 512 x 4 (32 KiB tiles), <= 2/SM", &run_pipelined<T, 512, 4, 2, 0, 0>},
        {"pipelined 128 x 8 rows (16 KiB tiles), <= 4/SM", &run_pipelined<T, 128, 8, 4, 0, 0>},
        {"previous kernel (one tile per block)", &run_previous<T>},
    };
  }
  if (dtype == foldkit::DType::i32) {
    using T = std::int32_t;
    return {
        {"pipelined 256 thr x 4 rows (16 KiB tiles), all that fit (library)", &run_pipelined<T, 256, 4, 3, 0, 0>},
        {"pipelined 256 x 4, 2/SM", &run_pipelined<T, 256, 4, 3, 0, 2>},
        {"pipelined 256 x 2 rows (8 KiB tiles), <= 4/SM", &run_pipelined<T, 256, 2, 4, 0, 0>},
        {"pipelined 128 x 8 rows, <= 4/SM", &run_pipelined<T, 128, 8, 4, 0, 0>},
        {"previous kernel (one tile per block)", &run_previous<T>},
    };
  }
  return {};
}

std::size_t scan_variant_workspace_bytes(foldkit::DType dtype, std::int64_t n) {
  (void)dtype;
  const std::int64_t tiles = n / kSmallestTile + 2;
  return fc::kScanHeaderBytes + static_cast<std::size_t>(tiles) * 2 * 2 * sizeof(unsigned long long);
}

}  // namespace fkbench
