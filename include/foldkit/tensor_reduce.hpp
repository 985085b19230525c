// Reductions of N-dimensional strided tensors along any axes (issue #22; CPU backend first).
// The CUDA backend's forms (device memory, stream-ordered): foldkit/cuda/tensor_reduce.hpp.
//
//   float x[64][1000];                                  // host memory
//   auto in  = foldkit::TensorView::contiguous(x, foldkit::DType::f32, {64, 1000});
//   float rows[64];
//   auto out = foldkit::TensorView::contiguous(rows, foldkit::DType::f32, {64});
//   foldkit::cpu::reduce(foldkit::ReduceOp::sum, in, {-1}, /*keepdims=*/false, out);
//
// Semantics, for every output element, are those of the full-array reductions (foldkit/ops.hpp)
// over the elements it reduces: the same result types, NaN rules, and empty rule (sum 0, prod 1,
// mean NaN; min/max/argmin/argmax over an empty reduced extent throw Error(empty_input)).
//   - axes: any subset of the input's dimensions, negative ones from the end; the empty list
//     reduces every axis. Duplicates or out-of-range axes: Error(invalid_argument).
//   - keepdims: the reduced dimensions stay in the output with size 1 (NumPy's keepdims, PyTorch's
//     keepdim); otherwise they are removed.
//   - argmin/argmax take at most one axis (none: the whole tensor, flattened in row-major order
//     of its logical shape) and write the int64 INDEX along that axis (PyTorch's argmax(dim));
//     arg_reduce also writes the values (PyTorch's max(dim)). First index on ties and first NaN.
//   - out must have exactly reduce_output_shape(...)'s shape and dtype; any non-negative strides
//     that never map two output elements to one address (so no zero stride on a dimension of
//     size > 1), and must not overlap the input's bytes. Otherwise Error(invalid_argument).
//   - A call that throws has written nothing.
// Determinism: each output element is reduced in a fixed order that depends only on the input
// view, never on the thread count. When an output element's elements form one contiguous run,
// its value is bit for bit foldkit::cpu::reduce<Op, T> over that run.
// User functors along axes (reduce_custom over TensorViews): foldkit/tensor_reduce_custom.hpp.
#pragma once

#include <cstdint>

#include "foldkit/dtype.hpp"
#include "foldkit/ops.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit {

// The dtype a tensor reduction writes: reduce_result_t<op, dtype> (ops.hpp's table), except that
// argmin/argmax write their int64 index (their values, in arg_reduce, keep the input dtype).
constexpr DType reduce_result_dtype(ReduceOp op, DType dtype) {
  if (op == ReduceOp::argmin || op == ReduceOp::argmax) return DType::i64;  // the index
  return visit_dtype(dtype, [op](auto tag) {  // ops.hpp's table, through reduce_result_t
    using T = decltype(tag);
    switch (op) {
      case ReduceOp::prod: return dtype_v<reduce_result_t<ReduceOp::prod, T>>;
      case ReduceOp::min: return dtype_v<reduce_result_t<ReduceOp::min, T>>;
      case ReduceOp::max: return dtype_v<reduce_result_t<ReduceOp::max, T>>;
      case ReduceOp::mean: return dtype_v<reduce_result_t<ReduceOp::mean, T>>;
      default: return dtype_v<reduce_result_t<ReduceOp::sum, T>>;
    }
  });
}

// What to allocate for a reduction's output: its dtype and shape (rank 0: one element).
struct ReduceOutput {
  DType dtype = DType::f32;
  int rank = 0;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }
};

namespace cpu {

// The output a reduce() call with these arguments needs. Validates `in` and the axes as reduce()
// does (the data pointer's memory space is not probed).
ReduceOutput reduce_output_shape(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims);

// Reduces `in` along `axes` into `out`. Throws Error: invalid_argument (bad views, axes, output
// shape/dtype/strides, overlap), wrong_memory (a view whose device is not host, or device
// memory), unsupported (op or dtype outside the enumerations), empty_input (see above).
void reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out);

// argmin/argmax with both outputs: `indices` (i64) and `values` (the input dtype), same shape.
// Neither may overlap the input or the other.
void arg_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& indices,
                const TensorView& values);

}  // namespace cpu
}  // namespace foldkit
