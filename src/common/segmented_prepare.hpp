// The checks every segmented reduction makes before it writes anything, shared by the CPU backend
// (src/cpu/segmented_reduce_cpu.cpp) and the CUDA backend (src/cuda/segmented_reduce.cu).
// Internal: nothing here touches the memory the pointers point to (memory spaces are each
// backend's own check, offsets' values are checked by check_offset_values on the host and by a
// kernel on the device).
#pragma once

#include <cstdint>
#include <string>

#include "foldkit/dtype.hpp"
#include "foldkit/ops.hpp"

namespace foldkit::detail {

// One segmented call's arguments. Exactly one of `offsets` (num_segments + 1 entries) or the
// `begin`/`end` pair (num_segments entries each) describes the segments: by_offsets says which.
// `values` is segmented_arg_reduce's second output (null for segmented_reduce).
struct SegmentedCall {
  const char* api;  // "segmented_reduce" or "segmented_arg_reduce", for messages
  ReduceOp op;
  DType dtype;
  const void* in;
  std::int64_t n;
  bool by_offsets;
  const std::int64_t* offsets;
  const std::int64_t* begin;
  const std::int64_t* end;
  std::int64_t num_segments;
  void* out;     // num_segments elements of reduce_result_dtype(op, dtype) (arg ops: int64 indices)
  bool two_outputs;  // segmented_arg_reduce: indices in `out`, values in `values`
  void* values;      // two_outputs: num_segments elements of dtype; else null
};

// Throws Error: unsupported (op or dtype outside the enumerations), invalid_argument (n < 0,
// num_segments < 0, segmented_arg_reduce with an op other than argmin/argmax, a null pointer
// that would be read or written, an output overlapping the input, the offsets or the other
// output). The null rules (the README's validation rule): `offsets` always has num_segments + 1
// >= 1 entries, so it is never null; `in` may be null only when n == 0; begin, end and the
// outputs may be null only when num_segments == 0.
void check_segmented_call(const SegmentedCall& c);

// The first bad entry of offsets (num_segments + 1 entries, host memory): the smallest i with
// offsets[i] outside [0, n] or (i < num_segments and offsets[i] > offsets[i + 1]); -1 if none.
std::int64_t first_bad_offset(const std::int64_t* offsets, std::int64_t num_segments, std::int64_t n);
// The Error message for the bad entry i, given offsets[i] and (for i < num_segments) offsets[i + 1].
// One text for both backends (the CUDA validate_offsets fetches the two values and calls it).
std::string bad_offset_message(std::int64_t i, std::int64_t value, std::int64_t next, std::int64_t num_segments,
                               std::int64_t n);
// Throws Error(invalid_argument) with bad_offset_message for the first bad entry, if any.
void check_offset_values(const std::int64_t* offsets, std::int64_t num_segments, std::int64_t n);

// The rules themselves, one definition for the host checks and the CUDA validation kernels
// (src/cuda/segmented_reduce_prepare.cuh). An offset is outside [0, n]; offsets[i] is bad when
// it is outside or (i < num_segments) greater than offsets[i + 1] (`next`).
// (n >= 0: one unsigned compare, as in the group path's prepare kernel, where it runs once an offset.)
FOLDKIT_HD bool offset_outside(std::int64_t v, std::int64_t n) {
  return static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(n);
}
FOLDKIT_HD bool bad_offset(std::int64_t v, bool has_next, std::int64_t next, std::int64_t n) {
  return offset_outside(v, n) || (has_next && v > next);
}
// Begin/end pairs: segment s is bad when begin[s] < 0, end[s] > n or begin[s] > end[s].
FOLDKIT_HD bool bad_begin_end(std::int64_t b, std::int64_t e, std::int64_t n) { return b < 0 || e > n || b > e; }
std::string bad_begin_end_message(std::int64_t s, std::int64_t b, std::int64_t e, std::int64_t n);

}  // namespace foldkit::detail
