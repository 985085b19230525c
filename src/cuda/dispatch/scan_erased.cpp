// The type-erased CUDA scans: run-time (op, dtype) -> inclusive_scan / exclusive_scan<Op, T>.
#include <cstdint>

#include "common/erased_dispatch.hpp"
#include "foldkit/cuda/scan.hpp"

namespace foldkit::cuda {
namespace {

// The typed call for (op, dtype), explicit workspace or (ws == nullptr) the convenient form.
void inclusive_erased(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, const Workspace* ws,
                      cudaStream_t stream) {
  erased::visit_inclusive_scan(op, dtype, [&](auto op_tag, auto tag) {
    constexpr ReduceOp kOp = decltype(op_tag)::value;
    using T = decltype(tag);
    const auto* in = static_cast<const T*>(d_in);
    auto* out = static_cast<scan_result_t<kOp, T>*>(d_out);
    if (ws != nullptr) inclusive_scan<kOp, T>(in, n, out, *ws, stream);
    else inclusive_scan<kOp, T>(in, n, out, stream);
  });
}

void exclusive_erased(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, const void* init,
                      const Workspace* ws, cudaStream_t stream) {
  erased::visit_exclusive_scan(op, dtype, init, [&](auto op_tag, auto tag, auto first) {
    constexpr ReduceOp kOp = decltype(op_tag)::value;
    using T = decltype(tag);
    const auto* in = static_cast<const T*>(d_in);
    auto* out = static_cast<scan_result_t<kOp, T>*>(d_out);
    if (ws != nullptr) exclusive_scan<kOp, T>(in, n, out, first, *ws, stream);
    else exclusive_scan<kOp, T>(in, n, out, first, stream);
  });
}

}  // namespace

void inclusive_scan(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, Workspace ws,
                    cudaStream_t stream) {
  inclusive_erased(op, dtype, d_in, n, d_out, &ws, stream);
}
void inclusive_scan(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, cudaStream_t stream) {
  inclusive_erased(op, dtype, d_in, n, d_out, nullptr, stream);
}
void exclusive_scan(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, const void* init,
                    Workspace ws, cudaStream_t stream) {
  exclusive_erased(op, dtype, d_in, n, d_out, init, &ws, stream);
}
void exclusive_scan(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, const void* init,
                    cudaStream_t stream) {
  exclusive_erased(op, dtype, d_in, n, d_out, init, nullptr, stream);
}

}  // namespace foldkit::cuda
