// foldkit::cpu::segmented_reduce / segmented_arg_reduce (foldkit/segmented_reduce.hpp).
//
// A segment's value is computed exactly as foldkit::cpu::reduce<Op, T> computes it over the
// segment's elements (reduce_cpu.cpp): chunks of kReduceChunk elements from the segment's start,
// each reduced by reduce_chunk (reduce_chunk.hpp), folded left to right from the identity, then
// finalize. So the bits are the core's for every length. Segments shorter than one vector of
// lanes take a plain left fold from the identity, which is what reduce_chunk does for them (all
// its lanes stay at the identity, and identity combined with identity is the identity exactly).
//
// Work, balanced by elements: a planning pass (in blocks of kPlanBlock segments, in parallel for
// many segments) validates the segments and cuts them into items of about kItemCost elements
// (each segment costs its length plus kSegmentCost); a segment longer than kBigSegment is not
// part of an item but cut into its core chunks, kChunksPerItem chunks per item, whose partials
// are folded in order once every item is done. Items run on the CPU backend's pool
// (parallel_for_chunks). Which thread runs an item never changes what is computed, so results are
// bitwise independent of the thread count. Nothing is written before every segment is validated.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/erased_dispatch.hpp"
#include "common/segmented_prepare.hpp"
#include "cpu/reduce_chunk.hpp"
#include "foldkit/error.hpp"
#include "foldkit/reduce.hpp"
#include "foldkit/segmented_reduce.hpp"

namespace foldkit::cpu {
namespace {

constexpr std::int64_t kPlanBlock = std::int64_t{1} << 14;  // segments per planning block
constexpr std::int64_t kItemCost = std::int64_t{1} << 16;   // elements (plus segment costs) per item
constexpr std::int64_t kSegmentCost = 16;                   // a segment's fixed cost, in elements
constexpr std::int64_t kBigSegment = kItemCost;             // longer segments are cut into chunk items
constexpr std::int64_t kChunksPerItem = kItemCost / detail::kReduceChunk > 0 ? kItemCost / detail::kReduceChunk : 1;
// Below this much work (bytes of input plus segment costs) the call runs on the caller alone, as
// the core's reductions do below 1 MiB (reduce_cpu.cpp).
constexpr std::int64_t kMinParallelBytes = std::int64_t{1} << 20;

// Either form of the segments.
struct Segs {
  const std::int64_t* offsets;  // non-null: the offsets form
  const std::int64_t* begin;
  const std::int64_t* end;
  std::int64_t first(std::int64_t s) const { return offsets != nullptr ? offsets[s] : begin[s]; }
  std::int64_t last(std::int64_t s) const { return offsets != nullptr ? offsets[s + 1] : end[s]; }
};

// What planning one block of segments found.
struct BlockPlan {
  std::int64_t bad = -1;            // first bad offset index (offsets) or segment (begin/end); -1: none
  std::int64_t cost = 0;            // elements plus segment costs
  std::vector<std::int64_t> cuts;   // item starts (segment indices), the block's first included
  std::vector<std::int64_t> bigs;   // segments longer than kBigSegment
};

void plan_block(const Segs& g, std::int64_t num_segments, std::int64_t n, std::int64_t block, BlockPlan& p) {
  const std::int64_t s0 = block * kPlanBlock;
  const std::int64_t s1 = std::min(num_segments, s0 + kPlanBlock);
  p.cuts.push_back(s0);
  std::int64_t run = 0;
  for (std::int64_t s = s0; s < s1; ++s) {
    const std::int64_t b = g.first(s), e = g.last(s);
    if (g.offsets != nullptr) {
      if (foldkit::detail::bad_offset(b, true, e, n)) { p.bad = s; return; }
      if (s + 1 == num_segments && foldkit::detail::offset_outside(e, n)) { p.bad = s + 1; return; }  // e >= b >= 0 here
    } else if (foldkit::detail::bad_begin_end(b, e, n)) {
      p.bad = s;
      return;
    }
    const std::int64_t len = e - b;
    p.cost += len + kSegmentCost;
    if (len > kBigSegment) {
      p.bigs.push_back(s);
      continue;
    }
    run += len + kSegmentCost;
    if (run >= kItemCost) {
      if (s + 1 < s1) p.cuts.push_back(s + 1);
      run = 0;
    }
  }
}

// The core's reduction of one segment's elements, before finalize (len > 0).
template <ReduceOp Op, class T>
reduce_accum_t<Op, T> segment_accum(const T* p, std::int64_t len) {
  using Tr = reduce_traits<Op, T>;
  using A = typename Tr::accum_type;
  const typename Tr::combine_type f{};
  if constexpr (Op == ReduceOp::sum || Op == ReduceOp::prod || Op == ReduceOp::mean) {
    if (len < detail::kLanes<A>) {  // reduce_chunk_fold's lanes all stay at the identity
      A acc = Tr::identity();
      for (std::int64_t i = 0; i < len; ++i) acc = f(acc, Tr::from_element(p[i], 0));
      return f(Tr::identity(), acc);  // reduce()'s fold of its one chunk result
    }
  }
  A acc = Tr::identity();
  for (std::int64_t b = 0; b < len; b += detail::kReduceChunk) {
    const std::int64_t l = std::min(detail::kReduceChunk, len - b);
    acc = f(acc, detail::reduce_chunk<Op, T>(p + b, l, b));
  }
  return acc;
}

// Writes segment s's result: finalize(acc, len), or the empty segment rule for len == 0.
template <ReduceOp Op, class T>
void write_result(void* out, void* values, std::int64_t s, reduce_accum_t<Op, T> acc, std::int64_t len) {
  using Tr = reduce_traits<Op, T>;
  using R = typename Tr::result_type;
  const auto i = static_cast<std::size_t>(s);
  if constexpr (Tr::kUsesIndex) {
    R r = Tr::finalize(len == 0 ? Tr::identity() : acc, len);  // empty: the extreme value of the op
    if (len == 0) r.index = -1;
    std::memcpy(static_cast<std::int64_t*>(out) + i, &r.index, sizeof(std::int64_t));
    if (values != nullptr) std::memcpy(static_cast<T*>(values) + i, &r.value, sizeof(T));
  } else {
    // Empty: sum 0, prod 1, mean NaN (finalize's empty results); min/max: the identity, i.e. the
    // largest (min) or lowest (max) value, converted to the result type.
    const R r = Tr::finalize(len == 0 ? Tr::identity() : acc, len);
    std::memcpy(static_cast<R*>(out) + i, &r, sizeof(R));
  }
}

template <ReduceOp Op, class T>
struct Job {
  using A = reduce_accum_t<Op, T>;
  struct Item {
    std::int64_t a, b;      // small segments [a, b) (big ones among them skipped); or
    std::int64_t big;       // >= 0: this big segment's chunks [a, b), partials from `partial`
    std::int64_t partial;
  };
  const T* in;
  Segs segs;
  void* out;
  void* values;
  std::vector<Item> items;
  std::vector<A> partials;

