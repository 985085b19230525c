// foldkit::cpu scans (foldkit/scan.hpp): argument checks, the chunked driver, and the explicit
// instantiations. The per-chunk kernels and the algorithm are described in scan_chunk.hpp.
//
// Deterministic: the chunks, the per-chunk kernels and the left-to-right fold of chunk
// summaries are fixed; threads only decide who computes a chunk. The serial path (small inputs,
// one thread, or called from inside a parallel region) computes exactly the same carries as the
// parallel one, so every thread count gives the same bits.
#include <omp.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/scan_chunk.hpp"
#include "foldkit/reduce.hpp"
#include "foldkit/scan.hpp"

namespace foldkit::cpu {
namespace detail {
namespace {

// Below this much input one thread is faster than a fork/join and a second read of the input.
constexpr std::int64_t kMinParallelScanBytes = std::int64_t{1} << 18;

// ---- argument checks -------------------------------------------------------------------------

void check_scan_op(ReduceOp op) {
  if (!is_scan_op(op))
    throw Error(Errc::unsupported, std::string(op_name(op)) + " (ReduceOp " + std::to_string(static_cast<int>(op)) +
                                       ") is not a scan op; scans support sum, prod, min and max");
}

// in/out: n elements of in_size and out_size bytes. out == in is allowed only when the types
// are equal (same_type); any other overlap is an error.
void check_scan_io(const void* in, std::size_t in_size, const void* out, std::size_t out_size, std::int64_t n,
                   bool same_type) {
  if (n < 0) throw Error(Errc::invalid_argument, "n = " + std::to_string(n) + " is negative");
  if (n == 0) return;  // nothing is read or written: any pointers will do
  if (in == nullptr) throw Error(Errc::invalid_argument, "in is null but n = " + std::to_string(n));
  if (out == nullptr) throw Error(Errc::invalid_argument, "out is null but n = " + std::to_string(n));
  check_host_input(in, n);   // wrong_memory for device pointers
  check_host_input(out, n);
  if (in == out) {
    if (!same_type)
      throw Error(Errc::invalid_argument,
                  "in place (out == in) needs the output type to equal the input type; this scan widens " +
                      std::to_string(in_size) + "-byte elements to " + std::to_string(out_size) + " bytes");
    return;
  }
  // Unsigned arithmetic: no overflow UB even for absurd n.
  const auto a = reinterpret_cast<std::uintptr_t>(in), b = reinterpret_cast<std::uintptr_t>(out);
  const std::uintptr_t a_end = a + static_cast<std::uintptr_t>(n) * in_size;
  const std::uintptr_t b_end = b + static_cast<std::uintptr_t>(n) * out_size;
  if (a < b_end && b < a_end)
    throw Error(Errc::invalid_argument, "out overlaps in without being exactly in place (out == in)");
}

void check_block_length(std::int64_t block_length) {
  if (block_length < 1)
    throw Error(Errc::invalid_argument, "block_length = " + std::to_string(block_length) + " is not positive");
}

void check_offsets(const std::int64_t* offsets, std::int64_t num_segments, std::int64_t n) {
  if (num_segments < 0)
    throw Error(Errc::invalid_argument, "num_segments = " + std::to_string(num_segments) + " is negative");
  if (num_segments == 0) {
    if (n != 0) throw Error(Errc::invalid_argument, "no segments, but n = " + std::to_string(n));
    if (offsets == nullptr) return;  // nothing to read
  }
  if (offsets == nullptr)
    throw Error(Errc::invalid_argument, "offsets is null but num_segments = " + std::to_string(num_segments));
  check_host_input(offsets, 1);  // wrong_memory for device pointers (the probe needs one element)
  if (offsets[0] != 0)
    throw Error(Errc::invalid_argument, "offsets[0] = " + std::to_string(offsets[0]) + ", must be 0");
  for (std::int64_t s = 0; s < num_segments; ++s)
    if (offsets[s + 1] < offsets[s])
      throw Error(Errc::invalid_argument, "offsets decrease: offsets[" + std::to_string(s) + "] = " +
                                              std::to_string(offsets[s]) + " > offsets[" + std::to_string(s + 1) +
                                              "] = " + std::to_string(offsets[s + 1]));
  if (offsets[num_segments] != n)
    throw Error(Errc::invalid_argument, "offsets[num_segments] = " + std::to_string(offsets[num_segments]) +
                                            ", must equal n = " + std::to_string(n));
}

template <ReduceOp Op, class T>
void check_io(const T* in, std::int64_t n, const scan_result_t<Op, T>* out) {
  using R = scan_result_t<Op, T>;
  check_scan_io(in, sizeof(T), out, sizeof(R), n, std::is_same_v<R, T>);
}

// ---- the driver ------------------------------------------------------------------------------

template <ReduceOp Op, class T, bool kInclusive, class Heads>
struct ScanJob {
  using St = ScanTraits<Op, T>;
  using A = typename St::A;
  const T* in;
  std::int64_t n;
  scan_result_t<Op, T>* out;
  A seed;
  Heads heads;
  ChunkSummary<A>* summaries;  // pass 1 output
  const A* carries;            // pass 2 input

