// TensorView validation (foldkit/tensor.hpp): the checks every tensor entry point of both
// backends runs before touching a view.
#include <cstdint>
#include <string>

#include "foldkit/error.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit {
namespace {

[[noreturn]] void bad(const char* what, const std::string& why) {
  throw Error(Errc::invalid_argument, std::string(what) + ": " + why);
}

// The offset (elements) of a valid, non-empty view's farthest element.
std::int64_t max_offset(const TensorView& v) {
  std::int64_t off = 0;
  for (int i = 0; i < v.rank; ++i) off += (v.shape[i] - 1) * v.strides[i];
  return off;
}

}  // namespace

void validate(const TensorView& v, const char* what) {
  if (v.rank < 0 || v.rank > kMaxRank)
    bad(what, "rank " + std::to_string(v.rank) + " is outside [0, " + std::to_string(kMaxRank) + "]");
  if (!is_valid(v.dtype))
    throw Error(Errc::unsupported,
                std::string(what) + ": unknown DType value " + std::to_string(static_cast<int>(v.dtype)));
  if (v.device.kind != DeviceKind::host && v.device.kind != DeviceKind::cuda)
    bad(what, "unknown device kind " + std::to_string(static_cast<int>(v.device.kind)));
  std::int64_t numel = 1;
  for (int i = 0; i < v.rank; ++i) {
    if (v.shape[i] < 0) bad(what, "shape[" + std::to_string(i) + "] = " + std::to_string(v.shape[i]) + " is negative");
    if (v.strides[i] < 0)
      bad(what, "strides[" + std::to_string(i) + "] = " + std::to_string(v.strides[i]) +
                    " is negative (reversed views are not supported)");
    if (__builtin_mul_overflow(numel, v.shape[i], &numel)) bad(what, "the element count overflows int64");
  }
  if (numel == 0) return;  // nothing is ever read or written: any pointer and extent are harmless
  // The farthest element's byte offset plus its size must fit in int64 (so every address
  // computation of the kernels is exact).
  std::int64_t extent = 0;
  for (int i = 0; i < v.rank; ++i) {
    std::int64_t step = 0;
    if (__builtin_mul_overflow(v.shape[i] - 1, v.strides[i], &step) || __builtin_add_overflow(extent, step, &extent))
      bad(what, "the byte extent overflows int64");
  }
  std::int64_t bytes = 0;
  if (__builtin_add_overflow(extent, std::int64_t{1}, &extent) ||
      __builtin_mul_overflow(extent, static_cast<std::int64_t>(dtype_size(v.dtype)), &bytes))
    bad(what, "the byte extent overflows int64");
  if (v.data == nullptr) bad(what, "data is null but the view has " + std::to_string(numel) + " elements");
}

ByteRange byte_range(const TensorView& v) {
  const auto first = reinterpret_cast<std::uintptr_t>(v.data);
  if (v.numel() == 0) return ByteRange{first, first};
  const auto bytes = static_cast<std::uintptr_t>(max_offset(v) + 1) * dtype_size(v.dtype);
  return ByteRange{first, first + bytes};
}

}  // namespace foldkit