  void run_item(std::int64_t k) {
    const Item& it = items[static_cast<std::size_t>(k)];
    if (it.big >= 0) {
      const std::int64_t first = segs.first(it.big), len = segs.last(it.big) - first;
      for (std::int64_t c = it.a; c < it.b; ++c) {
        const std::int64_t b = c * detail::kReduceChunk;
        const std::int64_t l = std::min(detail::kReduceChunk, len - b);
        partials[static_cast<std::size_t>(it.partial + c - it.a)] = detail::reduce_chunk<Op, T>(in + first + b, l, b);
      }
      return;
    }
    for (std::int64_t s = it.a; s < it.b; ++s) {
      const std::int64_t first = segs.first(s), len = segs.last(s) - first;
      if (len > kBigSegment) continue;
      write_result<Op, T>(out, values, s, len > 0 ? segment_accum<Op, T>(in + first, len) : A{}, len);
    }
  }
  static void body(void* p, std::int64_t k) { static_cast<Job*>(p)->run_item(k); }
};

[[noreturn]] void throw_bad(const char* api, const Segs& segs, std::int64_t i, std::int64_t num_segments,
                            std::int64_t n) {
  const std::string why =
      segs.offsets != nullptr
          ? foldkit::detail::bad_offset_message(i, segs.offsets[i], i < num_segments ? segs.offsets[i + 1] : 0, num_segments, n)
          : foldkit::detail::bad_begin_end_message(i, segs.begin[i], segs.end[i], n);
  throw Error(Errc::invalid_argument, std::string(api) + ": " + why);
}

template <ReduceOp Op, class T>
void run_typed(const char* api, const void* in_v, std::int64_t n, const Segs& segs, std::int64_t num_segments,
               void* out, void* values) {
  using Tr = reduce_traits<Op, T>;
  using A = typename Tr::accum_type;
  const T* in = static_cast<const T*>(in_v);

  // Plan (and validate) in blocks; nothing is written until every block is known to be valid.
  const std::int64_t blocks = (num_segments + kPlanBlock - 1) / kPlanBlock;
  std::vector<BlockPlan> plan(static_cast<std::size_t>(blocks));
  struct PlanCtx {
    const Segs* segs;
    std::int64_t num_segments, n;
    BlockPlan* plan;
  } pctx{&segs, num_segments, n, plan.data()};
  auto plan_body = [](void* p, std::int64_t b) {
    auto& c = *static_cast<PlanCtx*>(p);
    plan_block(*c.segs, c.num_segments, c.n, b, c.plan[b]);
  };
  if (blocks > 1) detail::parallel_for_chunks(blocks, plan_body, &pctx);
  else if (blocks == 1) plan_body(&pctx, 0);
  std::int64_t cost = 0;
  for (const BlockPlan& p : plan) {
    if (p.bad >= 0) throw_bad(api, segs, p.bad, num_segments, n);
    cost += p.cost;
  }

  Job<Op, T> job{in, segs, out, values, {}, {}};
  for (const BlockPlan& p : plan) {
    const std::int64_t block_end = std::min(num_segments, p.cuts.front() + kPlanBlock);
    for (std::size_t k = 0; k < p.cuts.size(); ++k) {
      const std::int64_t b = k + 1 < p.cuts.size() ? p.cuts[k + 1] : block_end;
      job.items.push_back({p.cuts[k], b, -1, 0});
    }
  }
  std::vector<std::int64_t> big_first_partial;
  for (const BlockPlan& p : plan) {
    for (const std::int64_t s : p.bigs) {
      const std::int64_t len = segs.last(s) - segs.first(s);
      const std::int64_t chunks = (len + detail::kReduceChunk - 1) / detail::kReduceChunk;
      const auto base = static_cast<std::int64_t>(job.partials.size());
      big_first_partial.push_back(base);
      for (std::int64_t c = 0; c < chunks; c += kChunksPerItem)
        job.items.push_back({c, std::min(chunks, c + kChunksPerItem), s, base + c});
      job.partials.resize(static_cast<std::size_t>(base + chunks));
    }
  }

  const auto items = static_cast<std::int64_t>(job.items.size());
  if (cost * static_cast<std::int64_t>(sizeof(T)) < kMinParallelBytes || items < 2) {
    for (std::int64_t k = 0; k < items; ++k) job.run_item(k);
  } else {
    detail::parallel_for_chunks(items, &Job<Op, T>::body, &job);
  }

  // The big segments: their chunk partials folded left to right from the identity, as reduce()
  // folds its chunks.
  const typename Tr::combine_type f{};
  std::size_t next = 0;
  for (const BlockPlan& p : plan) {
    for (const std::int64_t s : p.bigs) {
      const std::int64_t len = segs.last(s) - segs.first(s);
      const std::int64_t chunks = (len + detail::kReduceChunk - 1) / detail::kReduceChunk;
      const std::int64_t base = big_first_partial[next++];
      A acc = Tr::identity();
      for (std::int64_t c = 0; c < chunks; ++c) acc = f(acc, job.partials[static_cast<std::size_t>(base + c)]);
      write_result<Op, T>(out, values, s, acc, len);
    }
  }
}

void run(const foldkit::detail::SegmentedCall& c) {
  foldkit::detail::check_segmented_call(c);
  // Memory spaces (wrong_memory for device pointers). The offsets always have an entry.
  detail::check_host_input(c.in, c.n);
  if (c.by_offsets) {
    detail::check_host_input(c.offsets, c.num_segments + 1);
  } else if (c.num_segments > 0) {
    detail::check_host_input(c.begin, c.num_segments);
    detail::check_host_input(c.end, c.num_segments);
  }
  if (c.num_segments > 0) {
    detail::check_host_input(c.out, c.num_segments);
    if (c.values != nullptr) detail::check_host_input(c.values, c.num_segments);
  }
  const Segs segs{c.by_offsets ? c.offsets : nullptr, c.begin, c.end};
  if (c.num_segments == 0) {  // the one offset must still lie in [0, n]
    if (c.by_offsets && foldkit::detail::offset_outside(c.offsets[0], c.n)) throw_bad(c.api, segs, 0, 0, c.n);
    return;
  }
  visit_dtype(c.dtype, [&](auto tag) {
    using T = decltype(tag);
    erased::visit_reduce_op(c.op, [&](auto op_tag) {
      run_typed<decltype(op_tag)::value, T>(c.api, c.in, c.n, segs, c.num_segments, c.out, c.values);
    });
  });
}

}  // namespace

void segmented_reduce(ReduceOp op, DType dtype, const void* in, std::int64_t n, const std::int64_t* offsets,
                      std::int64_t num_segments, void* out) {
  run(foldkit::detail::SegmentedCall{"segmented_reduce", op, dtype, in, n, true, offsets, nullptr, nullptr, num_segments, out,
                            false, nullptr});
}

void segmented_reduce(ReduceOp op, DType dtype, const void* in, std::int64_t n, const std::int64_t* begin_offsets,
                      const std::int64_t* end_offsets, std::int64_t num_segments, void* out) {
  run(foldkit::detail::SegmentedCall{"segmented_reduce", op, dtype, in, n, false, nullptr, begin_offsets, end_offsets,
                            num_segments, out, false, nullptr});
}

void segmented_arg_reduce(ReduceOp op, DType dtype, const void* in, std::int64_t n, const std::int64_t* offsets,
                          std::int64_t num_segments, std::int64_t* indices, void* values) {
  run(foldkit::detail::SegmentedCall{"segmented_arg_reduce", op, dtype, in, n, true, offsets, nullptr, nullptr, num_segments,
                            indices, true, values});
}

}  // namespace foldkit::cpu
