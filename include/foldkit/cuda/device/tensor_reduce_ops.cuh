// What a tensor-reduction kernel folds (tensor_reduce_kernels.cuh): the hot-loop spec of each
// built-in (op, dtype), a thread's running fold, and the two kernel policies that tell every
// kernel family what it runs:
//   BuiltinTensorOp<Op, T>  a built-in op: the spec is an empty constant built in the kernel,
//                           the arguments are tensor::Launch alone (the library's instantiations,
//                           src/cuda/tensor_reduce_{int,int64,float,half}.cu);
//   CustomTensorOp<T, F>    a user functor (foldkit/cuda/tensor_reduce_custom.cuh): the spec
//                           holds the functor and its identity and travels in the kernel's
//                           arguments (CustomArgs: the Launch plus the spec, one __grid_constant__
//                           parameter), so one kernel serves any functor value.
// A policy P gives: value_type (the element), Spec (the hot loop's spec), Fold (a thread's
// running fold over Spec), GenericSpec (the generic family's spec), result_type, kArg (argmin /
// argmax: the result is an index), Args (the kernel's parameter) and spec(args) /
// generic_spec(args) (the spec a kernel folds with).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "foldkit/cuda/device/reduce_spec.cuh"
#include "foldkit/cuda/device/tensor_reduce_args.hpp"
#include "foldkit/ops.hpp"

namespace foldkit::cuda::tensor {

// The hot-loop form of (Op, T), as the full-array kernels pick it (reduce_spec.cuh): f32
// min/max as one FMNMX.NAN per element, other float min/max as integer keys, argmin/argmax of
// 2- and 4-byte types as one 64-bit key|index (positions per output below 2^32 for 4-byte
// types: the host sends larger rows to the generic kernel), everything else reduce_traits.
template <ReduceOp Op, class T>
struct TensorSpec {
  static constexpr bool kArg = Op == ReduceOp::argmin || Op == ReduceOp::argmax;
  using type = std::conditional_t<
      kArg && (sizeof(T) == 2 || sizeof(T) == 4), PackedArgSpec<Op, T>,
      std::conditional_t<(Op == ReduceOp::min || Op == ReduceOp::max) && std::is_same_v<T, float>, NanMinMaxF32Spec<Op>,
                         std::conditional_t<(Op == ReduceOp::min || Op == ReduceOp::max) && is_floating_v<T>,
                                            KeyedMinMaxSpec<Op, T>, BuiltinReduceSpec<Op, T>>>>;
};
template <ReduceOp Op, class T>
using spec_t = typename TensorSpec<Op, T>::type;

// A thread's running fold. Every family feeds a thread its positions in increasing order, so
// argmin/argmax of 2- and 4-byte types keep the best value and its position instead of
// building a 64-bit key|index per element: floats take one NaN-propagating FMNMX and one
// compare per element (the position moves when the extreme changes value: ties and anything
// after a NaN keep the earlier position; -0 and +0 compare equal, as the keys do), integers one
// compare. The key is built once, for the combine across threads. Rows of 64 f32, argmax:
// 75 % of the read ceiling with a key per element, 86 % with this state.
// result(spec, first): `first` is the first position the thread read (-1: none). A thread
// whose elements all equal the identity's value never moves its position; it credits `first`.
template <class Spec, class T>
struct PlainFold {
  typename Spec::accum_type acc;
  PlainFold() = default;
  __device__ __forceinline__ explicit PlainFold(const Spec& s) : acc(s.identity()) {}
  __device__ __forceinline__ void add(const Spec& s, T v, std::int64_t p) { acc = s.combine(acc, s.from_element(v, p)); }
  __device__ __forceinline__ typename Spec::accum_type result(const Spec&, std::int64_t) const { return acc; }
};
template <class Spec, class T>
struct ArgFold {
  using C = std::conditional_t<is_16bit_float_v<T>, float, T>;
  static constexpr bool kIsMax = Spec::kIsMax;
  // The position where the extreme last moved; kNone: it never moved from the identity's value.
  // 4-byte types keep it in 32 bits (the host gives their packed families fewer than 2^32
  // positions an output, so ~0u is never a position): one select a position, not two.
  using Pos = std::conditional_t<sizeof(T) == 4, unsigned, std::int64_t>;
  static constexpr Pos kNone = static_cast<Pos>(-1);
  C best;
  Pos pos = kNone;
  ArgFold() = default;
  __device__ __forceinline__ explicit ArgFold(const Spec&) : best(identity_value()) {}
  __device__ __forceinline__ static C identity_value() {
    if constexpr (std::is_floating_point_v<C>)
      return kIsMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
    else
      return kIsMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
  }
  __device__ __forceinline__ void add(const Spec&, T v, std::int64_t p) {
    const C c = static_cast<C>(v);
    if constexpr (std::is_floating_point_v<C>) {
      const C next = nan_min_max<kIsMax>(best, c);
      const bool moved = !(next == best) && !(best != best);  // a NaN best stays where it is
      pos = moved ? static_cast<Pos>(p) : pos;
      best = next;
    } else {
      const bool moved = kIsMax ? c > best : c < best;
      pos = moved ? static_cast<Pos>(p) : pos;
      best = moved ? c : best;
    }
  }
  __device__ __forceinline__ typename Spec::accum_type result(const Spec& s, std::int64_t first) const {
    if (pos != kNone) return s.from_element(static_cast<T>(best), static_cast<std::int64_t>(pos));
    if (first >= 0) return s.from_element(static_cast<T>(identity_value()), first);
    return s.identity();
  }
};
template <ReduceOp Op, class T>
using fold_t = std::conditional_t<std::is_same_v<spec_t<Op, T>, PackedArgSpec<Op, T>>, ArgFold<spec_t<Op, T>, T>,
                                  PlainFold<spec_t<Op, T>, T>>;

// ---- the kernels' policies ---------------------------------------------------------------

template <ReduceOp Op, class T>
struct BuiltinTensorOp {
  using value_type = T;
  using Spec = spec_t<Op, T>;
  using Fold = fold_t<Op, T>;
  using GenericSpec = BuiltinReduceSpec<Op, T>;  // any row length: {value, int64 index} for arg ops
  using result_type = reduce_result_t<Op, T>;
  using Args = Launch;
  static constexpr bool kArg = Op == ReduceOp::argmin || Op == ReduceOp::argmax;
  // Empty constants, as the kernels built them before user functors shared them: no parameter
  // is read and the generated code is the same.
  __device__ __forceinline__ static Spec spec(const Args&) { return Spec{}; }
  __device__ __forceinline__ static GenericSpec generic_spec(const Args&) { return GenericSpec{}; }
};

// The kernel's parameter for a user functor: the launch and the spec in one struct, so the
// kernels keep one __grid_constant__ parameter and take the Launch part by reference.
template <class Spec>
struct CustomArgs : Launch {
  Spec spec;
};

template <class T, class F>
struct CustomTensorOp {
  using value_type = T;
  using Spec = CustomReduceSpec<T, F>;
  using Fold = PlainFold<Spec, T>;
  using GenericSpec = Spec;
  using result_type = T;
  using Args = CustomArgs<Spec>;
  static constexpr bool kArg = false;
  // A copy, loaded from the parameter bank (a reference into it instead gave the same registers
  // and spills for every functor of the tests).
  __device__ __forceinline__ static Spec spec(const Args& a) { return a.spec; }
  __device__ __forceinline__ static Spec generic_spec(const Args& a) { return a.spec; }
};

}  // namespace foldkit::cuda::tensor
