// The type-erased CPU scans: run-time (op, dtype) -> the typed scans of foldkit/scan.hpp, every
// form (whole / blocked / segmented x inclusive / exclusive) through one dispatch.
#include <cstdint>
#include <type_traits>

#include "common/erased_dispatch.hpp"
#include "foldkit/scan.hpp"

namespace foldkit::cpu {
namespace {

// The typed call for (op, dtype) over `shape`; init == nullptr: inclusive.
template <class Shape>
void scan_erased(ReduceOp op, DType dtype, const void* in_v, std::int64_t n, void* out_v, const Shape& shape,
                 const Scalar* init) {
  erased::visit_scan(op, dtype, init, [&](auto op_tag, auto tag, auto seed) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using T = decltype(tag);
    constexpr bool kInclusive = erased::is_inclusive_v<decltype(seed)>;
    const auto* in = static_cast<const T*>(in_v);
    auto* out = static_cast<scan_result_t<Op, T>*>(out_v);
    if constexpr (std::is_same_v<Shape, erased::WholeArray>) {
      if constexpr (kInclusive) inclusive_scan<Op, T>(in, n, out);
      else exclusive_scan<Op, T>(in, n, out, seed);
    } else if constexpr (std::is_same_v<Shape, erased::Blocks>) {
      if constexpr (kInclusive) inclusive_scan_blocked<Op, T>(in, n, out, shape.block_length);
      else exclusive_scan_blocked<Op, T>(in, n, out, shape.block_length, seed);
    } else {
      static_assert(std::is_same_v<Shape, erased::Segments>);
      if constexpr (kInclusive) inclusive_scan_segmented<Op, T>(in, n, out, shape.offsets, shape.num_segments);
      else exclusive_scan_segmented<Op, T>(in, n, out, shape.offsets, shape.num_segments, seed);
    }
  });
}

}  // namespace

void inclusive_scan(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out) {
  scan_erased(op, dtype, in, n, out, erased::WholeArray{}, nullptr);
}
void exclusive_scan(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out, Scalar init) {
  scan_erased(op, dtype, in, n, out, erased::WholeArray{}, &init);
}
void inclusive_scan_blocked(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out,
                            std::int64_t block_length) {
  scan_erased(op, dtype, in, n, out, erased::Blocks{block_length}, nullptr);
}
void exclusive_scan_blocked(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out,
                            std::int64_t block_length, Scalar init) {
  scan_erased(op, dtype, in, n, out, erased::Blocks{block_length}, &init);
}
void inclusive_scan_segmented(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out,
                              const std::int64_t* offsets, std::int64_t num_segments) {
  scan_erased(op, dtype, in, n, out, erased::Segments{offsets, num_segments}, nullptr);
}
void exclusive_scan_segmented(ReduceOp op, DType dtype, const void* in, std::int64_t n, void* out,
                              const std::int64_t* offsets, std::int64_t num_segments, Scalar init) {
  scan_erased(op, dtype, in, n, out, erased::Segments{offsets, num_segments}, &init);
}

}  // namespace foldkit::cpu
