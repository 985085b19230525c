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
#include <vector>

#include "foldkit/dtype.hpp"
#include "support/cuda_backend.hpp"
#include "support/random_arrays.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

static_assert(sizeof(__half) == sizeof(half) && alignof(__half) == alignof(half));
static_assert(sizeof(__nv_bfloat16) == sizeof(bfloat16) && alignof(__nv_bfloat16) == alignof(bfloat16));

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

}  // namespace
}  // namespace foldkit::test