  std::int64_t end_of(std::int64_t c) const { return c * kScanChunk + kScanChunk < n ? c * kScanChunk + kScanChunk : n; }
  static void summarize(void* p, std::int64_t c) {
    const auto& job = *static_cast<const ScanJob*>(p);
    job.summaries[c] = summarize_chunk<Op, T>(job.in, c * kScanChunk, job.end_of(c), job.seed, job.heads);
  }
  static void rescan(void* p, std::int64_t c) {
    const auto& job = *static_cast<const ScanJob*>(p);
    scan_chunk<Op, T, kInclusive>(job.in, job.out, c * kScanChunk, job.end_of(c), job.carries[c], job.seed, job.heads);
  }
};

template <ReduceOp Op, class T, bool kInclusive, class Heads>
void run_scan(const T* in, std::int64_t n, scan_result_t<Op, T>* out, scan_accum_t<Op, T> seed, const Heads& heads) {
  using Job = ScanJob<Op, T, kInclusive, Heads>;
  using St = typename Job::St;
  using A = typename St::A;
  if (n == 0) return;
  const typename St::F f{};
  const std::int64_t chunks = (n + kScanChunk - 1) / kScanChunk;
  Job job{in, n, out, seed, heads, nullptr, nullptr};

  const bool parallel = chunks >= 2 && n * static_cast<std::int64_t>(sizeof(T)) >= kMinParallelScanBytes &&
                        omp_get_max_threads() > 1 && !omp_in_parallel();
  if (!parallel) {
    // One chunk at a time, each while it is in cache. Chunk 0 starts at a head, so the first
    // carry is never used. The carry handed on equals the parallel path's fold: for exact ops
    // any order gives it; for float ops a chunk with a head ends on the very fold pass 1 does,
    // and a chunk without one adds its lane total (taken before pass 2 may overwrite in place).
    A carry = seed;
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t b = c * kScanChunk, e = job.end_of(c);
      if (St::kExact || heads.last_head(b, e) >= 0) {
        carry = scan_chunk<Op, T, kInclusive>(in, out, b, e, carry, seed, heads);
      } else {
        const A total = reduce_chunk<Op, T>(in + b, e - b, b);
        scan_chunk<Op, T, kInclusive>(in, out, b, e, carry, seed, heads);
        carry = f(carry, total);
      }
    }
    return;
  }

  // Pass 1 for every chunk but the last (its summary would feed nothing), then the fold.
  std::vector<ChunkSummary<A>> summaries(static_cast<std::size_t>(chunks - 1));
  std::vector<A> carries(static_cast<std::size_t>(chunks));
  job.summaries = summaries.data();
  parallel_for_chunks(chunks - 1, &Job::summarize, &job);
  A carry = seed;
  for (std::int64_t c = 0; c < chunks; ++c) {
    carries[static_cast<std::size_t>(c)] = carry;
    if (c + 1 < chunks) {
      const ChunkSummary<A>& s = summaries[static_cast<std::size_t>(c)];
      carry = s.restarts ? s.value : f(carry, s.value);
    }
  }
  job.carries = carries.data();
  parallel_for_chunks(chunks, &Job::rescan, &job);
}

template <ReduceOp Op, class T> scan_accum_t<Op, T> identity_seed() { return ScanTraits<Op, T>::F::identity(); }
template <ReduceOp Op, class T> scan_accum_t<Op, T> init_seed(scan_result_t<Op, T> init) {
  return ScanTraits<Op, T>::accum(init);
}

}  // namespace
}  // namespace detail

// Every entry point checks the op at run time (an op that is not a scan op is Errc::unsupported
// even when reached through an instantiation for it), then its arguments, then scans.

template <ReduceOp Op, class T>
void inclusive_scan(const T* in, std::int64_t n, scan_result_t<Op, T>* out) {
  detail::check_scan_op(Op);
  if constexpr (is_scan_op(Op)) {
    detail::check_io<Op, T>(in, n, out);
    detail::run_scan<Op, T, true>(in, n, out, detail::identity_seed<Op, T>(), detail::WholeArray{});
  }
}

