// The plan of a tensor scan along one axis (foldkit/tensor_scan.hpp), shared by the backends.
//
// plan_scan turns (input view, axis, output strides) into a canonical form: the scanned
// dimension (its length and its strides in the input and the output) and the kept dimensions
// (every other one: one line per kept index), size-1 dimensions dropped, the kept ones sorted by
// output stride (outermost first) and merged where neighbours form one run in the input and in
// the output alike. Two layouts of the same access pattern get the same form, and the kernel
// family is picked by the form alone:
//   "rows-contiguous"  the scanned axis has stride 1 in and out, and the lines lie back to back in
//                      both (a row-major matrix scanned along its last axis): the whole problem is
//                      the core's blocked scan of the flat array with block_length = line length;
//   "rows"             the scanned axis has stride 1 in and out, the lines do not lie back to back;
//   "columns"          the innermost kept dimension has stride 1 in and out (the scanned axis is an
//                      outer one: torch's cumsum(0) of a row-major matrix);
//   "strided"          anything else;
//   "empty"            no element (nothing to do once the arguments are checked).
// A scanned axis of length 1 counts as stride 1 (every line is one element).
#pragma once

#include <cstdint>
#include <string>

#include "foldkit/detail/reduce_plan.hpp"  // PlanDim
#include "foldkit/ops.hpp"
#include "foldkit/scalar.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit::detail {

enum class ScanFamily { empty, rows_contiguous, rows, columns, strided };

struct ScanPlan {
  int in_rank = 0;
  int axis = 0;              // normalised (0 for a rank-0 input)
  std::int64_t numel = 0;    // elements of the input (and of the output)
  std::int64_t len = 1;      // elements per line: the scanned axis' size (1 for rank 0)
  std::int64_t lines = 0;    // numel / len (0 when numel == 0)
  PlanDim scan;              // size len; the strides along the axis (1 and 1 when len <= 1)
  int kept_rank = 0;
  PlanDim kept[kMaxRank];    // canonical kept dimensions, outermost first (largest output stride)
  ScanFamily family = ScanFamily::empty;
};

// A plan read as a batch of matrices, the form both backends' engines walk: rows along the
// scanned axis, columns along the innermost kept dimension (one column without kept dims), the
// other kept dimensions `outer` (outer_rank of them, outer_count matrices). Strides in elements.
struct ScanMatrix {
  std::int64_t rows = 1, in_rs = 0, out_rs = 0;
  std::int64_t cols = 1, in_cs = 0, out_cs = 0;
  int outer_rank = 0;
  const PlanDim* outer = nullptr;  // points into the plan it was read from
  std::int64_t outer_count = 1;
  // Whether the scanned axis is the input's more contiguous dimension (walk along the lines).
  bool axis_major() const { return in_rs != 0 && (in_cs == 0 || in_rs < in_cs); }
};
ScanMatrix scan_matrix(const ScanPlan& p);

// The axis in [0, rank) (rank 0: 0), from one in [-max(rank, 1), max(rank, 1)). Throws
// Error(invalid_argument) otherwise.
int normalize_scan_axis(int rank, int axis);

// The plan. `in` must be valid (validate()); out_strides: the output's strides (in.rank entries),
// or nullptr for a row-major output. Throws as normalize_scan_axis.
ScanPlan plan_scan(const TensorView& in, int axis, const std::int64_t* out_strides = nullptr);

// Everything a backend checks before a tensor scan writes anything, except where the memory lives:
// the views (validate()), the op and dtype (Error(unsupported) for an op that is not a scan op),
// the axis, the output's dtype (scan_result_dtype) and exact shape, an output that never maps two
// elements to one address, and no overlap with the input other than exactly in place (the same
// data, dtype and strides); `init` (exclusive scans; null for inclusive ones) must convert exactly
// to the result dtype (Scalar::to_exact, as the type-erased whole-array scans take it). Returns
// the plan for the given output strides.
ScanPlan prepare_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, const Scalar* init);

// prepare_scan's checks for a user functor over `dtype` (foldkit/tensor_scan_custom.hpp): the
// input's dtype must be `dtype` (Error(invalid_argument) otherwise), and so must the output's;
// no init to check (it is a value of the functor's type). Returns the plan.
ScanPlan prepare_scan_custom(DType dtype, const TensorView& in, int axis, const TensorView& out);

const char* scan_family_name(ScanFamily family);

// One line: "scan [1000000 x (in 2, out 2)] kept [2 x (in 1, out 1)] family=columns".
std::string describe_scan_plan(const ScanPlan& plan);

}  // namespace foldkit::detail
