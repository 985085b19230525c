// foldkit::half / foldkit::bfloat16 conversions compiled for the device agree with CUDA's own
// intrinsics (__half2float, __float2half_rn, __bfloat162float, __float2bfloat16_rn): the device
// code path of dtype.hpp is the one the kernels use, and the types claim layout compatibility
// with __half and __nv_bfloat16. (The host path is checked against an independent reference in
// tests/cpu/half_conversion_test.cpp.)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "foldkit/cuda/scan.hpp"
#include "foldkit/dtype.hpp"
#include "support/cuda_backend.hpp"
#include "support/random_arrays.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

static_assert(sizeof(__half) == sizeof(half) && alignof(__half) == alignof(half));
static_assert(sizeof(__nv_bfloat16) == sizeof(bfloat16) && alignof(__nv_bfloat16) == alignof(bfloat16));
// The helpers keep constness: inputs convert to const pointers, outputs to writable ones.
static_assert(std::is_same_v<decltype(cuda::as_foldkit_half(static_cast<const __half*>(nullptr))), const half*>);
static_assert(std::is_same_v<decltype(cuda::as_foldkit_half(static_cast<__half*>(nullptr))), half*>);
static_assert(std::is_same_v<decltype(cuda::as_foldkit_bfloat16(static_cast<const __nv_bfloat16*>(nullptr))), const bfloat16*>);
static_assert(std::is_same_v<decltype(cuda::as_foldkit_bfloat16(static_cast<__nv_bfloat16*>(nullptr))), bfloat16*>);

// For every 16-bit pattern i: decode with foldkit and with CUDA.
__global__ void decode_all(float* ours_half, float* cuda_half, float* ours_bf16, float* cuda_bf16) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536) return;
  const auto bits = static_cast<unsigned short>(i);
  ours_half[i] = static_cast<float>(half::from_bits(bits));
  cuda_half[i] = __half2float(__ushort_as_half(bits));
  ours_bf16[i] = static_cast<float>(bfloat16::from_bits(bits));
  cuda_bf16[i] = __bfloat162float(__ushort_as_bfloat16(bits));
}

// For every input float: encode with foldkit and with CUDA.
__global__ void encode(const float* in, std::int64_t n, unsigned short* ours_half, unsigned short* cuda_half,
                       unsigned short* ours_bf16, unsigned short* cuda_bf16) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  ours_half[i] = half(in[i]).bits;
  cuda_half[i] = __half_as_ushort(__float2half_rn(in[i]));
  ours_bf16[i] = bfloat16(in[i]).bits;
  cuda_bf16[i] = __bfloat16_as_ushort(__float2bfloat16_rn(in[i]));
}

template <class V> std::vector<V> download(const DeviceBuffer& b, std::size_t count) {
  std::vector<V> host(count);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(host.data(), b.get(), count * sizeof(V), cudaMemcpyDeviceToHost));
  return host;
}

