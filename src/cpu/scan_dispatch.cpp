// The type-erased CPU scans: runtime (op, dtype) -> inclusive_scan / exclusive_scan<Op, T>.
#include <cstdint>
#include <cstring>
#include <string>

#include "foldkit/scan.hpp"

namespace foldkit::cpu {
namespace {

void check_erased(ReduceOp op, DType dtype) {
  if (!is_valid(op)) throw Error(Errc::unsupported, "unknown ReduceOp value " + std::to_string(static_cast<int>(op)));
  if (!is_valid(dtype))
    throw Error(Errc::unsupported, "unknown DType value " + std::to_string(static_cast<int>(dtype)));
  if (!is_scan_op(op))
    throw Error(Errc::unsupported, "scans take sum, prod, min or max (not ReduceOp value " +
                                       std::to_string(static_cast<int>(op)) + ")");
}

// Calls f(std::integral_constant<ReduceOp, Op>) for a scan op (check_erased ran first).
template <class F>
void visit_scan_op(ReduceOp op, F&& f) {
  switch (op) {
    case ReduceOp::sum: return f(std::integral_constant<ReduceOp, ReduceOp::sum>{});
    case ReduceOp::prod: return f(std::integral_constant<ReduceOp, ReduceOp::prod>{});
    case ReduceOp::min: return f(std::integral_constant<ReduceOp, ReduceOp::min>{});
    case ReduceOp::max: return f(std::integral_constant<ReduceOp, ReduceOp::max>{});
    default: return;
  }
}

}  // namespace

void inclusive_scan(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out) {
  check_erased(op, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    visit_scan_op(op, [&](auto op_tag) {
      constexpr ReduceOp Op = decltype(op_tag)::value;
      inclusive_scan<Op, T>(static_cast<const T*>(in), n, static_cast<scan_result_t<Op, T>*>(out));
    });
  });
}

void exclusive_scan(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out, const void* init) {
  check_erased(op, dtype);
  if (init == nullptr) throw Error(Errc::invalid_argument, "exclusive_scan: init is null");
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    visit_scan_op(op, [&](auto op_tag) {
      constexpr ReduceOp Op = decltype(op_tag)::value;
      using R = scan_result_t<Op, T>;
      R first;
      std::memcpy(&first, init, sizeof(R));  // `init` is only promised to point at an R
      exclusive_scan<Op, T>(static_cast<const T*>(in), n, static_cast<R*>(out), first);
    });
  });
}

}  // namespace foldkit::cpu
