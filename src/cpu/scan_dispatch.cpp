// The type-erased CPU scans: runtime (op, dtype) -> inclusive_scan / exclusive_scan<Op, T>.
#include <cstdint>

#include "common/erased_dispatch.hpp"
#include "foldkit/scan.hpp"

namespace foldkit::cpu {
void inclusive_scan(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out) {
  erased::visit_inclusive_scan(op, dtype, [&](auto op_tag, auto tag) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using T = decltype(tag);
    inclusive_scan<Op, T>(static_cast<const T*>(in), n, static_cast<scan_result_t<Op, T>*>(out));
  });
}

void exclusive_scan(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out, const void* init) {
  erased::visit_exclusive_scan(op, dtype, init, [&](auto op_tag, auto tag, auto first) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using T = decltype(tag);
    exclusive_scan<Op, T>(static_cast<const T*>(in), n, static_cast<scan_result_t<Op, T>*>(out), first);
  });
}

}  // namespace foldkit::cpu
