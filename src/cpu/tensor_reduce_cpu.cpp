// foldkit::cpu::reduce over tensors (foldkit/tensor_reduce.hpp): executes the backend-independent
// plan (foldkit/detail/reduce_plan.hpp) on the CPU backend's threads, through the executor it
// shares with the user functors (foldkit/detail/tensor_reduce_cpu.hpp: chunking, walks, outer
// blocks, work units), with the op's reduce_traits as the fold. A row that is one contiguous run
// uses the full-array reduction's own chunk kernel (reduce_chunk.hpp), so its value is bit for
// bit cpu::reduce<Op, T> over the run.
#include <cstdint>
#include <cstring>
#include <string>

#include "common/erased_dispatch.hpp"
#include "cpu/reduce_chunk.hpp"
#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/detail/tensor_reduce_cpu.hpp"
#include "foldkit/reduce.hpp"
#include "foldkit/tensor_reduce.hpp"
#include "foldkit/tensor_reduce_custom.hpp"

namespace foldkit::cpu {
namespace {

using foldkit::detail::ReducePlan;

// A built-in op as the executor's fold.
template <ReduceOp Op, class T>
struct BuiltinFold {
  using Tr = reduce_traits<Op, T>;
  using value_type = T;
  using accum_type = typename Tr::accum_type;
  using A = accum_type;

  A identity() const { return Tr::identity(); }
  A combine(A a, A b) const { return typename Tr::combine_type{}(a, b); }
  A from_element(T v, std::int64_t pos) const { return Tr::from_element(v, pos); }
  A contiguous_chunk(const T* p, std::int64_t len, std::int64_t first_pos) const {
    return detail::reduce_chunk<Op, T>(p, len, first_pos);
  }
  // Finalizes and writes the output element at offsets r (arg ops: the index, and the value).
  void write(char* out, char* out2, const detail::RowOffsets& r, A acc, std::int64_t row_len) const {
    const auto result = Tr::finalize(acc, row_len);
    if constexpr (Tr::kUsesIndex) {
      std::memcpy(out + r.out * sizeof(std::int64_t), &result.index, sizeof(std::int64_t));
      if (out2 != nullptr) std::memcpy(out2 + r.out2 * sizeof(T), &result.value, sizeof(T));
    } else {
      std::memcpy(out + r.out * sizeof(result), &result, sizeof(result));
    }
  }
};

template <ReduceOp Op, class T>
void execute(const ReducePlan& p, const TensorView& in, const TensorView& out, const TensorView* values) {
  detail::execute_tensor_reduce(p, in.data, out.data, values != nullptr ? values->data : nullptr, BuiltinFold<Op, T>{});
}

// The CPU backend's own checks: host views over host memory.
void check_host_view(const TensorView& v, const char* what) {
  if (v.device.kind != DeviceKind::host)
    throw Error(Errc::wrong_memory, std::string(what) + " is a CUDA device view; the CPU backend needs host memory");
  detail::check_host_input(v.data, v.numel() > 0 ? 1 : 0);
}

void run(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out,
         const TensorView* values) {
  const ReducePlan plan = foldkit::detail::prepare_reduce(op, in, axes, keepdims, out, values);
  check_host_view(in, "input");
  check_host_view(out, values != nullptr ? "indices" : "out");
  if (values != nullptr) check_host_view(*values, "values");
  visit_dtype(in.dtype, [&](auto tag) {
    using T = decltype(tag);
    erased::visit_reduce_op(op, [&](auto op_tag) { execute<decltype(op_tag)::value, T>(plan, in, out, values); });
  });
}

}  // namespace

ReduceOutput reduce_output_shape(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims) {
  validate(in, "input");
  erased::check_enums(op, in.dtype);
  if ((op == ReduceOp::argmin || op == ReduceOp::argmax) && axes.size() > 1)
    throw Error(Errc::invalid_argument, std::string(op_name(op)) + " takes at most one axis");
  const ReducePlan p = foldkit::detail::plan_reduce(in, axes, keepdims);
  ReduceOutput r;
  r.dtype = reduce_result_dtype(op, in.dtype);
  r.rank = p.out_rank;
  for (int i = 0; i < p.out_rank; ++i) r.shape[i] = p.out_shape[i];
  return r;
}

void reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out) {
  run(op, in, axes, keepdims, out, nullptr);
}

void arg_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& indices,
                const TensorView& values) {
  if (op != ReduceOp::argmin && op != ReduceOp::argmax)
    throw Error(Errc::invalid_argument, std::string("arg_reduce takes argmin or argmax, not ") +
                                            (is_valid(op) ? op_name(op) : "an unknown op"));
  run(op, in, axes, keepdims, indices, &values);
}

namespace detail {

foldkit::detail::ReducePlan prepare_reduce_custom(DType dtype, const TensorView& in, AxisList axes, bool keepdims,
                                                  const TensorView& out) {
  const ReducePlan plan = foldkit::detail::prepare_reduce_custom(dtype, in, axes, keepdims, out);
  check_host_view(in, "input");
  check_host_view(out, "out");
  return plan;
}

}  // namespace detail

}  // namespace foldkit::cpu
