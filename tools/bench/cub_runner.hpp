// cub::DeviceReduce calls prepared for one (op, dtype, n): the rival foldkit is timed against.
// Host-only interface so that gpu_suite.cpp never includes CUB; the instantiations live in
// three .cu files (cub_sum_int.cu, cub_sum_float.cu, cub_extrema.cu) because each CUB
// instantiation is slow to compile and they build in parallel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>

#include "foldkit/dtype.hpp"

namespace fkbench {

class CubReduce {
 public:
  virtual ~CubReduce() = default;
  // Stream-ordered. d_out receives what foldkit writes for the same op and dtype
  // (foldkit::reduce_result_t), so the two results compare byte for byte.
  virtual void run(const void* d_in, void* d_out, cudaStream_t s) = 0;
  virtual std::string api() const = 0;  // which CUB entry point, for the notes column
  std::size_t temp_bytes() const { return temp_bytes_; }

 protected:
  std::size_t temp_bytes_ = 0;
};

// Temp storage is queried and allocated here, once, outside any timing.
// Sum: i32 -> int64, u32 -> uint64 (CUB accumulates in the output type, as foldkit does);
// i64, u64, f32, f64 -> same type; f16, bf16 -> float through TransformReduce (CUB's Sum of a
// half array into a float has no plus(float, __half) and would accumulate in half otherwise).
std::unique_ptr<CubReduce> make_cub_sum(foldkit::DType dtype, std::int64_t n);
std::unique_ptr<CubReduce> make_cub_max_f32(std::int64_t n);
// The two-output ArgMax overload (value, int64 index); written into foldkit's ArgResult<float>
// layout ({float value; int64 index}).
std::unique_ptr<CubReduce> make_cub_argmax_f32(std::int64_t n);

// cub::DeviceScan::InclusiveSum of i32 or f32 (cub_scan.cu): d_out receives n elements. Used by
// `foldkit-bench ladder` beside seed 004's blocked scans.
std::unique_ptr<CubReduce> make_cub_inclusive_sum(foldkit::DType dtype, std::int64_t n);

std::string cub_version();  // "CCCL x.y.z": the version macros live in CUB's headers

namespace detail {
std::unique_ptr<CubReduce> make_cub_sum_int(foldkit::DType dtype, std::int64_t n);    // cub_sum_int.cu
std::unique_ptr<CubReduce> make_cub_sum_float(foldkit::DType dtype, std::int64_t n);  // cub_sum_float.cu
}  // namespace detail

}  // namespace fkbench
