// Instantiations of the segmented reduction kernels (segmented_reduce_kernel.cuh: every op, both
// forms; segmented_group_kernel.cuh: the group path's ops), for std::int64_t and std::uint64_t (the 8 dtypes are split over 4 files to compile in parallel).
#include <cstdint>

#include "segmented_group_kernel.cuh"
#include "segmented_reduce_kernel.cuh"

namespace foldkit::cuda::seg {
FOLDKIT_SEG_INSTANTIATE(std::int64_t)
FOLDKIT_SEG_INSTANTIATE(std::uint64_t)
FOLDKIT_SEG_GROUP_INSTANTIATE(std::int64_t)
FOLDKIT_SEG_GROUP_INSTANTIATE(std::uint64_t)
}  // namespace foldkit::cuda::seg
