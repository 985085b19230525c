// foldkit::cpu::inclusive_scan / exclusive_scan over tensors (foldkit/tensor_scan.hpp): executes
// the backend-independent plan (foldkit/detail/scan_plan.hpp) on the CPU backend's threads.
//
// "rows-contiguous" plans (the lines lie back to back in and out) are the core's blocked scan of
// the flat array with block_length = line length (cpu::*_scan_blocked, type-erased): its bits.
// Every other plan runs the engine of foldkit/detail/tensor_scan_cpu.hpp (shared with the
// user-functor scans of foldkit/tensor_scan_custom.hpp) with the op's combine.
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/erased_dispatch.hpp"
#include "foldkit/detail/scan_plan.hpp"
#include "foldkit/detail/tensor_scan_cpu.hpp"
#include "foldkit/reduce.hpp"  // detail::parallel_for_chunks, check_host_input
#include "foldkit/scan.hpp"
#include "foldkit/tensor_scan.hpp"

namespace foldkit::cpu {
namespace {

using foldkit::detail::ScanFamily;
using foldkit::detail::ScanPlan;

template <ReduceOp Op, class A>
using combine_t = std::conditional_t<
    Op == ReduceOp::sum, op::Sum<A>,
    std::conditional_t<Op == ReduceOp::prod, op::Prod<A>, std::conditional_t<Op == ReduceOp::min, op::Min<A>, op::Max<A>>>>;

// A built-in op as the engine's fold: T in, scan_accum_t accumulated, scan_result_t out.
template <ReduceOp Op, class T>
struct BuiltinScanFold {
  using value_type = T;
  using accum_type = scan_accum_t<Op, T>;
  using result_type = scan_result_t<Op, T>;
  using F = combine_t<Op, accum_type>;
  static accum_type identity() { return F::identity(); }
  accum_type operator()(accum_type a, accum_type b) const { return F{}(a, b); }
  static accum_type load(T v) { return static_cast<accum_type>(v); }
  static result_type store(accum_type v) { return static_cast<result_type>(v); }
};

// The CPU backend's own checks: host views over host memory.
void check_host_view(const TensorView& v, const char* what) {
  if (v.device.kind != DeviceKind::host)
    throw Error(Errc::wrong_memory, std::string(what) + " is a CUDA device view; the CPU backend needs host memory");
  detail::check_host_input(v.data, v.numel() > 0 ? 1 : 0);
}

void run(ReduceOp op, const TensorView& in, int axis, const TensorView& out, const Scalar* init) {
  const ScanPlan plan = foldkit::detail::prepare_scan(op, in, axis, out, init);
  check_host_view(in, "input");
  check_host_view(out, "out");
  if (plan.family == ScanFamily::empty) return;
  if (plan.family == ScanFamily::rows_contiguous) {
    if (init != nullptr) exclusive_scan_blocked(op, in.dtype, in.data, plan.numel, out.data, plan.len, *init);
    else inclusive_scan_blocked(op, in.dtype, in.data, plan.numel, out.data, plan.len);
    return;
  }
  erased::visit_scan(op, in.dtype, init, [&](auto op_tag, auto tag, auto seed) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using T = decltype(tag);
    using Fold = BuiltinScanFold<Op, T>;
    if constexpr (erased::is_inclusive_v<decltype(seed)>) {
      detail::execute_tensor_scan<false>(plan, in.data, out.data, Fold{}, Fold::identity());
    } else {
      detail::execute_tensor_scan<true>(plan, in.data, out.data, Fold{}, static_cast<typename Fold::accum_type>(seed));
    }
  });
}

}  // namespace

namespace detail {

foldkit::detail::ScanPlan prepare_scan_custom(DType dtype, const TensorView& in, int axis, const TensorView& out) {
  const ScanPlan plan = foldkit::detail::prepare_scan_custom(dtype, in, axis, out);
  check_host_view(in, "input");
  check_host_view(out, "out");
  return plan;
}

}  // namespace detail

void inclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out) {
  run(op, in, axis, out, nullptr);
}

void exclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, Scalar init) {
  run(op, in, axis, out, &init);
}

}  // namespace foldkit::cpu
