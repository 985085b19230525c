// Prefix scans of N-dimensional strided tensors along one axis (issue #22): the CPU backend.
// The CUDA backend's forms (device memory, stream-ordered): foldkit/cuda/tensor_scan.hpp.
// With a user-supplied operator: foldkit/tensor_scan_custom.hpp.
//
//   float x[1000][4];                                   // host memory
//   auto in  = foldkit::TensorView::contiguous(x, foldkit::DType::f32, {1000, 4});
//   float c[1000][4];
//   auto out = foldkit::TensorView::contiguous(c, foldkit::DType::f32, {1000, 4});
//   foldkit::cpu::inclusive_scan(foldkit::ReduceOp::sum, in, 0, out);    // torch.cumsum(x, 0)
//
// Semantics: every line of `in` along `axis` (the elements that differ only in their index along
// it) is scanned on its own, exactly as the whole-array scans of foldkit/scan.hpp scan an array:
// the same ops (sum, prod, min, max; others Error(unsupported)), result dtype
// scan_result_dtype(op, in.dtype) (integer sums/products widen to 64 bits; f16/bf16 accumulate
// in float), NaN rules, and init for the exclusive forms (a Scalar that converts exactly to the
// result dtype, as the type-erased whole-array scans take it).
//   - axis: one of the input's dimensions, negative from the end. A rank-0 input is scanned as a
//     one-element line with axis 0 or -1.
//   - out: exactly in's shape, dtype scan_result_dtype(op, in.dtype), any non-negative strides
//     that never map two elements to one address. It may be the input itself (same data, same
//     strides, same dtype: in place); any other overlap with the input is Error(invalid_argument).
//   - A call that throws has written nothing.
// Determinism: each line is scanned in a fixed order that depends only on the views, never on
// the thread count. Lines that lie back to back with stride 1 in and out are the core's blocked
// scan of the flat array (cpu::inclusive_scan_blocked with block_length = line length), bit for
// bit; other layouts fold each line left to right, in fixed chunks for a few long lines.
// Overlap: an output that is not exactly the input view must not share a byte with it.
#pragma once

#include "foldkit/ops.hpp"
#include "foldkit/scalar.hpp"
#include "foldkit/scan.hpp"  // scan_result_dtype
#include "foldkit/tensor.hpp"

namespace foldkit::cpu {

// Throws Error: invalid_argument (bad views, axis, output shape/dtype/strides, overlap, an init
// that does not convert exactly), wrong_memory (a view whose device is not host, or device
// memory), unsupported (an op that is not a scan op, or a dtype outside the enumeration).
void inclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out);
void exclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, Scalar init);

}  // namespace foldkit::cpu