template <ReduceOp Op, class T>
void exclusive_scan(const T* in, std::int64_t n, scan_result_t<Op, T>* out, scan_result_t<Op, T> init) {
  detail::check_scan_op(Op);
  if constexpr (is_scan_op(Op)) {
    detail::check_io<Op, T>(in, n, out);
    detail::run_scan<Op, T, false>(in, n, out, detail::init_seed<Op, T>(init), detail::WholeArray{});
  }
}

template <ReduceOp Op, class T>
void inclusive_scan_blocked(const T* in, std::int64_t n, scan_result_t<Op, T>* out, std::int64_t block_length) {
  detail::check_scan_op(Op);
  if constexpr (is_scan_op(Op)) {
    detail::check_io<Op, T>(in, n, out);
    detail::check_block_length(block_length);
    detail::run_scan<Op, T, true>(in, n, out, detail::identity_seed<Op, T>(), detail::Blocks{block_length});
  }
}

template <ReduceOp Op, class T>
void exclusive_scan_blocked(const T* in, std::int64_t n, scan_result_t<Op, T>* out, std::int64_t block_length,
                            scan_result_t<Op, T> init) {
  detail::check_scan_op(Op);
  if constexpr (is_scan_op(Op)) {
    detail::check_io<Op, T>(in, n, out);
    detail::check_block_length(block_length);
    detail::run_scan<Op, T, false>(in, n, out, detail::init_seed<Op, T>(init), detail::Blocks{block_length});
  }
}

template <ReduceOp Op, class T>
void inclusive_scan_segmented(const T* in, std::int64_t n, scan_result_t<Op, T>* out, const std::int64_t* offsets,
                              std::int64_t num_segments) {
  detail::check_scan_op(Op);
  if constexpr (is_scan_op(Op)) {
    detail::check_io<Op, T>(in, n, out);
    detail::check_offsets(offsets, num_segments, n);
    detail::run_scan<Op, T, true>(in, n, out, detail::identity_seed<Op, T>(),
                                  detail::Segments{offsets, num_segments});
  }
}

template <ReduceOp Op, class T>
void exclusive_scan_segmented(const T* in, std::int64_t n, scan_result_t<Op, T>* out, const std::int64_t* offsets,
                              std::int64_t num_segments, scan_result_t<Op, T> init) {
  detail::check_scan_op(Op);
  if constexpr (is_scan_op(Op)) {
    detail::check_io<Op, T>(in, n, out);
    detail::check_offsets(offsets, num_segments, n);
    detail::run_scan<Op, T, false>(in, n, out, detail::init_seed<Op, T>(init),
                                   detail::Segments{offsets, num_segments});
  }
}

// The four scan ops x 8 dtypes; also mean/argmin/argmax, which throw Errc::unsupported, so that
// the documented error is what a caller gets rather than a link error.
#define FOLDKIT_CPU_SCAN_INSTANTIATE(OP, T)                                                                       \
  template void inclusive_scan<OP, T>(const T*, std::int64_t, scan_result_t<OP, T>*);                            \
  template void exclusive_scan<OP, T>(const T*, std::int64_t, scan_result_t<OP, T>*, scan_result_t<OP, T>);      \
  template void inclusive_scan_blocked<OP, T>(const T*, std::int64_t, scan_result_t<OP, T>*, std::int64_t);      \
  template void exclusive_scan_blocked<OP, T>(const T*, std::int64_t, scan_result_t<OP, T>*, std::int64_t,       \
                                              scan_result_t<OP, T>);                                            \
  template void inclusive_scan_segmented<OP, T>(const T*, std::int64_t, scan_result_t<OP, T>*,                  \
                                                const std::int64_t*, std::int64_t);                              \
  template void exclusive_scan_segmented<OP, T>(const T*, std::int64_t, scan_result_t<OP, T>*,                  \
                                                const std::int64_t*, std::int64_t, scan_result_t<OP, T>);

#define FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(T)          \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::sum, T)     \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::prod, T)    \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::min, T)     \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::max, T)     \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::mean, T)    \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::argmin, T)  \
  FOLDKIT_CPU_SCAN_INSTANTIATE(ReduceOp::argmax, T)

FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(std::int32_t)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(std::uint32_t)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(std::int64_t)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(std::uint64_t)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(float)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(double)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(half)
FOLDKIT_CPU_SCAN_INSTANTIATE_OPS(bfloat16)
#undef FOLDKIT_CPU_SCAN_INSTANTIATE_OPS
#undef FOLDKIT_CPU_SCAN_INSTANTIATE

}  // namespace foldkit::cpu
