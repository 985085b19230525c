// The tensor-scan planner and its checks (foldkit/detail/scan_plan.hpp), shared by the backends.
//
#include <algorithm>
#include <cstdint>
#include <string>

#include "common/erased_dispatch.hpp"
#include "common/view_checks.hpp"
#include "foldkit/detail/scan_plan.hpp"
#include "foldkit/error.hpp"
#include "foldkit/scan.hpp"
#include "foldkit/tensor_scan.hpp"

namespace foldkit::detail {
namespace {

[[noreturn]] void bad(const std::string& why) { throw Error(Errc::invalid_argument, why); }

// Exactly the input view: the same data, dtype and strides (dimensions of size 1 have no stride
// that matters). The shapes are equal already.
bool same_view(const TensorView& in, const TensorView& out) {
  if (in.data != out.data || in.dtype != out.dtype) return false;
  for (int i = 0; i < in.rank; ++i)
    if (in.shape[i] > 1 && in.strides[i] != out.strides[i]) return false;
  return true;
}

void drop_and_merge(ScanPlan& p) {
  // Outermost first: by output stride, then input stride. Stable, so equal strides keep their order.
  std::stable_sort(p.kept, p.kept + p.kept_rank, [](const PlanDim& a, const PlanDim& b) {
    return a.out_stride != b.out_stride ? a.out_stride > b.out_stride : a.in_stride > b.in_stride;
  });
  if (p.kept_rank == 0) return;
  int last = 0;
  for (int i = 1; i < p.kept_rank; ++i) {
    PlanDim& a = p.kept[last];
    const PlanDim& b = p.kept[i];
    if (a.in_stride == b.in_stride * b.size && a.out_stride == b.out_stride * b.size)
      a = PlanDim{a.size * b.size, b.in_stride, b.out_stride, 0};
    else
      p.kept[++last] = b;
  }
  p.kept_rank = last + 1;
}

ScanFamily classify(const ScanPlan& p) {
  if (p.numel == 0) return ScanFamily::empty;
  if (p.scan.in_stride == 1 && p.scan.out_stride == 1) {
    if (p.kept_rank == 0) return ScanFamily::rows_contiguous;
    if (p.kept_rank == 1 && p.kept[0].in_stride == p.len && p.kept[0].out_stride == p.len)
      return ScanFamily::rows_contiguous;
    return ScanFamily::rows;
  }
  if (p.kept_rank > 0 && p.kept[p.kept_rank - 1].in_stride == 1 && p.kept[p.kept_rank - 1].out_stride == 1)
    return ScanFamily::columns;
  return ScanFamily::strided;
}

std::string dims_text(const PlanDim* dims, int count) {
  std::string s = "[";
  for (int i = 0; i < count; ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(dims[i].size) + " x (in " + std::to_string(dims[i].in_stride) + ", out " +
         std::to_string(dims[i].out_stride) + ")";
  }
  return s + "]";
}

}  // namespace

int normalize_scan_axis(int rank, int axis) {
  const int r = rank > 0 ? rank : 1;
  if (axis < -r || axis >= r)
    bad("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) +
        (rank == 0 ? " (a rank-0 input takes axis 0 or -1)" : ""));
  const int a = axis < 0 ? axis + r : axis;
  return rank == 0 ? 0 : a;
}

ScanPlan plan_scan(const TensorView& in, int axis, const std::int64_t* out_strides) {
  ScanPlan p;
  p.in_rank = in.rank;
  p.axis = normalize_scan_axis(in.rank, axis);
  p.numel = in.numel();
  p.len = in.rank == 0 ? 1 : in.shape[p.axis];
  p.lines = p.numel == 0 ? 0 : p.numel / p.len;
  std::int64_t row_major[kMaxRank] = {};
  std::int64_t run = 1;
  for (int j = in.rank - 1; j >= 0; --j) {
    row_major[j] = run;
    run *= in.shape[j] > 0 ? in.shape[j] : 1;
  }
  const std::int64_t* ostr = out_strides != nullptr ? out_strides : row_major;
  p.scan = PlanDim{p.len, 1, 1, 0};
  if (p.len > 1) {
    p.scan.in_stride = in.strides[p.axis];
    p.scan.out_stride = ostr[p.axis];
  }
  if (p.numel > 0) {
    for (int i = 0; i < in.rank; ++i)
      if (i != p.axis && in.shape[i] > 1) p.kept[p.kept_rank++] = PlanDim{in.shape[i], in.strides[i], ostr[i], 0};
    drop_and_merge(p);
  }
  p.family = classify(p);
  return p;
}

ScanPlan prepare_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, const Scalar* init) {
  validate(in, "input");
  erased::check_scan(op, in.dtype);
  validate(out, "out");
  const int ax = normalize_scan_axis(in.rank, axis);
  const DType want = scan_result_dtype(op, in.dtype);
  if (out.dtype != want)
    bad(std::string("out has dtype ") + dtype_name(out.dtype) + "; this scan writes " + dtype_name(want));
  bool same_shape = out.rank == in.rank;
  for (int i = 0; same_shape && i < in.rank; ++i) same_shape = out.shape[i] == in.shape[i];
  if (!same_shape)
    bad("out has shape " + shape_text(out.shape, out.rank) + "; a scan's output has the input's shape " +
        shape_text(in.shape, in.rank));
  check_no_self_overlap(out, "out");
  if (!same_view(in, out) && views_overlap(in, out))
    bad("out overlaps the input (only exactly in place is allowed: the same data, dtype and strides)");
  // The init converts exactly to the result dtype, or Error(invalid_argument) now, before anything
  // is written (the backends convert it again through the same helper when they dispatch).
  if (init != nullptr) erased::visit_scan(op, in.dtype, init, [](auto, auto, auto) {});
  return plan_scan(in, ax, out.strides);
}

ScanPlan prepare_scan_custom(DType dtype, const TensorView& in, int axis, const TensorView& out) {
  validate(in, "input");
  validate(out, "out");
  if (in.dtype != dtype)
    bad(std::string("input has dtype ") + dtype_name(in.dtype) + "; the functor's element type is " + dtype_name(dtype));
  return prepare_scan(ReduceOp::max, in, axis, out, nullptr);  // max: the output's dtype is the input's
}

const char* scan_family_name(ScanFamily family) {
  switch (family) {
    case ScanFamily::empty: return "empty";
    case ScanFamily::rows_contiguous: return "rows-contiguous";
    case ScanFamily::rows: return "rows";
    case ScanFamily::columns: return "columns";
    case ScanFamily::strided: return "strided";
  }
  return "?";
}

ScanMatrix scan_matrix(const ScanPlan& p) {
  ScanMatrix m;
  m.rows = p.len;
  m.in_rs = p.scan.in_stride;
  m.out_rs = p.scan.out_stride;
  if (p.kept_rank > 0) {
    const PlanDim& c = p.kept[p.kept_rank - 1];
    m.cols = c.size;
    m.in_cs = c.in_stride;
    m.out_cs = c.out_stride;
  }
  m.outer_rank = p.kept_rank > 0 ? p.kept_rank - 1 : 0;
  m.outer = p.kept;
  for (int d = 0; d < m.outer_rank; ++d) m.outer_count *= p.kept[d].size;
  return m;
}

std::string describe_scan_plan(const ScanPlan& p) {
  return "scan " + dims_text(&p.scan, 1) + " kept " + dims_text(p.kept, p.kept_rank) +
         " family=" + scan_family_name(p.family);
}

}  // namespace foldkit::detail
