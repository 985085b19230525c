// What one thread keeps while the full-array kernel streams its share of 16-byte vectors.
//
// By default a thread keeps one spec accumulator per vector lane (independent dependency
// chains) and folds each element in with from_element + combine; after the loop the lanes are
// combined in lane order. A spec may instead declare a cheaper state of its own
// (thread_state_type) that takes whole vectors: for argmin/argmax of 4-byte types that is the
// best vector seen, its extreme and its position, updated with three min/max, a compare and a
// few selects per vector, where the accumulator form would build a 64-bit key|index and take a
// 64-bit max for every element. The state is turned into an accumulator once, after the loop.
#pragma once

#include <cstdint>
#include <type_traits>

#include "foldkit/cuda/device/vector_load.cuh"

namespace foldkit::cuda {

template <class Spec, class = void>
struct has_thread_state : std::false_type {};
template <class Spec>
struct has_thread_state<Spec, std::void_t<typename Spec::thread_state_type>> : std::true_type {};

// `head` elements precede vector 0: element (vector, j) is input index head + vector * kLanes + j.
// first_vector is the first vector this thread read; it read none when first_vector >= vectors.
template <class Spec, bool = has_thread_state<Spec>::value>
struct ThreadAccumulator {
  using T = typename Spec::input_type;
  using Acc = typename Spec::accum_type;
  using V = Vec16<T>;
  static constexpr int kLanes = V::kCount;
  struct type {
    Acc lane[kLanes];
  };
  __device__ __forceinline__ static type init(const Spec& spec) {
    type s;
#pragma unroll
    for (int j = 0; j < kLanes; ++j) s.lane[j] = spec.identity();
    return s;
  }
  __device__ __forceinline__ static void update(const Spec& spec, type& s, const V& v, std::int64_t head,
                                                std::int64_t vector) {
#pragma unroll
    for (int j = 0; j < kLanes; ++j) s.lane[j] = spec.combine(s.lane[j], spec.from_element(v.v[j], head + vector * kLanes + j));
  }
  __device__ __forceinline__ static Acc finish(const Spec& spec, const type& s, std::int64_t, std::int64_t,
                                               std::int64_t) {
    Acc acc = s.lane[0];
#pragma unroll
    for (int j = 1; j < kLanes; ++j) acc = spec.combine(acc, s.lane[j]);
    return acc;
  }
};

template <class Spec>
struct ThreadAccumulator<Spec, true> {
  using T = typename Spec::input_type;
  using Acc = typename Spec::accum_type;
  using V = Vec16<T>;
  using type = typename Spec::thread_state_type;
  __device__ __forceinline__ static type init(const Spec& spec) { return spec.thread_identity(); }
  __device__ __forceinline__ static void update(const Spec& spec, type& s, const V& v, std::int64_t,
                                                std::int64_t vector) {
    s = spec.thread_update(s, v, static_cast<unsigned>(vector));
  }
  __device__ __forceinline__ static Acc finish(const Spec& spec, const type& s, std::int64_t head,
                                               std::int64_t first_vector, std::int64_t vectors) {
    return spec.thread_to_accum(s, head, first_vector, vectors);
  }
};

}  // namespace foldkit::cuda
