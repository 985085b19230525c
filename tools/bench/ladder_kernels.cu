// Reference sum, blocked-scan checker and copy kernel of `foldkit-bench ladder` (see
// ladder_kernels.hpp). Written for plainness, not speed: each runs once per table, untimed,
// except the copy kernel, which is the ceiling and therefore written for speed.
#include "ladder_kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "timing.hpp"

namespace fkbench {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(std::size_t n, std::size_t cap = 8192) {
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>((n + kThreads - 1) / kThreads, cap)));
}

// Per thread a grid-stride sum, per block a shared-memory tree, one atomic per block: the order
// of the atomics varies, which for int64 changes nothing and for double changes the last bits
// of a value the float rungs are compared against with a far coarser tolerance.
template <class T, class Acc>
__global__ void reference_sum_kernel(const T* __restrict__ in, std::size_t n, Acc* acc) {
  __shared__ Acc part[kThreads];
  Acc s = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride)
    s += static_cast<Acc>(in[i]);
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (static_cast<int>(threadIdx.x) < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if constexpr (std::is_integral_v<Acc>)  // int64: added as unsigned (exact; never overflows here)
      atomicAdd(reinterpret_cast<unsigned long long*>(acc), static_cast<unsigned long long>(part[0]));
    else
      atomicAdd(acc, part[0]);  // double (sm_60+)
  }
}

__device__ void record_bad(unsigned long long* result, std::size_t i) {
  atomicAdd(result, 1ull);
  atomicMin(result + 1, static_cast<unsigned long long>(i));
}

__global__ void scan_check_int(const int* __restrict__ in, const int* __restrict__ out, std::size_t n,
                               std::size_t tile, unsigned long long* result) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    const unsigned want = i % tile == 0 ? static_cast<unsigned>(in[i])
                                        : static_cast<unsigned>(out[i - 1]) + static_cast<unsigned>(in[i]);
    if (static_cast<unsigned>(out[i]) != want) record_bad(result, i);
  }
}

// foldkit's int32 sum scans widen to int64: the same recurrence, exact in 64 bits.
__global__ void scan_check_int_wide(const int* __restrict__ in, const long long* __restrict__ out, std::size_t n,
                                    std::size_t tile, unsigned long long* result) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    const long long want = i % tile == 0 ? in[i] : out[i - 1] + in[i];
    if (out[i] != want) record_bad(result, i);
  }
}

__global__ void scan_check_float(const float* __restrict__ in, const float* __restrict__ out, std::size_t n,
                                 std::size_t tile, unsigned long long* result) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    const float prev = i % tile == 0 ? 0.0f : out[i - 1];
    const float want = prev + in[i];
    const float tol = 1e-5f * (fabsf(prev) + fabsf(in[i]));
    if (!(fabsf(out[i] - want) <= tol)) record_bad(result, i);  // NaN (the poison) fails too
  }
}

// 16-byte loads and stores, four in flight per thread; the last (bytes % 16) bytes by block 0.
__global__ void __launch_bounds__(kThreads) copy_kernel(const int4* __restrict__ in, int4* __restrict__ out,
                                                        std::size_t nvec, const unsigned char* in_tail,
                                                        unsigned char* out_tail, unsigned tail) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  for (; i + 3 * stride < nvec; i += 4 * stride) {
    int4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = __ldcs(in + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u) __stcs(out + i + u * stride, v[u]);
  }
  for (; i < nvec; i += stride) __stcs(out + i, __ldcs(in + i));
  if (blockIdx.x == 0 && threadIdx.x < tail) out_tail[threadIdx.x] = in_tail[threadIdx.x];
}

}  // namespace

void launch_reference_sum(bool is_int, const void* in, std::size_t n, void* d_acc, cudaStream_t s) {
  if (n == 0) return;
  if (is_int)
    reference_sum_kernel<int, long long><<<grid_for(n), kThreads, 0, s>>>(static_cast<const int*>(in), n,
                                                                          static_cast<long long*>(d_acc));
  else
    reference_sum_kernel<float, double><<<grid_for(n), kThreads, 0, s>>>(static_cast<const float*>(in), n,
                                                                         static_cast<double*>(d_acc));
  FKB_CHECK_LAUNCH("reference_sum_kernel");
}

void launch_scan_check(bool is_int, const void* in, const void* out, std::size_t n, std::size_t tile,
                       unsigned long long* d_result, cudaStream_t s) {
  if (n == 0) return;
  if (tile == 0) tile = n;
  if (is_int)
    scan_check_int<<<grid_for(n, 65536), kThreads, 0, s>>>(static_cast<const int*>(in), static_cast<const int*>(out),
                                                           n, tile, d_result);
  else
    scan_check_float<<<grid_for(n, 65536), kThreads, 0, s>>>(static_cast<const float*>(in),
                                                             static_cast<const float*>(out), n, tile, d_result);
  FKB_CHECK_LAUNCH("scan_check");
}

void launch_scan_check_wide(const void* in, const void* out, std::size_t n, std::size_t tile,
                            unsigned long long* d_result, cudaStream_t s) {
  if (n == 0) return;
  if (tile == 0) tile = n;
  scan_check_int_wide<<<grid_for(n, 65536), kThreads, 0, s>>>(static_cast<const int*>(in),
                                                              static_cast<const long long*>(out), n, tile, d_result);
  FKB_CHECK_LAUNCH("scan_check_int_wide");
}

void launch_copy(const void* in, void* out, std::size_t bytes, int sm_count, cudaStream_t s) {
  const std::size_t nvec = bytes / 16;
  const unsigned tail = static_cast<unsigned>(bytes % 16);
  // 8 blocks of 256 threads per SM (full occupancy on sm_90): a resident wave, grid-stride.
  const unsigned grid = static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(std::size_t(8) * sm_count, (nvec + kThreads - 1) / kThreads)));
  copy_kernel<<<grid, kThreads, 0, s>>>(static_cast<const int4*>(in), static_cast<int4*>(out), nvec,
                                        static_cast<const unsigned char*>(in) + nvec * 16,
                                        static_cast<unsigned char*>(out) + nvec * 16, tail);
  FKB_CHECK_LAUNCH("copy_kernel");
}

}  // namespace fkbench
