// The plan of a tensor reduction, shared by the backends (the CPU executes it now; the CUDA
// backend will pick its kernels from the same canonical form).
//
// plan_reduce turns (input view, axes, keepdims, output strides) into
//   - the output shape (with or without the kept size-1 dimensions), and
//   - a canonical form: the kept dimensions (one per output element index) and the reduced ones
//     (one per element folded into an output element), each list with size-1 dimensions dropped
//     and neighbours merged where they form one run in memory, listed outermost first.
// Two layouts of the same access pattern get the same canonical form, so a kernel family is
// picked by the form alone: a (1e6, 2) row-major array reduced over its last axis and a
// (1e6, 1, 2) one both give kept [1000000 x (in 2, out 1)], reduced [2 x (in 1)].
#pragma once

#include <cstdint>
#include <string>

#include "foldkit/ops.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit::detail {

struct PlanDim {
  std::int64_t size = 1;
  std::int64_t in_stride = 0;   // elements of the input
  std::int64_t out_stride = 0;  // elements of the output (kept dimensions only)
  std::int64_t out2_stride = 0; // elements of a second output (arg_reduce's values), if any
};

// How the reduced dimensions are ordered:
//   memory:  by input stride, the smallest innermost (sum, prod, mean, min, max: the cache-friendly
//            walk; the order is part of the result's bits for float sums, and fixed by the view);
//   logical: as in the input's shape (argmin/argmax: their result is the row-major position in
//            the reduced index space, so the walk must follow it for runs to keep their indices).
enum class ReducedOrder { memory, logical };

struct ReducePlan {
  int in_rank = 0;
  unsigned reduced_mask = 0;  // bit i: input axis i is reduced
  bool keepdims = false;
  int out_rank = 0;
  std::int64_t out_shape[kMaxRank] = {};
  std::int64_t out_numel = 1;     // output elements
  std::int64_t reduce_numel = 1;  // elements folded into each output element (its row)
  int kept_rank = 0;
  PlanDim kept[kMaxRank];  // canonical kept dimensions, outermost first (largest output stride)
  int reduced_rank = 0;
  PlanDim reduced[kMaxRank];  // canonical reduced dimensions, outermost first
};

// Normalises `axes` (negative from the end; empty = all) into a mask. Throws
// Error(invalid_argument) for an axis out of [-rank, rank) or a repeated one.
unsigned normalize_axes(int rank, AxisList axes);

// The plan. `in` must be valid (validate()). out_strides: the output view's strides (out_rank
// entries, as for its shape), or nullptr for a row-major output; out2_strides the same for a
// second output written alongside (kept dimensions merge only where both outputs allow it).
// Throws as normalize_axes.
ReducePlan plan_reduce(const TensorView& in, AxisList axes, bool keepdims, const std::int64_t* out_strides = nullptr,
                       ReducedOrder order = ReducedOrder::memory, const std::int64_t* out2_strides = nullptr);

// Everything a backend checks before running a reduction, except where the memory lives: the
// op, every view (validate()), the axes (argmin/argmax: at most one), the output's dtype
// (reduce_result_dtype; `values`: the input dtype) and exact shape, outputs that never write one
// address twice and overlap neither the input nor each other, and an empty reduced extent for an
// op without identity (Error(empty_input)). Returns the plan for those outputs (reduced
// dimensions in logical order for argmin/argmax). `values`: arg_reduce's second output, or null.
ReducePlan prepare_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out,
                          const TensorView* values);

// prepare_reduce for a user functor over `dtype` (the reduce_custom forms of both backends): the
// input and the output must both have that dtype (Error(invalid_argument) otherwise; an unknown
// dtype in a view is Error(unsupported), as validate() says), any axes, and an empty reduced
// extent is allowed (every output element is then the functor's identity). Reduced dimensions in
// memory order, as for a sum.
ReducePlan prepare_reduce_custom(DType dtype, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out);

// The kernel family the canonical form calls for:
//   "all"             nothing kept (one output element);
//   "map"             nothing reduced (every row has one element);
//   "contiguous-rows" the innermost reduced dimension has input stride 1 and more than 32 elements;
//   "short-rows"      the same, with 32 or fewer;
//   "outer"           the innermost kept dimension has input stride 1 (the reduced ones are outer);
//   "strided"         anything else.
const char* plan_family(const ReducePlan& plan);
inline constexpr std::int64_t kShortRowMax = 32;

// One line: "kept [1048576 x (in 2, out 1)] reduced [2 x (in 1)] family=short-rows" (dimensions
// outermost first, separated by ", "; an empty list is "[]").
std::string describe_plan(const ReducePlan& plan);

}  // namespace foldkit::detail
