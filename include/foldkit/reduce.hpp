// Full-array reductions of host memory: the CPU backend.
//
//   float s = foldkit::cpu::sum(data, n);                       // f32 sum, accumulated in f32
//   auto  m = foldkit::cpu::reduce<foldkit::ReduceOp::argmax>(data, n);   // {value, index}
//
// Multi-threaded for large n, over the cores that other runnable threads leave free (one thread
// on a busy machine; at most omp_get_max_threads()). Deterministic: the array is cut into chunks of a
// fixed length (independent of the thread count), each chunk is reduced in a fixed order, and
// the chunk results are combined in index order, so one input always gives the same bits.
// Passing device memory is an error (Errc::wrong_memory) in builds with CUDA.
#pragma once

#include <cstdint>
#include <vector>

#include "foldkit/dtype.hpp"
#include "foldkit/error.hpp"
#include "foldkit/ops.hpp"

namespace foldkit::cpu {

// Throws Error: invalid_argument (in == nullptr with n > 0, n < 0), empty_input (an op without
// identity on n == 0), wrong_memory (in points to device memory).
template <ReduceOp Op, class T>
reduce_result_t<Op, T> reduce(const T* in, std::int64_t n);

// Type-erased form: `out` receives one reduce_result_t<op, dtype> (host memory).
// Throws Error(unsupported) for an op or dtype outside the enumerations.
void reduce(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out);

template <class T> reduce_result_t<ReduceOp::sum, T> sum(const T* in, std::int64_t n) { return reduce<ReduceOp::sum>(in, n); }
template <class T> reduce_result_t<ReduceOp::prod, T> prod(const T* in, std::int64_t n) { return reduce<ReduceOp::prod>(in, n); }
template <class T> reduce_result_t<ReduceOp::min, T> min(const T* in, std::int64_t n) { return reduce<ReduceOp::min>(in, n); }
template <class T> reduce_result_t<ReduceOp::max, T> max(const T* in, std::int64_t n) { return reduce<ReduceOp::max>(in, n); }
template <class T> reduce_result_t<ReduceOp::mean, T> mean(const T* in, std::int64_t n) { return reduce<ReduceOp::mean>(in, n); }
template <class T> ArgResult<T> argmin(const T* in, std::int64_t n) { return reduce<ReduceOp::argmin>(in, n); }
template <class T> ArgResult<T> argmax(const T* in, std::int64_t n) { return reduce<ReduceOp::argmax>(in, n); }

namespace detail {
// Runs body(ctx, chunk) for chunk in [0, chunks) on the CPU backend's threads. Which thread runs
// a chunk is unspecified; callers make results depend only on the chunk index.
void parallel_for_chunks(std::int64_t chunks, void (*body)(void* ctx, std::int64_t chunk), void* ctx);
// Starts the threads a large call would use now and returns once they all run (at most ~20 ms),
// so that the next call finds them awake, as an empty OpenMP region does for an OpenMP team.
// `reduction`: the next call is a reduction (on an idle machine those run on an OpenMP team,
// scans on the backend's pool). For benchmarks; calls never need it.
void wake_threads(bool reduction = false);
// Chunk length used by every CPU reduction (elements); fixed so results never depend on threads.
inline constexpr std::int64_t kReduceChunk = std::int64_t{1} << 15;
void check_host_input(const void* in, std::int64_t n);  // the validation every CPU entry runs
}  // namespace detail

// A user-supplied associative operator F (callable as T(T, T)) with its identity. Chunks are
// reduced left to right and their results combined left to right, so F need not be commutative.
// F is called from several threads at once: it must be safe to call concurrently.
template <class T, class F>
T reduce_custom(const T* in, std::int64_t n, F op, T identity) {
  detail::check_host_input(in, n);
  const std::int64_t chunks = (n + detail::kReduceChunk - 1) / detail::kReduceChunk;
  if (chunks <= 1) {
    T acc = identity;
    for (std::int64_t i = 0; i < n; ++i) acc = op(acc, in[i]);
    return acc;
  }
  struct Ctx { const T* in; std::int64_t n; F* op; T identity; T* partial; };
  std::vector<T> partial(static_cast<std::size_t>(chunks), identity);
  Ctx ctx{in, n, &op, identity, partial.data()};
  detail::parallel_for_chunks(
      chunks,
      [](void* p, std::int64_t c) {
        auto& x = *static_cast<Ctx*>(p);
        const std::int64_t b = c * detail::kReduceChunk;
        const std::int64_t e = b + detail::kReduceChunk < x.n ? b + detail::kReduceChunk : x.n;
        T acc = x.identity;
        for (std::int64_t i = b; i < e; ++i) acc = (*x.op)(acc, x.in[i]);
        x.partial[c] = acc;
      },
      &ctx);
  T acc = identity;
  for (const T& p : partial) acc = op(acc, p);
  return acc;
}

}  // namespace foldkit::cpu
