// The type-erased CUDA scans: run-time (op, dtype) -> the typed scans of foldkit/cuda/scan.hpp,
// every form (whole / blocked / segmented x inclusive / exclusive, explicit or convenient
// workspace) through one dispatch.
#include <cstdint>
#include <type_traits>

#include "common/erased_dispatch.hpp"
#include "foldkit/cuda/scan.hpp"

namespace foldkit::cuda {
namespace {

// The typed call for (op, dtype) over `shape`; init == nullptr: inclusive; ws == nullptr: the
// convenient form.
template <class Shape>
void scan_erased(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, const Shape& shape,
                 const Scalar* init, const Workspace* ws, cudaStream_t stream) {
  erased::visit_scan(op, dtype, init, [&](auto op_tag, auto tag, auto seed) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using T = decltype(tag);
    constexpr bool kInclusive = erased::is_inclusive_v<decltype(seed)>;
    const auto* in = static_cast<const T*>(d_in);
    auto* out = static_cast<scan_result_t<Op, T>*>(d_out);
    if constexpr (std::is_same_v<Shape, erased::WholeArray>) {
      if constexpr (kInclusive) {
        if (ws != nullptr) inclusive_scan<Op, T>(in, n, out, *ws, stream);
        else inclusive_scan<Op, T>(in, n, out, stream);
      } else {
        if (ws != nullptr) exclusive_scan<Op, T>(in, n, out, seed, *ws, stream);
        else exclusive_scan<Op, T>(in, n, out, seed, stream);
      }
    } else if constexpr (std::is_same_v<Shape, erased::Blocks>) {
      const std::int64_t len = shape.block_length;
      if constexpr (kInclusive) {
        if (ws != nullptr) inclusive_scan_blocked<Op, T>(in, n, out, len, *ws, stream);
        else inclusive_scan_blocked<Op, T>(in, n, out, len, stream);
      } else {
        if (ws != nullptr) exclusive_scan_blocked<Op, T>(in, n, out, len, seed, *ws, stream);
        else exclusive_scan_blocked<Op, T>(in, n, out, len, seed, stream);
      }
    } else {
      static_assert(std::is_same_v<Shape, erased::Segments>);
      const std::int64_t* offsets = shape.offsets;
      const std::int64_t segments = shape.num_segments;
      if constexpr (kInclusive) {
        if (ws != nullptr) inclusive_scan_segmented<Op, T>(in, n, out, offsets, segments, *ws, stream);
        else inclusive_scan_segmented<Op, T>(in, n, out, offsets, segments, stream);
      } else {
        if (ws != nullptr) exclusive_scan_segmented<Op, T>(in, n, out, offsets, segments, seed, *ws, stream);
        else exclusive_scan_segmented<Op, T>(in, n, out, offsets, segments, seed, stream);
      }
    }
  });
}

}  // namespace

void inclusive_scan(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, Workspace ws,
                    cudaStream_t stream) {
  scan_erased(op, dtype, d_in, n, d_out, erased::WholeArray{}, nullptr, &ws, stream);
}
void inclusive_scan(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, cudaStream_t stream) {
  scan_erased(op, dtype, d_in, n, d_out, erased::WholeArray{}, nullptr, nullptr, stream);
}
void exclusive_scan(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, Scalar init,
                    Workspace ws, cudaStream_t stream) {
  scan_erased(op, dtype, d_in, n, d_out, erased::WholeArray{}, &init, &ws, stream);
}
void exclusive_scan(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, Scalar init,
                    cudaStream_t stream) {
  scan_erased(op, dtype, d_in, n, d_out, erased::WholeArray{}, &init, nullptr, stream);
}

void inclusive_scan_blocked(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                            std::int64_t block_length, Workspace ws, cudaStream_t stream) {
  scan_erased(op, dtype, d_in, n, d_out, erased::Blocks{block_length}, nullptr, &ws, stream);
}
void inclusive_scan_blocked(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                            std::int64_t block_length, cudaStream_t stream) {
  scan_erased(op, dtype, d_in, n, d_out, erased::Blocks{block_length}, nullptr, nullptr, stream);
}
void exclusive_scan_blocked(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                            std::int64_t block_length, Scalar init, Workspace ws, cudaStream_t stream) {
  scan_erased(op, dtype, d_in, n, d_out, erased::Blocks{block_length}, &init, &ws, stream);
}
void exclusive_scan_blocked(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                            std::int64_t block_length, Scalar init, cudaStream_t stream) {
  scan_erased(op, dtype, d_in, n, d_out, erased::Blocks{block_length}, &init, nullptr, stream);
}

void inclusive_scan_segmented(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, Workspace ws,
                              cudaStream_t stream) {
  scan_erased(op, dtype, d_in, n, d_out, erased::Segments{d_offsets, num_segments}, nullptr, &ws, stream);
}
void inclusive_scan_segmented(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, cudaStream_t stream) {
  scan_erased(op, dtype, d_in, n, d_out, erased::Segments{d_offsets, num_segments}, nullptr, nullptr, stream);
}
void exclusive_scan_segmented(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, Scalar init, Workspace ws,
                              cudaStream_t stream) {
  scan_erased(op, dtype, d_in, n, d_out, erased::Segments{d_offsets, num_segments}, &init, &ws, stream);
}
void exclusive_scan_segmented(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
                              const std::int64_t* d_offsets, std::int64_t num_segments, Scalar init,
                              cudaStream_t stream) {
  scan_erased(op, dtype, d_in, n, d_out, erased::Segments{d_offsets, num_segments}, &init, nullptr, stream);
}

}  // namespace foldkit::cuda
