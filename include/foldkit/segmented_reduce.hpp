// Segmented reductions (issue #22): one reduction per segment of a 1-D array, segments given by
// offsets. The CPU backend; the CUDA backend's forms: foldkit/cuda/segmented_reduce.hpp.
//
//   // segment s covers [offsets[s], offsets[s + 1]): 3 segments of lengths 2, 0, 3
//   const std::int64_t offsets[] = {0, 2, 2, 5};
//   float sums[3];
//   foldkit::cpu::segmented_reduce(foldkit::ReduceOp::sum, foldkit::DType::f32, x, 5, offsets, 3, sums);
//
// Two ways to give the segments (as CUB's DeviceSegmentedReduce):
//   - offsets: num_segments + 1 entries, non-decreasing, every one in [0, n]; segment s is
//     [offsets[s], offsets[s + 1]) (the first need not be 0 nor the last n);
//   - begin/end pairs: segment s is [begin[s], end[s]), begin[s] <= end[s], both in [0, n];
//     segments may overlap and come in any order.
// Every op of the core (sum, prod, min, max, mean, argmin, argmax) and dtype, with the core's
// result dtypes (reduce_result_dtype in foldkit/tensor_reduce.hpp: argmin/argmax write an int64
// index), NaN rules and tie rules. The index of argmin/argmax is RELATIVE to the segment's start
// (as CUB's and as the tensor argmax along an axis). segmented_arg_reduce writes the values too.
// Empty segments never throw; each gets (the "empty segment rule"):
//   sum 0, prod 1, mean NaN (the core's empty results);
//   min: the largest value of the result type (+inf for floating types), max: the lowest (-inf);
//   argmin/argmax: index -1, and value as min/max above.
// Determinism: a segment's value is bit for bit foldkit::cpu::reduce<Op, T> over its elements
// (argmin/argmax: the same index, relative to the segment's start, and value), for every length,
// in both forms; so it depends only on the segment's elements, never on the other segments or the
// thread count. (Empty segments follow the empty segment rule where cpu::reduce would throw.)
// Threads: the segments are cut into work items of about equal ELEMENT counts (a very long
// segment into several, their chunk partials folded in order) and run on the CPU backend's pool.
// Pointers (the README's validation rule): `offsets` always has num_segments + 1 >= 1 entries, so
// it is never null, and its entries are checked even for num_segments == 0; `in` may be null only
// when n == 0; begin/end and the outputs only when num_segments == 0 (nothing is read or written).
// Bad input (Error(invalid_argument), nothing written): n < 0, num_segments < 0, a null pointer
// that would be read or written, offsets decreasing or out of [0, n] (the message names the first
// bad entry), a begin/end pair with begin > end or outside [0, n] (names the segment), an output
// overlapping the input, the offsets or the other output; segmented_arg_reduce with an op other
// than argmin/argmax; wrong_memory for device pointers; unsupported for an op or dtype outside
// the enumerations.
#pragma once

#include <cstdint>

#include "foldkit/dtype.hpp"
#include "foldkit/ops.hpp"
#include "foldkit/tensor_reduce.hpp"  // reduce_result_dtype

namespace foldkit::cpu {

// `out` receives num_segments elements of reduce_result_dtype(op, dtype).
void segmented_reduce(ReduceOp op, DType dtype, const void* in, std::int64_t n, const std::int64_t* offsets,
                      std::int64_t num_segments, void* out);
void segmented_reduce(ReduceOp op, DType dtype, const void* in, std::int64_t n, const std::int64_t* begin_offsets,
                      const std::int64_t* end_offsets, std::int64_t num_segments, void* out);

// argmin/argmax with both outputs: `indices` (num_segments int64, relative to each segment's
// start; -1 for an empty segment) and `values` (num_segments elements of dtype: the extreme
// element, as cpu::reduce's ArgResult::value; an empty segment's is the empty segment rule's).
void segmented_arg_reduce(ReduceOp op, DType dtype, const void* in, std::int64_t n, const std::int64_t* offsets,
                          std::int64_t num_segments, std::int64_t* indices, void* values);

}  // namespace foldkit::cpu
