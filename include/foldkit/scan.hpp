// Prefix scans: the types they produce, and the CPU backend (host memory).
//
//   foldkit::cpu::inclusive_scan<foldkit::ReduceOp::sum>(in, n, out);       // out[i] = in[0] + ... + in[i]
//   foldkit::cpu::exclusive_scan<foldkit::ReduceOp::sum>(in, n, out, init); // out[i] = init + in[0] + ... + in[i-1]
//   foldkit::cpu::inclusive_scan_blocked<foldkit::ReduceOp::max>(in, n, out, 1000);  // each 1000 on its own
//
// Ops: sum, prod, min, max (ReduceOp; mean/argmin/argmax are not scans: Errc::unsupported).
// Output type scan_result_t<Op, T>: integer sums and products widen to 64 bits (as the core's
// reductions do, so a prefix never silently overflows 32 bits); half/bf16 accumulate in float and
// each output is rounded to half/bf16; min/max and float/double keep T.
// In place: out may equal in when scan_result_t<Op, T> is T (any other overlap is an error).
// Blocked scan: the array is cut into consecutive blocks of block_length elements (any positive
// length; the last block may be shorter), each scanned on its own (seed 004's "blocked prefix sum").
// Segmented scan: segment s covers [offsets[s], offsets[s + 1]) (offsets has num_segments + 1
// entries, non-decreasing, offsets[0] == 0, offsets[num_segments] == n; empty segments allowed),
// each scanned on its own; exclusive segmented scans start every segment at init.
// Deterministic: the same input gives the same bits (fixed chunking, independent of threads).
// NaN: min/max propagate NaN as the core's min/max do (a NaN wins from where it appears on).
#pragma once

#include <cstdint>
#include <type_traits>

#include "foldkit/dtype.hpp"
#include "foldkit/error.hpp"
#include "foldkit/ops.hpp"

namespace foldkit {

// The element type a scan writes.
template <ReduceOp Op, class T>
using scan_result_t =
    std::conditional_t<(Op == ReduceOp::sum || Op == ReduceOp::prod) && std::is_integral_v<T>,
                       std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>, T>;
// The type a scan accumulates in: float for half/bf16, else its result type.
template <ReduceOp Op, class T>
using scan_accum_t = std::conditional_t<is_16bit_float_v<T>, float, scan_result_t<Op, T>>;

constexpr bool is_scan_op(ReduceOp op) {
  return op == ReduceOp::sum || op == ReduceOp::prod || op == ReduceOp::min || op == ReduceOp::max;
}

namespace cpu {

// Throws Error: invalid_argument (null pointer with n > 0, n < 0, block_length < 1, bad
// offsets, out overlapping in other than exactly in place with equal types), wrong_memory
// (device pointers in builds with CUDA), unsupported (an op that is not a scan op).
template <ReduceOp Op, class T>
void inclusive_scan(const T* in, std::int64_t n, scan_result_t<Op, T>* out);
template <ReduceOp Op, class T>
void exclusive_scan(const T* in, std::int64_t n, scan_result_t<Op, T>* out, scan_result_t<Op, T> init);

template <ReduceOp Op, class T>
void inclusive_scan_blocked(const T* in, std::int64_t n, scan_result_t<Op, T>* out, std::int64_t block_length);
template <ReduceOp Op, class T>
void exclusive_scan_blocked(const T* in, std::int64_t n, scan_result_t<Op, T>* out, std::int64_t block_length,
                            scan_result_t<Op, T> init);

template <ReduceOp Op, class T>
void inclusive_scan_segmented(const T* in, std::int64_t n, scan_result_t<Op, T>* out, const std::int64_t* offsets,
                              std::int64_t num_segments);
template <ReduceOp Op, class T>
void exclusive_scan_segmented(const T* in, std::int64_t n, scan_result_t<Op, T>* out, const std::int64_t* offsets,
                              std::int64_t num_segments, scan_result_t<Op, T> init);

}  // namespace cpu
}  // namespace foldkit
