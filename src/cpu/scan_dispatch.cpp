// The type-erased CPU scans: runtime (op, dtype) -> inclusive_scan / exclusive_scan<Op, T>.
#include <cstdint>
#include <string>

#include "common/erased_dispatch.hpp"
#include "foldkit/scan.hpp"

namespace foldkit::cpu {
void inclusive_scan(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out) {
  erased::check_scan(op, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    erased::visit_scan_op(op, [&](auto op_tag) {
      constexpr ReduceOp Op = decltype(op_tag)::value;
      inclusive_scan<Op, T>(static_cast<const T*>(in), n, static_cast<scan_result_t<Op, T>*>(out));
    });
  });
}

void exclusive_scan(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out, const void* init) {
  erased::check_scan(op, dtype);
  if (init == nullptr) throw Error(Errc::invalid_argument, "exclusive_scan: init is null");
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    erased::visit_scan_op(op, [&](auto op_tag) {
      constexpr ReduceOp Op = decltype(op_tag)::value;
      using R = scan_result_t<Op, T>;
      const R first = erased::read_init<R>(init);
      exclusive_scan<Op, T>(static_cast<const T*>(in), n, static_cast<R*>(out), first);
    });
  });
}

}  // namespace foldkit::cpu
