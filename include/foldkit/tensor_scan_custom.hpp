// Prefix scans of N-dimensional strided tensors along one axis with a user-supplied operator: the
// CPU backend (header-only; plain C++). The CUDA backend's form: foldkit/cuda/tensor_scan_custom.cuh.
//
//   // x -> a * x + b (mod 2^32) packed as a << 32 | b; "f then g": associative, not commutative
//   struct Then { std::uint64_t operator()(std::uint64_t f, std::uint64_t g) const { ... } };
//   auto in  = foldkit::TensorView::contiguous(maps, foldkit::DType::u64, {1000, 4});   // host memory
//   auto out = foldkit::TensorView::contiguous(composed, foldkit::DType::u64, {1000, 4});
//   foldkit::cpu::inclusive_scan_custom(in, 0, out, Then{}, std::uint64_t{1} << 32);
//
// Contract: F is callable as T(T, T) through a const object and associative; it need NOT be
// commutative (every line is folded left to right: an earlier value is always on the left).
// `identity` is its identity (F(identity, x) == x == F(x, identity)). F is called from several
// threads at once (it must be safe to call concurrently) and copied freely. T is the element, the
// accumulator and the result: one of foldkit's dtypes (int32_t, uint32_t, int64_t, uint64_t,
// float, double, half, bfloat16; a static_assert says so otherwise), because the views' dtype
// describes the elements (pack pairs into a uint64_t).
// Semantics, checks and errors are those of foldkit::cpu::inclusive_scan / exclusive_scan
// (foldkit/tensor_scan.hpp) for an op whose result dtype is the input's, with the functor in
// place of the op: the same axis rules, output shape / stride / overlap rules (in place allowed),
// memory-space checks and plan. In addition: the input's and the output's dtype must both be T's
// (Error(invalid_argument) otherwise). Inclusive: out[i] = x0 op ... op xi along each line;
// exclusive: out[0] = init, out[i] = init op x0 op ... op x(i-1). A call that throws has written
// nothing.
// Order: each line is scanned in a fixed order that depends only on the views, never on the
// thread count. Lines back to back with stride 1 in and out ("rows-contiguous") are
// cpu::inclusive_scan_custom_blocked of the flat array (foldkit/scan.hpp: chunks of
// detail::kReduceChunk elements, each chunk's fold carried left to right), bit for bit; other
// layouts are the built-in tensor scans' engine (foldkit/detail/tensor_scan_cpu.hpp): each line
// left to right, in fixed chunks of rows for a few long lines.
#pragma once

#include <cstdint>

#include "foldkit/detail/scan_plan.hpp"
#include "foldkit/detail/tensor_scan_cpu.hpp"
#include "foldkit/dtype.hpp"
#include "foldkit/scan.hpp"  // the blocked custom scans
#include "foldkit/tensor.hpp"

namespace foldkit::cpu {

namespace detail {

// prepare_scan_custom (foldkit/detail/scan_plan.hpp) and the CPU backend's host-memory checks of
// both views; the plan to execute (src/cpu/tensor_scan_cpu.cpp).
foldkit::detail::ScanPlan prepare_scan_custom(DType dtype, const TensorView& in, int axis, const TensorView& out);

// A user functor as the engine's fold: T in, accumulated and out.
template <class T, class F>
struct CustomScanFold {
  using value_type = T;
  using accum_type = T;
  using result_type = T;

  F op;
  T identity_value;

  T identity() const { return identity_value; }
  T operator()(T a, T b) const { return op(a, b); }
  static T load(T v) { return v; }
  static T store(T v) { return v; }
};

template <bool kExclusive, class T, class F>
void tensor_scan_custom(const TensorView& in, int axis, const TensorView& out, F& op, T identity, T init) {
  static_assert(has_dtype_v<T>,
                "tensor scan_custom: T must be one of foldkit's dtypes (int32_t, uint32_t, int64_t, uint64_t, "
                "float, double, half, bfloat16): the views' dtype describes the elements; pack pairs into a uint64_t");
  if constexpr (has_dtype_v<T>) {  // (no second error after the assertion's)
    const foldkit::detail::ScanPlan plan = prepare_scan_custom(dtype_v<T>, in, axis, out);
    if (plan.family == foldkit::detail::ScanFamily::empty) return;
    if (plan.family == foldkit::detail::ScanFamily::rows_contiguous) {
      const T* src = static_cast<const T*>(in.data);
      T* dst = static_cast<T*>(out.data);
      if constexpr (kExclusive) exclusive_scan_custom_blocked(src, plan.numel, dst, plan.len, op, identity, init);
      else inclusive_scan_custom_blocked(src, plan.numel, dst, plan.len, op, identity);
      return;
    }
    execute_tensor_scan<kExclusive>(plan, in.data, out.data, CustomScanFold<T, F>{op, identity},
                                    kExclusive ? init : identity);
  }
}

}  // namespace detail

// Scans every line of `in` along `axis` into `out` with op. Throws Error: invalid_argument (bad
// views, axis, a dtype that is not T's, output shape/strides, overlap), wrong_memory (a view
// whose device is not host, or device memory), unsupported (a dtype outside the enumeration).
template <class T, class F>
void inclusive_scan_custom(const TensorView& in, int axis, const TensorView& out, F op, T identity) {
  detail::tensor_scan_custom<false>(in, axis, out, op, identity, identity);
}
// out[0] = init, out[i] = init op x0 op ... op x(i-1) along each line.
template <class T, class F>
void exclusive_scan_custom(const TensorView& in, int axis, const TensorView& out, F op, T identity, T init) {
  detail::tensor_scan_custom<true>(in, axis, out, op, identity, init);
}

}  // namespace foldkit::cpu
