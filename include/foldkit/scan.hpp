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
#include <vector>

#include "foldkit/detail/scan_heads.hpp"
#include "foldkit/dtype.hpp"
#include "foldkit/error.hpp"
#include "foldkit/ops.hpp"
#include "foldkit/reduce.hpp"  // detail::parallel_for_chunks, kReduceChunk, check_host_input
#include "foldkit/scalar.hpp"  // the init of the type-erased exclusive scans

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

// The dtype of scan_result_t<op, dtype>: what a type-erased scan writes.
constexpr DType scan_result_dtype(ReduceOp op, DType dtype) {
  if (op == ReduceOp::sum || op == ReduceOp::prod) {
    if (dtype == DType::i32) return DType::i64;
    if (dtype == DType::u32) return DType::u64;
  }
  return dtype;
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

// Type-erased forms (op and dtype chosen at run time; parameters otherwise as the typed forms
// above): `in` holds n elements of dtype, `out` receives n elements of scan_result_dtype(op,
// dtype). `init` is a Scalar (foldkit/scalar.hpp) of any dtype, e.g. a std::int32_t for an i32
// sum whose result type is i64: it must convert EXACTLY to scan_result_dtype(op, dtype) (integer
// in range; a float value that round-trips, NaN allowed for float results), else
// Error(invalid_argument) naming the value and both dtypes, before anything is written.
// Throws Error(unsupported) for an op that is not a scan op, or an op or dtype outside the
// enumerations; otherwise as the typed forms.
void inclusive_scan(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out);
void exclusive_scan(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out, Scalar init);

void inclusive_scan_blocked(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out,
                            std::int64_t block_length);
void exclusive_scan_blocked(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out,
                            std::int64_t block_length, Scalar init);

void inclusive_scan_segmented(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out,
                              const std::int64_t* offsets, std::int64_t num_segments);
void exclusive_scan_segmented(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out,
                              const std::int64_t* offsets, std::int64_t num_segments, Scalar init);

namespace detail {

// Argument checks shared with the built-in scans (src/cpu/scan_cpu.cpp): invalid_argument for
// block_length < 1, and for offsets that break the segmented contract (wrong_memory for device
// offsets).
void check_scan_block_length(std::int64_t block_length);
void check_scan_offsets(const std::int64_t* offsets, std::int64_t num_segments, std::int64_t n);

// A user operator's scan, in fixed chunks (detail::kReduceChunk, independent of the thread
// count), restarting from `seed` at every head (Heads: WholeArray, Blocks or Segments,
// foldkit/detail/scan_heads.hpp; seed: the identity for inclusive scans, init for exclusive ones):
//   pass 1 summarizes each chunk: the fold from `identity` over the elements after its last
//          head, combined on the right of `seed` (the chunk restarts its successor's carry), or,
//          with no head, the fold of the whole chunk;
//   a serial left fold gives every chunk its carry (carry[0] = seed);
//   pass 2 rescans each chunk from its carry, left to right, restarting at each head.
// The bits depend only on the input, never on the threads; F needs associativity, not
// commutativity.
template <bool kInclusive, class T, class F, class Heads>
void scan_custom(const T* in, std::int64_t n, T* out, F& op, T identity, T seed, const Heads& heads) {
  check_host_input(in, n);
  check_host_input(out, n);
  const auto in0 = reinterpret_cast<std::uintptr_t>(in), out0 = reinterpret_cast<std::uintptr_t>(out);
  const auto bytes = static_cast<std::uintptr_t>(n) * sizeof(T);
  if (n > 0 && in0 != out0 && in0 < out0 + bytes && out0 < in0 + bytes)
    throw Error(Errc::invalid_argument, "scan: input and output overlap other than exactly in place");
  const std::int64_t chunks = (n + kReduceChunk - 1) / kReduceChunk;
  std::vector<T> carry(static_cast<std::size_t>(chunks > 0 ? chunks : 1), seed);
  struct Ctx {
    const T* in;
    T* out;
    std::int64_t n;
    F* op;
    T identity;
    T seed;
    const Heads* heads;
    T* carry;
  };
  Ctx ctx{in, out, n, &op, identity, seed, &heads, carry.data()};
  if (chunks > 1) {
    struct Summary {
      T value;
      bool restarts;
    };
    std::vector<Summary> summary(static_cast<std::size_t>(chunks - 1), Summary{identity, false});
    struct SummaryCtx {
      Ctx* x;
      Summary* summary;
    } sctx{&ctx, summary.data()};
    parallel_for_chunks(
        chunks - 1,
        [](void* p, std::int64_t c) {
          auto& t = *static_cast<SummaryCtx*>(p);
          const Ctx& x = *t.x;
          const std::int64_t b = c * kReduceChunk, e = b + kReduceChunk;
          const std::int64_t h = x.heads->last_head(b, e);
          T acc = x.identity;
          for (std::int64_t i = h < 0 ? b : h; i < e; ++i) acc = (*x.op)(acc, x.in[i]);
          t.summary[c] = h < 0 ? Summary{acc, false} : Summary{(*x.op)(x.seed, acc), true};
        },
        &sctx);
    for (std::int64_t c = 1; c < chunks; ++c) {
      const Summary& s = summary[static_cast<std::size_t>(c - 1)];
      carry[static_cast<std::size_t>(c)] = s.restarts ? s.value : op(carry[static_cast<std::size_t>(c - 1)], s.value);
    }
  }
  parallel_for_chunks(
      chunks,
      [](void* p, std::int64_t c) {
        const Ctx& x = *static_cast<Ctx*>(p);
        const std::int64_t b = c * kReduceChunk;
        const std::int64_t e = b + kReduceChunk < x.n ? b + kReduceChunk : x.n;
        auto cursor = x.heads->cursor(b);
        std::int64_t head = cursor.next(b, e);
        T running = x.carry[c];
        for (std::int64_t i = b; i < e; ++i) {
          if (i == head) {
            running = x.seed;
            head = cursor.next(i + 1, e);
          }
          const T v = x.in[i];  // read before the write: in place is allowed
          if constexpr (kInclusive) {
            running = (*x.op)(running, v);
            x.out[i] = running;
          } else {
            x.out[i] = running;
            running = (*x.op)(running, v);
          }
        }
      },
      &ctx);
}

}  // namespace detail

// Scans with a user-supplied associative operator F (callable as T(T, T)) and its identity
// (op(identity, x) == x == op(x, identity)); F need not be commutative (chunks are folded and
// carried left to right) and is called from several threads at once. In place (out == in) is
// allowed; other overlap is invalid_argument.
template <class T, class F>
void inclusive_scan_custom(const T* in, std::int64_t n, T* out, F op, T identity) {
  detail::scan_custom<true>(in, n, out, op, identity, identity, detail::WholeArray{});
}
// out[0] = init, out[i] = init op in[0] op ... op in[i-1].
template <class T, class F>
void exclusive_scan_custom(const T* in, std::int64_t n, T* out, F op, T identity, T init) {
  detail::scan_custom<false>(in, n, out, op, identity, init, detail::WholeArray{});
}

// Blocked and segmented forms (semantics as inclusive_scan_blocked / _segmented above; every
// exclusive block or segment starts at init).
template <class T, class F>
void inclusive_scan_custom_blocked(const T* in, std::int64_t n, T* out, std::int64_t block_length, F op, T identity) {
  detail::check_scan_block_length(block_length);
  detail::scan_custom<true>(in, n, out, op, identity, identity, detail::Blocks{block_length});
}
template <class T, class F>
void exclusive_scan_custom_blocked(const T* in, std::int64_t n, T* out, std::int64_t block_length, F op, T identity,
                                   T init) {
  detail::check_scan_block_length(block_length);
  detail::scan_custom<false>(in, n, out, op, identity, init, detail::Blocks{block_length});
}
template <class T, class F>
void inclusive_scan_custom_segmented(const T* in, std::int64_t n, T* out, const std::int64_t* offsets,
                                     std::int64_t num_segments, F op, T identity) {
  detail::check_scan_offsets(offsets, num_segments, n);
  detail::scan_custom<true>(in, n, out, op, identity, identity, detail::Segments{offsets, num_segments});
}
template <class T, class F>
void exclusive_scan_custom_segmented(const T* in, std::int64_t n, T* out, const std::int64_t* offsets,
                                     std::int64_t num_segments, F op, T identity, T init) {
  detail::check_scan_offsets(offsets, num_segments, n);
  detail::scan_custom<false>(in, n, out, op, identity, init, detail::Segments{offsets, num_segments});
}

}  // namespace cpu
}  // namespace foldkit
