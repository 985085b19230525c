// Reductions of N-dimensional strided tensors along any axes with a user-supplied operator: the
// CPU backend (header-only; plain C++). The CUDA backend's form: foldkit/cuda/tensor_reduce_custom.cuh.
//
//   struct AbsMax { float operator()(float a, float b) const { ... } };
//   auto in  = foldkit::TensorView::contiguous(x, foldkit::DType::f32, {64, 1000});   // host memory
//   auto out = foldkit::TensorView::contiguous(rows, foldkit::DType::f32, {64});
//   foldkit::cpu::reduce_custom(in, {-1}, /*keepdims=*/false, out, AbsMax{}, 0.0f);
//
// Contract: F is callable as T(T, T) through a const object and associative; `identity` is its
// identity (F(identity, x) == x == F(x, identity)). F is called from several threads at once
// (it must be safe to call concurrently) and copied freely. T is the element, the accumulator and
// the result: one of foldkit's dtypes (int32_t, uint32_t, int64_t, uint64_t, float, double, half,
// bfloat16; a static_assert says so otherwise), because the views' dtype describes the elements.
// Semantics, checks and errors are those of foldkit::cpu::reduce (foldkit/tensor_reduce.hpp) for
// a sum, with the functor in place of the sum: the same axes (any subset; negative from the end;
// none: all), keepdims, output shape / stride / overlap rules and memory-space checks, and the
// same plan. In addition: the input's and the output's dtype must both be T's
// (Error(invalid_argument) otherwise), and an empty reduced extent writes `identity`. A call that
// throws has written nothing.
// Order: each output element folds its elements in a fixed order that depends only on the input
// view: in chunks of cpu::detail::kReduceChunk positions of its row (the reduced dimensions in
// memory order, smallest stride innermost), each chunk left to right from `identity`, the chunks'
// results left to right. So the bits never depend on the thread count, and a row that is one
// contiguous run folds exactly as foldkit::cpu::reduce_custom folds that run as an array. F need
// not be commutative for a given view (though the row order follows the strides, so the result of
// a non-commutative F depends on the layout; the CUDA form needs F commutative).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/detail/tensor_reduce_cpu.hpp"
#include "foldkit/dtype.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit::cpu {

namespace detail {

// prepare_reduce_custom (foldkit/detail/reduce_plan.hpp) and the CPU backend's host-memory checks
// of both views; the plan to execute (src/cpu/tensor_reduce_cpu.cpp).
foldkit::detail::ReducePlan prepare_reduce_custom(DType dtype, const TensorView& in, AxisList axes, bool keepdims,
                                                  const TensorView& out);

// A user functor as the executor's fold (detail/tensor_reduce_cpu.hpp): the accumulator is the
// element, and the result is the accumulator.
template <class T, class F>
struct CustomFold {
  using value_type = T;
  using accum_type = T;

  F op;
  T identity_value;

  T identity() const { return identity_value; }
  T combine(T a, T b) const { return op(a, b); }
  T from_element(T v, std::int64_t) const { return v; }
  T contiguous_chunk(const T* p, std::int64_t len, std::int64_t) const {
    T acc = identity_value;
    for (std::int64_t i = 0; i < len; ++i) acc = op(acc, p[i]);
    return acc;
  }
  void write(char* out, char*, const RowOffsets& at, T acc, std::int64_t) const {
    std::memcpy(out + at.out * static_cast<std::int64_t>(sizeof(T)), &acc, sizeof(T));
  }
};

}  // namespace detail

// Reduces `in` along `axes` into `out` with op. Throws Error: invalid_argument (bad views, axes, a
// dtype that is not T's, output shape/strides, overlap), wrong_memory (a view whose device is not
// host, or device memory), unsupported (a dtype outside the enumeration).
template <class T, class F>
void reduce_custom(const TensorView& in, AxisList axes, bool keepdims, const TensorView& out, F op, T identity) {
  static_assert(has_dtype_v<T>,
                "tensor reduce_custom: T must be one of foldkit's dtypes (int32_t, uint32_t, int64_t, uint64_t, "
                "float, double, half, bfloat16): the views' dtype describes the elements; pack pairs into a uint64_t");
  if constexpr (has_dtype_v<T>) {  // (no second error after the assertion's)
    const foldkit::detail::ReducePlan plan = detail::prepare_reduce_custom(dtype_v<T>, in, axes, keepdims, out);
    detail::execute_tensor_reduce(plan, in.data, out.data, nullptr, detail::CustomFold<T, F>{op, identity});
  }
}

}  // namespace foldkit::cpu