bool same_float(float a, float b) {  // bitwise, but any NaN equals any NaN
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

using CudaHalfDevice = CudaTest;

TEST_F(CudaHalfDevice, DecodeMatchesCudaForAllPatterns) {
  std::vector<DeviceBuffer> out;
  for (int k = 0; k < 4; ++k) out.emplace_back(65536 * sizeof(float));
  decode_all<<<256, 256>>>(out[0].as<float>(), out[1].as<float>(), out[2].as<float>(), out[3].as<float>());
  FOLDKIT_CUDA_CHECK(cudaGetLastError());
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  const auto oh = download<float>(out[0], 65536), ch = download<float>(out[1], 65536);
  const auto ob = download<float>(out[2], 65536), cb = download<float>(out[3], 65536);
  for (int i = 0; i < 65536; ++i) {
    ASSERT_TRUE(same_float(oh[i], ch[i])) << "half 0x" << std::hex << i << ": " << oh[i] << " vs CUDA " << ch[i];
    ASSERT_TRUE(same_float(ob[i], cb[i])) << "bf16 0x" << std::hex << i << ": " << ob[i] << " vs CUDA " << cb[i];
  }
}

TEST_F(CudaHalfDevice, EncodeMatchesCudaRoundToNearest) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  // Random bit patterns (every exponent) and random values inside half's range.
  const std::int64_t n = 1 << 21;
  std::vector<float> in(static_cast<std::size_t>(n));
  const CounterRng r = rng.counter();
  for (std::int64_t i = 0; i < n; ++i) {
    if (i % 2 == 0) {
      const auto bits = static_cast<std::uint32_t>(r.bits(i));
      std::memcpy(&in[static_cast<std::size_t>(i)], &bits, 4);
    } else {
      in[static_cast<std::size_t>(i)] = static_cast<float>(std::ldexp(2.0 * r.unit(i) - 1.0, static_cast<int>(r.bits(~i) % 44) - 26));
    }
  }
  const DeviceBuffer d_in(n * sizeof(float));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(d_in.get(), in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  std::vector<DeviceBuffer> out;
  for (int k = 0; k < 4; ++k) out.emplace_back(n * sizeof(unsigned short));
  encode<<<static_cast<unsigned>((n + 255) / 256), 256>>>(d_in.as<float>(), n, out[0].as<unsigned short>(),
                                                          out[1].as<unsigned short>(), out[2].as<unsigned short>(),
                                                          out[3].as<unsigned short>());
  FOLDKIT_CUDA_CHECK(cudaGetLastError());
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  const auto oh = download<unsigned short>(out[0], n), ch = download<unsigned short>(out[1], n);
  const auto ob = download<unsigned short>(out[2], n), cb = download<unsigned short>(out[3], n);
  auto is_nan16 = [](unsigned short b, int mant_bits) {
    const unsigned exp_mask = (0x7fffu >> mant_bits) << mant_bits;
    return (b & exp_mask) == exp_mask && (b & ((1u << mant_bits) - 1)) != 0;
  };
  for (std::int64_t i = 0; i < n; ++i) {
    const std::size_t k = static_cast<std::size_t>(i);
    const bool half_ok = oh[k] == ch[k] || (is_nan16(oh[k], 10) && is_nan16(ch[k], 10));
    const bool bf16_ok = ob[k] == cb[k] || (is_nan16(ob[k], 7) && is_nan16(cb[k], 7));
    ASSERT_TRUE(half_ok) << std::hexfloat << in[k] << " -> half 0x" << std::hex << oh[k] << ", CUDA 0x" << ch[k];
    ASSERT_TRUE(bf16_ok) << std::hexfloat << in[k] << " -> bf16 0x" << std::hex << ob[k] << ", CUDA 0x" << cb[k];
  }
}

// A max scan of CUDA's own __half and __nv_bfloat16 arrays writes them through the non-const
// helpers (issue #21: only const forms existed, so there was no helper for an output).
TEST_F(CudaHalfDevice, ScanOfCudaTypesThroughTheHelpers) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const std::int64_t n = 100003;
  const CounterRng r = rng.counter();
  std::vector<__half> h(static_cast<std::size_t>(n));
  std::vector<__nv_bfloat16> b(h.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(r.in_range<int>(i, -1000, 1000)) / 8.0f;  // exact in both types
    h[static_cast<std::size_t>(i)] = __float2half_rn(v);
    b[static_cast<std::size_t>(i)] = __float2bfloat16_rn(v);
  }
  const DeviceBuffer dh(n * 2), db(n * 2), oh(n * 2), ob(n * 2);
  FOLDKIT_CUDA_CHECK(cudaMemcpy(dh.get(), h.data(), n * 2, cudaMemcpyHostToDevice));
  FOLDKIT_CUDA_CHECK(cudaMemcpy(db.get(), b.data(), n * 2, cudaMemcpyHostToDevice));
  FOLDKIT_CUDA_CHECK(cudaMemset(oh.get(), 0xff, n * 2));
  FOLDKIT_CUDA_CHECK(cudaMemset(ob.get(), 0xff, n * 2));
  const __half* in_h = dh.as<__half>();
  __half* out_h = oh.as<__half>();
  const __nv_bfloat16* in_b = db.as<__nv_bfloat16>();
  __nv_bfloat16* out_b = ob.as<__nv_bfloat16>();
  cuda::inclusive_scan<ReduceOp::max>(cuda::as_foldkit_half(in_h), n, cuda::as_foldkit_half(out_h));
  cuda::inclusive_scan<ReduceOp::max>(cuda::as_foldkit_bfloat16(in_b), n, cuda::as_foldkit_bfloat16(out_b));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  const auto got_h = download<__half>(oh, h.size());
  const auto got_b = download<__nv_bfloat16>(ob, b.size());
  float run_h = -INFINITY, run_b = -INFINITY;
  for (std::size_t i = 0; i < h.size(); ++i) {
    run_h = std::fmax(run_h, __half2float(h[i]));
    run_b = std::fmax(run_b, __bfloat162float(b[i]));
    ASSERT_EQ(__half2float(got_h[i]), run_h) << "half max scan at " << i;
    ASSERT_EQ(__bfloat162float(got_b[i]), run_b) << "bf16 max scan at " << i;
  }
}

}  // namespace
}  // namespace foldkit::test
