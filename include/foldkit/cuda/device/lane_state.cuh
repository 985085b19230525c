// What one vector lane of one thread keeps while the full-array kernel streams its share.
//
// By default a lane keeps the spec's accumulator and folds each element in with
// from_element + combine. A spec may instead declare a cheaper per-lane state (lane_type):
// for argmin/argmax of 4-byte types that is the best value seen and the 32-bit vector position
// it came from, updated with a native compare and two selects, where the accumulator form
// would build a 64-bit key|index and take a 64-bit max for every element. The lane state is
// turned into an accumulator once, after the loop (lane_to_accum).
#pragma once

#include <cstdint>
#include <type_traits>

namespace foldkit::cuda {

template <class Spec, class = void>
struct has_lane_state : std::false_type {};
template <class Spec>
struct has_lane_state<Spec, std::void_t<typename Spec::lane_type>> : std::true_type {};

// kLanes elements per vector; `head` elements precede vector 0. Element (vector, j) is input
// index head + vector * kLanes + j.
template <class Spec, int kLanes, bool = has_lane_state<Spec>::value>
struct LaneAccumulator {
  using T = typename Spec::input_type;
  using type = typename Spec::accum_type;
  __device__ __forceinline__ static type init(const Spec& spec) { return spec.identity(); }
  __device__ __forceinline__ static type update(const Spec& spec, type lane, T v, std::int64_t head,
                                                std::int64_t vector, int j) {
    return spec.combine(lane, spec.from_element(v, head + vector * kLanes + j));
  }
  // first_vector: the first vector this thread read; it read none when first_vector >= vectors.
  __device__ __forceinline__ static typename Spec::accum_type finish(const Spec&, type lane, std::int64_t, int,
                                                                     std::int64_t, std::int64_t) {
    return lane;
  }
};

template <class Spec, int kLanes>
struct LaneAccumulator<Spec, kLanes, true> {
  using T = typename Spec::input_type;
  using type = typename Spec::lane_type;
  __device__ __forceinline__ static type init(const Spec& spec) { return spec.lane_identity(); }
  __device__ __forceinline__ static type update(const Spec& spec, type lane, T v, std::int64_t,
                                                std::int64_t vector, int) {
    return spec.lane_update(lane, v, static_cast<unsigned>(vector));
  }
  __device__ __forceinline__ static typename Spec::accum_type finish(const Spec& spec, type lane, std::int64_t head,
                                                                     int j, std::int64_t first_vector,
                                                                     std::int64_t vectors) {
    return spec.lane_to_accum(lane, head, kLanes, j, first_vector, vectors);
  }
};

}  // namespace foldkit::cuda
