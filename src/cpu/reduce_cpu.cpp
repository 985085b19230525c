// foldkit::cpu::reduce<Op, T>: chunked, deterministic, multi-threaded full-array reductions.
//
// The array is cut into chunks of kReduceChunk elements; each chunk is reduced by the same
// single-threaded kernel (reduce_chunk.hpp) and the chunk results are folded left to right.
// Whether the chunks run on one thread or many changes only who computes them, never what they
// are or the order they are combined in, so every thread count gives the same bits.
#include <cstdint>
#include <string>
#include <vector>

#include "cpu/reduce_chunk.hpp"
#include "foldkit/reduce.hpp"

namespace foldkit::cpu {
namespace {

// Below this much input handing chunks to the pool (src/cpu/parallel.hpp: a futex wake, tens of
// us for a sleeping worker) costs about what it saves: one core reduces 1 MiB in roughly 15-60 us
// (cache vs DRAM).
constexpr std::int64_t kMinParallelBytes = std::int64_t{1} << 20;

// Chunk c covers elements [c * kReduceChunk, min(n, (c + 1) * kReduceChunk)).
template <ReduceOp Op, class T>
reduce_accum_t<Op, T> reduce_chunk_at(const T* in, std::int64_t n, std::int64_t c) {
  const std::int64_t begin = c * detail::kReduceChunk;
  const std::int64_t len = n - begin < detail::kReduceChunk ? n - begin : detail::kReduceChunk;
  return detail::reduce_chunk<Op, T>(in + begin, len, begin);
}

template <ReduceOp Op, class T>
struct ChunkJob {
  const T* in;
  std::int64_t n;
  reduce_accum_t<Op, T>* partial;

  static void run(void* p, std::int64_t c) {
    const auto& job = *static_cast<const ChunkJob*>(p);
    job.partial[c] = reduce_chunk_at<Op, T>(job.in, job.n, c);
  }
};

}  // namespace

template <ReduceOp Op, class T>
reduce_result_t<Op, T> reduce(const T* in, std::int64_t n) {
  using Tr = reduce_traits<Op, T>;
  using A = typename Tr::accum_type;
  detail::check_host_input(in, n);
  if (n == 0) {
    if constexpr (needs_nonempty(Op)) {
      throw Error(Errc::empty_input, std::string(op_name(Op)) + " of an empty array (n = 0) has no value");
    } else {
      return Tr::finalize(Tr::identity(), 0);
    }
  }

  const typename Tr::combine_type f{};
  const std::int64_t chunks = (n + detail::kReduceChunk - 1) / detail::kReduceChunk;
  A acc = Tr::identity();
  if (chunks < 2 || n * static_cast<std::int64_t>(sizeof(T)) < kMinParallelBytes) {
    // Same chunks, same fold order as the parallel path below; just no partials array.
    for (std::int64_t c = 0; c < chunks; ++c) acc = f(acc, reduce_chunk_at<Op, T>(in, n, c));
  } else {
    std::vector<A> partial(static_cast<std::size_t>(chunks));
    ChunkJob<Op, T> job{in, n, partial.data()};
    detail::parallel_for_chunks(chunks, &ChunkJob<Op, T>::run, &job);
    for (const A& p : partial) acc = f(acc, p);
  }
  return Tr::finalize(acc, n);
}

// 7 ops x 8 dtypes.
#define FOLDKIT_CPU_INSTANTIATE_OP(T)                                                       \
  template reduce_result_t<ReduceOp::sum, T> reduce<ReduceOp::sum, T>(const T*, std::int64_t);   \
  template reduce_result_t<ReduceOp::prod, T> reduce<ReduceOp::prod, T>(const T*, std::int64_t); \
  template reduce_result_t<ReduceOp::min, T> reduce<ReduceOp::min, T>(const T*, std::int64_t);   \
  template reduce_result_t<ReduceOp::max, T> reduce<ReduceOp::max, T>(const T*, std::int64_t);   \
  template reduce_result_t<ReduceOp::mean, T> reduce<ReduceOp::mean, T>(const T*, std::int64_t); \
  template reduce_result_t<ReduceOp::argmin, T> reduce<ReduceOp::argmin, T>(const T*, std::int64_t); \
  template reduce_result_t<ReduceOp::argmax, T> reduce<ReduceOp::argmax, T>(const T*, std::int64_t);

FOLDKIT_CPU_INSTANTIATE_OP(std::int32_t)
FOLDKIT_CPU_INSTANTIATE_OP(std::uint32_t)
FOLDKIT_CPU_INSTANTIATE_OP(std::int64_t)
FOLDKIT_CPU_INSTANTIATE_OP(std::uint64_t)
FOLDKIT_CPU_INSTANTIATE_OP(float)
FOLDKIT_CPU_INSTANTIATE_OP(double)
FOLDKIT_CPU_INSTANTIATE_OP(half)
FOLDKIT_CPU_INSTANTIATE_OP(bfloat16)
#undef FOLDKIT_CPU_INSTANTIATE_OP

}  // namespace foldkit::cpu
