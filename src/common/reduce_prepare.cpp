// prepare_reduce (foldkit/detail/reduce_plan.hpp): every check a tensor reduction makes before
// it writes anything, shared by the backends, and the plan for the outputs it was given.
#include <cstdint>
#include <string>

#include "common/erased_dispatch.hpp"
#include "common/view_checks.hpp"
#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/error.hpp"
#include "foldkit/tensor_reduce.hpp"

namespace foldkit::detail {
namespace {

[[noreturn]] void bad(const std::string& why) { throw Error(Errc::invalid_argument, why); }

// The output's dtype and exact shape.
void check_output_shape(const TensorView& out, const char* what, DType want, const ReducePlan& p) {
  if (out.dtype != want)
    bad(std::string(what) + " has dtype " + dtype_name(out.dtype) + "; this reduction writes " + dtype_name(want));
  bool same = out.rank == p.out_rank;
  for (int i = 0; same && i < out.rank; ++i) same = out.shape[i] == p.out_shape[i];
  if (!same)
    bad(std::string(what) + " has shape " + shape_text(out.shape, out.rank) + "; the reduction's output shape is " +
        shape_text(p.out_shape, p.out_rank));
}

}  // namespace

ReducePlan prepare_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out,
                          const TensorView* values) {
  validate(in, "input");
  erased::check_enums(op, in.dtype);
  validate(out, values != nullptr ? "indices" : "out");
  if (values != nullptr) validate(*values, "values");
  const bool is_arg = op == ReduceOp::argmin || op == ReduceOp::argmax;
  if (is_arg && axes.size() > 1)
    bad(std::string(op_name(op)) + " takes at most one axis (none: the whole tensor); got " +
        std::to_string(axes.size()));
  const ReducePlan shape_only = plan_reduce(in, axes, keepdims);  // checks the axes
  const char* out_name = values != nullptr ? "indices" : "out";
  check_output_shape(out, out_name, reduce_result_dtype(op, in.dtype), shape_only);
  if (values != nullptr) check_output_shape(*values, "values", in.dtype, shape_only);
  check_no_self_overlap(out, out_name);
  if (values != nullptr) check_no_self_overlap(*values, "values");
  if (views_overlap(out, in)) bad(std::string(out_name) + " overlaps the input");
  if (values != nullptr && views_overlap(*values, in)) bad("values overlaps the input");
  if (values != nullptr && views_overlap(*values, out)) bad("values overlaps indices");
  if (needs_nonempty(op) && shape_only.reduce_numel == 0)
    throw Error(Errc::empty_input, std::string(op_name(op)) + " over an empty reduced extent has no value");
  return plan_reduce(in, axes, keepdims, out.strides, is_arg ? ReducedOrder::logical : ReducedOrder::memory,
                     values != nullptr ? values->strides : nullptr);
}

ReducePlan prepare_reduce_custom(DType dtype, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out) {
  validate(in, "input");
  validate(out, "out");
  if (in.dtype != dtype)
    bad(std::string("input has dtype ") + dtype_name(in.dtype) + "; the functor's element type is " + dtype_name(dtype));
  const ReducePlan shape_only = plan_reduce(in, axes, keepdims);  // checks the axes
  check_output_shape(out, "out", dtype, shape_only);
  check_no_self_overlap(out, "out");
  if (views_overlap(out, in)) bad("out overlaps the input");
  return plan_reduce(in, axes, keepdims, out.strides, ReducedOrder::memory);
}

}  // namespace foldkit::detail
