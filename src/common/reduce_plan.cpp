// The tensor-reduction planner (foldkit/detail/reduce_plan.hpp): axes -> output shape and the
// canonical form both backends execute.
#include "foldkit/detail/reduce_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "foldkit/error.hpp"

namespace foldkit::detail {
namespace {

// Drops size-1 dimensions (they move nothing) and collapses a list holding a size-0 dimension to
// one size-0 dimension (no element exists; strides are then meaningless).
int drop_trivial(PlanDim* dims, int count) {
  int kept = 0;
  for (int i = 0; i < count; ++i) {
    if (dims[i].size == 0) {
      dims[0] = PlanDim{0, 0, 0, 0};
      return 1;
    }
    if (dims[i].size != 1) dims[kept++] = dims[i];
  }
  return kept;
}

// Merges neighbours (outer a, inner b) that form one run: a's stride is b's stride times b's
// size, in the input and (kept dimensions) in the output alike.
int merge_runs(PlanDim* dims, int count, bool check_out) {
  if (count == 0) return 0;
  int last = 0;
  for (int i = 1; i < count; ++i) {
    PlanDim& a = dims[last];
    const PlanDim& b = dims[i];
    const bool in_run = a.in_stride == b.in_stride * b.size;
    const bool out_run =
        !check_out || (a.out_stride == b.out_stride * b.size && a.out2_stride == b.out2_stride * b.size);
    if (in_run && out_run) {
      a = PlanDim{a.size * b.size, b.in_stride, b.out_stride, b.out2_stride};
    } else {
      dims[++last] = b;
    }
  }
  return last + 1;
}

std::string dims_text(const PlanDim* dims, int count, bool with_out) {
  std::string s = "[";
  for (int i = 0; i < count; ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(dims[i].size) + " x (in " + std::to_string(dims[i].in_stride);
    if (with_out) s += ", out " + std::to_string(dims[i].out_stride);
    s += ")";
  }
  return s + "]";
}

}  // namespace

unsigned normalize_axes(int rank, AxisList axes) {
  if (axes.empty()) return rank >= 32 ? ~0u : (1u << rank) - 1u;
  if (axes.size() > static_cast<std::size_t>(rank))
    throw Error(Errc::invalid_argument, std::to_string(axes.size()) + " axes for rank " + std::to_string(rank) +
                                            ": some axis repeats or is out of range");
  unsigned mask = 0;
  for (int a : axes) {
    if (a < -rank || a >= rank)
      throw Error(Errc::invalid_argument,
                  "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    const int axis = a < 0 ? a + rank : a;
    if (mask & (1u << axis))
      throw Error(Errc::invalid_argument, "axis " + std::to_string(axis) + " is listed twice");
    mask |= 1u << axis;
  }
  return mask;
}

ReducePlan plan_reduce(const TensorView& in, AxisList axes, bool keepdims, const std::int64_t* out_strides,
                       ReducedOrder order, const std::int64_t* out2_strides) {
  ReducePlan p;
  p.in_rank = in.rank;
  p.keepdims = keepdims;
  p.reduced_mask = normalize_axes(in.rank, axes);
  int out_dim_of[kMaxRank] = {};  // the output dimension of input axis i (kept axes; all with keepdims)
  for (int i = 0; i < in.rank; ++i) {
    const bool reduced = (p.reduced_mask >> i) & 1u;
    if (reduced) p.reduce_numel *= in.shape[i];
    else p.out_numel *= in.shape[i];
    if (reduced && !keepdims) continue;
    out_dim_of[i] = p.out_rank;
    p.out_shape[p.out_rank++] = reduced ? 1 : in.shape[i];
  }
  std::int64_t row_major[kMaxRank] = {};
  for (std::int64_t j = p.out_rank - 1, s = 1; j >= 0; --j) {
    row_major[j] = s;
    s *= p.out_shape[j] > 0 ? p.out_shape[j] : 1;
  }
  const std::int64_t* ostr = out_strides != nullptr ? out_strides : row_major;
  const std::int64_t* ostr2 = out2_strides != nullptr ? out2_strides : ostr;

  for (int i = 0; i < in.rank; ++i) {
    if ((p.reduced_mask >> i) & 1u) p.reduced[p.reduced_rank++] = PlanDim{in.shape[i], in.strides[i], 0};
    else p.kept[p.kept_rank++] = PlanDim{in.shape[i], in.strides[i], ostr[out_dim_of[i]], ostr2[out_dim_of[i]]};
  }
  p.kept_rank = drop_trivial(p.kept, p.kept_rank);
  p.reduced_rank = drop_trivial(p.reduced, p.reduced_rank);
  // Outermost first. Stable, so equal strides (broadcast dimensions) keep their logical order.
  std::stable_sort(p.kept, p.kept + p.kept_rank, [](const PlanDim& a, const PlanDim& b) {
    return a.out_stride != b.out_stride ? a.out_stride > b.out_stride : a.in_stride > b.in_stride;
  });
  if (order == ReducedOrder::memory)
    std::stable_sort(p.reduced, p.reduced + p.reduced_rank,
                     [](const PlanDim& a, const PlanDim& b) { return a.in_stride > b.in_stride; });
  p.kept_rank = merge_runs(p.kept, p.kept_rank, true);
  p.reduced_rank = merge_runs(p.reduced, p.reduced_rank, false);
  return p;
}

const char* plan_family(const ReducePlan& p) {
  if (p.kept_rank == 0) return "all";
  if (p.reduced_rank == 0) return "map";
  const PlanDim& r = p.reduced[p.reduced_rank - 1];
  if (r.in_stride == 1) return r.size > kShortRowMax ? "contiguous-rows" : "short-rows";
  if (p.kept[p.kept_rank - 1].in_stride == 1) return "outer";
  return "strided";
}

std::string describe_plan(const ReducePlan& p) {
  return "kept " + dims_text(p.kept, p.kept_rank, true) + " reduced " + dims_text(p.reduced, p.reduced_rank, false) +
         " family=" + plan_family(p);
}

}  // namespace foldkit::detail
