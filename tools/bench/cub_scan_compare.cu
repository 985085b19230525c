// foldkit's scan output against CUB's, element by element on the device (see scan_suite.hpp).
// Runs once per case, untimed: written for plainness.
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "scan_suite.hpp"
#include "timing.hpp"

namespace fkbench {
namespace {

constexpr int kThreads = 256;

struct DeviceResult {
  unsigned long long mismatches;
  unsigned long long first_mismatch;  // UINT64_MAX: none
  unsigned long long max_rel_err;     // bits of a non-negative double: ordered like the value
};

template <class Bits> struct Decode;
template <> struct Decode<std::uint16_t> {  // f16
  __device__ static double value(std::uint16_t b) { return static_cast<double>(__half2float(__ushort_as_half(b))); }
};
template <> struct Decode<std::uint32_t> {  // f32
  __device__ static double value(std::uint32_t b) { return static_cast<double>(__uint_as_float(b)); }
};
template <> struct Decode<unsigned long long> {  // f64
  __device__ static double value(unsigned long long b) { return __longlong_as_double(static_cast<long long>(b)); }
};

// Sign-magnitude bits mapped onto a monotonic unsigned scale, so ulp distance is a difference.
template <class Bits> __device__ unsigned long long ordered(Bits b) {
  constexpr unsigned long long sign = 1ull << (8 * sizeof(Bits) - 1);
  const unsigned long long u = b;
  return (u & sign) ? (sign - 1 - (u & (sign - 1))) : (sign + u);
}

__device__ void record(DeviceResult* r, unsigned long long bad, unsigned long long first, double err) {
  // One atomic of each kind per warp.
  for (int off = 16; off > 0; off /= 2) {
    bad += __shfl_down_sync(0xffffffffu, bad, off);
    first = min(first, __shfl_down_sync(0xffffffffu, first, off));
    err = fmax(err, __shfl_down_sync(0xffffffffu, err, off));
  }
  if ((threadIdx.x & 31) == 0) {
    if (bad) {
      atomicAdd(&r->mismatches, bad);
      atomicMin(&r->first_mismatch, first);
    }
    if (err > 0) atomicMax(&r->max_rel_err, static_cast<unsigned long long>(__double_as_longlong(err)));
  }
}

template <class Bits>
__global__ void __launch_bounds__(kThreads) compare_exact(const Bits* a, const Bits* b, std::size_t n, DeviceResult* r) {
  unsigned long long bad = 0, first = ~0ull;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    if (a[i] != b[i]) {
      ++bad;
      first = min(first, static_cast<unsigned long long>(i));
    }
  }
  record(r, bad, first, 0.0);
}

template <class Bits>
__global__ void __launch_bounds__(kThreads)
    compare_float(const Bits* a, const Bits* b, std::size_t n, double rel_tol, DeviceResult* r) {
  unsigned long long bad = 0, first = ~0ull;
  double worst = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    const Bits ba = a[i], bb = b[i];
    if (ba == bb) continue;
    const double x = Decode<Bits>::value(ba), y = Decode<Bits>::value(bb);
    if (isnan(x) && isnan(y)) continue;
    const unsigned long long oa = ordered(ba), ob = ordered(bb);
    const bool near = (oa > ob ? oa - ob : ob - oa) <= 2;  // also +0 / -0 and the last finite / inf
    double rel = 0;
    if (isfinite(x) && isfinite(y)) {
      const double scale = fmax(fabs(x), fabs(y));
      rel = scale > 0 ? fabs(x - y) / scale : 0.0;
      worst = fmax(worst, rel);
    }
    if (!near && !(isfinite(x) && isfinite(y) && rel <= rel_tol)) {
      ++bad;
      first = min(first, static_cast<unsigned long long>(i));
    }
  }
  record(r, bad, first, worst);
}

}  // namespace

ScanComparison compare_scan_outputs(foldkit::DType out_dtype, const void* a, const void* b, std::size_t n,
                                    double rel_tol, cudaStream_t s) {
  ScanComparison out;
  if (n == 0) return out;
  DeviceResult* d = nullptr;
  FKB_CHECK(cudaMalloc(reinterpret_cast<void**>(&d), sizeof(DeviceResult)));
  try {
    const DeviceResult init{0, ~0ull, 0};
    FKB_CHECK(cudaMemcpyAsync(d, &init, sizeof init, cudaMemcpyHostToDevice, s));
    const unsigned grid = static_cast<unsigned>(std::min<std::size_t>((n + kThreads - 1) / kThreads, 8192));
    using foldkit::DType;
    switch (out_dtype) {
      case DType::i32: case DType::u32:
        compare_exact<std::uint32_t><<<grid, kThreads, 0, s>>>(static_cast<const std::uint32_t*>(a),
                                                                static_cast<const std::uint32_t*>(b), n, d);
        break;
      case DType::i64: case DType::u64:
        compare_exact<unsigned long long><<<grid, kThreads, 0, s>>>(static_cast<const unsigned long long*>(a),
                                                                     static_cast<const unsigned long long*>(b), n, d);
        break;
      case DType::f32:
        compare_float<std::uint32_t><<<grid, kThreads, 0, s>>>(static_cast<const std::uint32_t*>(a),
                                                                static_cast<const std::uint32_t*>(b), n, rel_tol, d);
        break;
      case DType::f64:
        compare_float<unsigned long long><<<grid, kThreads, 0, s>>>(static_cast<const unsigned long long*>(a),
                                                                     static_cast<const unsigned long long*>(b), n,
                                                                     rel_tol, d);
        break;
      case DType::f16:
        compare_float<std::uint16_t><<<grid, kThreads, 0, s>>>(static_cast<const std::uint16_t*>(a),
                                                                static_cast<const std::uint16_t*>(b), n, rel_tol, d);
        break;
      default: throw std::runtime_error("compare_scan_outputs: unsupported output dtype");
    }
    FKB_CHECK_LAUNCH("compare_scan_outputs");
    DeviceResult host{};
    FKB_CHECK(cudaMemcpyAsync(&host, d, sizeof host, cudaMemcpyDeviceToHost, s));
    FKB_CHECK(cudaStreamSynchronize(s));
    out.mismatches = host.mismatches;
    out.first_mismatch = host.first_mismatch;
    std::memcpy(&out.max_rel_err, &host.max_rel_err, sizeof(double));
  } catch (...) {
    cudaFree(d);
    throw;
  }
  FKB_CHECK(cudaFree(d));
  return out;
}

}  // namespace fkbench
