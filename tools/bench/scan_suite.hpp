// `foldkit-bench scan`: what scan_suite.cpp (plain C++) needs from the CUDA files, with a
// host-only interface so that the suite never includes CUB or device code.
//   cub_scan_suite.cu    cub::DeviceScan sums, with foldkit's output types
//   cub_scan_compare.cu  foldkit's scan output against CUB's, element by element on the device
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cub_runner.hpp"
#include "foldkit/dtype.hpp"

namespace fkbench {

// cub::DeviceScan's inclusive or exclusive sum of n elements of dtype, written as what foldkit
// writes (foldkit::scan_result_t<sum, dtype>), exclusive ones starting from 0. Temp storage is
// allocated here, outside any timing. Supported: f32, f64 (InclusiveSum / ExclusiveSum);
// i32 -> int64 (InclusiveScan / ExclusiveScan with cuda::std::plus<int64>: CUB's *Sum
// accumulates in the input type even when the output is int64, so it would wrap at 2^31 where
// foldkit does not); f16 -> f16 accumulated in float (*Scan with a float plus; each output rounded
// to half, as foldkit does). Other dtypes throw std::runtime_error.
std::unique_ptr<CubReduce> make_cub_scan_sum(bool exclusive, foldkit::DType dtype, std::int64_t n);

// Element-wise comparison of two scan outputs of out_dtype (a: foldkit, b: CUB) in device memory.
// Integers: exact. Floats: equal bits, both NaN, at most 2 ulps apart, or relative difference
// |a - b| / max(|a|, |b|) <= rel_tol; max_rel_err is the largest relative difference over pairs
// where both are finite. Synchronises `s`.
struct ScanComparison {
  std::uint64_t mismatches = 0;
  std::uint64_t first_mismatch = 0;  // an index; meaningful when mismatches > 0
  double max_rel_err = 0;
};
ScanComparison compare_scan_outputs(foldkit::DType out_dtype, const void* a, const void* b, std::size_t n,
                                    double rel_tol, cudaStream_t s);

}  // namespace fkbench
