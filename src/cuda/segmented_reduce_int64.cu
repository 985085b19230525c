// Instantiations of the segmented reduction kernel (segmented_reduce_kernel.cuh): every op, both
// forms, for std::int64_t and std::uint64_t (the 8 dtypes are split over 4 files to compile in parallel).
#include <cstdint>

#include "segmented_reduce_kernel.cuh"

namespace foldkit::cuda::seg {
FOLDKIT_SEG_INSTANTIATE(std::int64_t)
FOLDKIT_SEG_INSTANTIATE(std::uint64_t)
}  // namespace foldkit::cuda::seg
