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
template <class T, int kThreads, int kRows, int kMinBlocks, int kSleepNs, int kPerSm, int kBatch = 4>
void run_pipelined(const void* in, void* out, std::int64_t n, void* ws, cudaStream_t s) {
  using Spec = SumSpec<T>;
  using Policy = fc::tuning::PipelinedScanPolicy<kThreads, kRows, kMinBlocks, 24, kSleepNs, kBatch>;
  const int fit = fc::detail::pipelined_blocks_per_sm<Policy, false, Spec>();
  fc::detail::launch_pipelined_scan<Policy, false, Spec>(
      static_cast<const T*>(in), n, static_cast<typename Spec::output_type*>(out), typename Spec::accum_type{}, ws, s,
      kPerSm > 0 && kPerSm < fit ? kPerSm : fit);
}

// The smallest tile of any variant below: 2048 elements (256 threads x 2 rows x 4).
constexpr std::int64_t kSmallestTile = 2048;

}  // namespace

std::vector<ScanVariant> scan_variants(foldkit::DType dtype) {
  // (No variant may be an instantiation the library also makes: the pipelined kernel raises its
  // shared-memory limit per module, and a kernel instantiated in two modules failed to launch.)
  if (dtype == foldkit::DType::f32) {
    using T = float;
    return {
        {"pipelined 256 thr x 4 rows (16 KiB tiles), 4/SM, look-back 4 windows per poll", &run_pipelined<T, 256, 4, 4, 0, 0, 4>},
        {"pipelined 256 x 4, 4/SM, look-back 8 windows per poll", &run_pipelined<T, 256, 4, 4, 0, 0, 8>},
        {"pipelined 256 x 4, 4/SM, look-back 1 window per poll", &run_pipelined<T, 256, 4, 4, 0, 0, 1>},
        {"pipelined 256 x 4, 3/SM, 4 windows", &run_pipelined<T, 256, 4, 4, 0, 3, 4>},
        {"pipelined 512 x 4 (32 KiB tiles), <= 2/SM, 4 windows", &run_pipelined<T, 512, 4, 2, 0, 0, 4>},
        {"pipelined 128 x 8 rows, <= 4/SM, 4 windows", &run_pipelined<T, 128, 8, 4, 0, 0, 4>},
    };
  }
  if (dtype == foldkit::DType::i32) {
    using T = std::int32_t;
    return {
        {"pipelined 256 thr x 4 rows (16 KiB tiles), 3/SM, look-back 4 windows per poll", &run_pipelined<T, 256, 4, 3, 0, 0, 4>},
        {"pipelined 256 x 4, 3/SM, look-back 8 windows per poll", &run_pipelined<T, 256, 4, 3, 0, 0, 8>},
        {"pipelined 256 x 2 rows (8 KiB tiles), <= 4/SM, 4 windows", &run_pipelined<T, 256, 2, 4, 0, 0, 4>},
    };
  }
  return {};
}

std::size_t scan_variant_workspace_bytes(foldkit::DType dtype, std::int64_t n) {
  (void)dtype;
  // The library's layout, for the smallest tile (+1: the skewed tile grid) and 8-byte accumulators.
  return fc::detail::scan_workspace_bytes_for(n / kSmallestTile + 2, 8);
}

}  // namespace fkbench
