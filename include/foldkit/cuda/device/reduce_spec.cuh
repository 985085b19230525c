// A reduction "spec" tells the full-array kernel what it computes: how an element enters the
// accumulator, how accumulators combine, the identity, and how the final accumulator becomes
// the result. Built-in ops and user functors are both specs, so one kernel serves both.
#pragma once

#include <cstdint>
#include <type_traits>

#include "foldkit/ops.hpp"

namespace foldkit::cuda {

template <ReduceOp Op, class T>
struct BuiltinReduceSpec {
  using traits = reduce_traits<Op, T>;
  using input_type = T;
  using accum_type = typename traits::accum_type;
  using result_type = typename traits::result_type;
  using combine_type = typename traits::combine_type;
  static constexpr bool kUsesIndex = traits::kUsesIndex;

  combine_type combine{};
  __device__ __forceinline__ accum_type identity() const { return traits::identity(); }
  __device__ __forceinline__ accum_type from_element(T v, std::int64_t i) const { return traits::from_element(v, i); }
  __device__ __forceinline__ result_type finalize(accum_type a, std::int64_t n) const { return traits::finalize(a, n); }
};

// A user's associative (and, for a unique answer, commutative) functor over T.
template <class T, class F>
struct CustomReduceSpec {
  using input_type = T;
  using accum_type = T;
  using result_type = T;
  using combine_type = F;
  static constexpr bool kUsesIndex = false;

  F combine;
  T identity_value;
  __device__ __forceinline__ T identity() const { return identity_value; }
  __device__ __forceinline__ T from_element(T v, std::int64_t) const { return v; }
  __device__ __forceinline__ T finalize(T a, std::int64_t) const { return a; }
};

}  // namespace foldkit::cuda
