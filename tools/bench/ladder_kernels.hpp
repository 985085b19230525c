// Device helpers of `foldkit-bench ladder` that are not rungs: an independent reference sum to
// check the reductions against, a parallel checker for blocked scans, and the copy kernel of
// the scans' memcpy-style ceiling. Host interface; the kernels are in ladder_kernels.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace fkbench {

// Sum of in[0, n) (int32 when is_int, else float) accumulated exactly for int32 (in int64)
// and in double for float, added into *d_acc (8 bytes: int64 or double, zeroed by the caller).
void launch_reference_sum(bool is_int, const void* in, std::size_t n, void* d_acc, cudaStream_t s);

// Checks out[0, n) is the blocked inclusive scan of in[0, n) with tiles of `tile` elements:
// out[i] == in[i] at a tile's first element, out[i] == out[i-1] + in[i] elsewhere. For int32
// (wrapping adds) that is exact and, by induction, complete; for float each step is allowed a
// relative 1e-5 of |out[i-1]| + |in[i]| (a correct scan that adds in another order is that close).
// d_result: two uint64 zeroed by the caller: [0] += number of bad elements, [1] = min bad index
// (initialise it to UINT64_MAX).
void launch_scan_check(bool is_int, const void* in, const void* out, std::size_t n, std::size_t tile,
                       unsigned long long* d_result, cudaStream_t s);

// As launch_scan_check for int32 input and int64 output (foldkit's widening int32 sum scan).
void launch_scan_check_wide(const void* in, const void* out, std::size_t n, std::size_t tile,
                            unsigned long long* d_result, cudaStream_t s);

// Copies `bytes` from in to out (both 16-byte aligned: cudaMalloc'd or pool copies) with
// 16-byte loads and stores, grid from the SM count: the copy half of the scans' ceiling.
void launch_copy(const void* in, void* out, std::size_t bytes, int sm_count, cudaStream_t s);

}  // namespace fkbench
