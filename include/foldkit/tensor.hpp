// foldkit::TensorView: a non-owning view of an N-dimensional strided array, field for field
// DLPack's DLTensor (data, device, ndim = rank, dtype, shape, strides; byte_offset is folded
// into data), so a DLPack capsule or a framework tensor maps onto it without copying.
//
//   float m[3][4];
//   auto v  = foldkit::TensorView::contiguous(m, foldkit::DType::f32, {3, 4});        // strides {4, 1}
//   auto vt = foldkit::TensorView::strided(m, foldkit::DType::f32, {4, 3}, {1, 4});   // its transpose
//
// Strides count ELEMENTS (as DLPack's and PyTorch's do, unlike NumPy's bytes) and must be
// non-negative: zero strides express broadcast inputs; negative ones (reversed views) are not
// supported yet. Zero-size dimensions are allowed (numel() == 0). The view never owns or frees
// `data`; an input view is never written through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "foldkit/dtype.hpp"

namespace foldkit {

inline constexpr int kMaxRank = 8;

// Where the data lives (DLPack's DLDevice, restricted to the two kinds foldkit runs on).
enum class DeviceKind : int { host, cuda };
struct Device {
  DeviceKind kind = DeviceKind::host;
  int id = 0;  // the CUDA device ordinal; 0 for host
  static constexpr Device host() { return Device{DeviceKind::host, 0}; }
  static constexpr Device cuda(int ordinal) { return Device{DeviceKind::cuda, ordinal}; }
};

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::f32;
  Device device{};
  int rank = 0;                         // 0 (a scalar: one element) .. kMaxRank
  std::int64_t shape[kMaxRank] = {};    // entries [rank, kMaxRank) are unused
  std::int64_t strides[kMaxRank] = {};  // in elements

  // Product of the shape (1 for rank 0). Assumes a valid view (validate() checks for overflow).
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }

  // Row-major (C order) strides. A rank above kMaxRank is recorded as such (and its extra
  // dimensions dropped) so that validate() reports it instead of the constructor truncating.
  static TensorView contiguous(const void* data, DType dtype, const std::int64_t* shape, int rank,
                               Device device = Device::host()) {
    TensorView v = header(data, dtype, rank, device);
    std::int64_t stride = 1;
    for (int i = (rank < kMaxRank ? rank : kMaxRank) - 1; i >= 0; --i) {
      v.shape[i] = shape[i];
      v.strides[i] = stride;
      stride *= shape[i] > 0 ? shape[i] : 1;
    }
    return v;
  }
  static TensorView contiguous(const void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                               Device device = Device::host()) {
    return contiguous(data, dtype, shape.begin(), static_cast<int>(shape.size()), device);
  }

  // Explicit strides (elements); shape and strides have `rank` entries each.
  static TensorView strided(const void* data, DType dtype, const std::int64_t* shape, const std::int64_t* strides,
                            int rank, Device device = Device::host()) {
    TensorView v = header(data, dtype, rank, device);
    for (int i = 0; i < rank && i < kMaxRank; ++i) {
      v.shape[i] = shape[i];
      v.strides[i] = strides[i];
    }
    return v;
  }
  // A shape and strides list of different lengths gives a view validate() rejects (rank -1).
  static TensorView strided(const void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                            std::initializer_list<std::int64_t> strides, Device device = Device::host()) {
    if (shape.size() != strides.size()) return header(data, dtype, -1, device);
    return strided(data, dtype, shape.begin(), strides.begin(), static_cast<int>(shape.size()), device);
  }

 private:
  static TensorView header(const void* data, DType dtype, int rank, Device device) {
    TensorView v;
    v.data = const_cast<void*>(data);  // DLTensor's data is void*; foldkit never writes an input
    v.dtype = dtype;
    v.device = device;
    v.rank = rank;
    return v;
  }
};

// Throws Error(invalid_argument), naming `what` ("input", "out", ...), unless: 0 <= rank <= 8,
// shape and strides non-negative, numel and the byte extent (the farthest element's byte offset
// plus its size) fit in int64, data non-null when numel > 0, and the device kind is known.
// Error(unsupported) for a dtype outside the enumeration.
void validate(const TensorView& v, const char* what);

// The byte range [first, last) a valid view's elements occupy (first == last when numel == 0).
struct ByteRange {
  std::uintptr_t first = 0, last = 0;
};
ByteRange byte_range(const TensorView& v);

// Axes for a reduction (or, later, a scan): indices into a view's dimensions, negative ones
// counting from the end (-1 is the last). Built from a braced list, a vector or a pointer and a
// count, and copied (so a braced list may be passed on freely). A list longer than kMaxRank keeps
// its length but only its first kMaxRank axes: it cannot be valid for any view (some axis would
// repeat), and the planner reports it by its length.
class AxisList {
 public:
  AxisList() = default;
  AxisList(std::initializer_list<int> axes) : AxisList(axes.begin(), axes.size()) {}
  AxisList(const std::vector<int>& axes) : AxisList(axes.data(), axes.size()) {}
  AxisList(const int* axes, std::size_t count) : size_(count) {
    for (std::size_t i = 0; i < count && i < static_cast<std::size_t>(kMaxRank); ++i) axes_[i] = axes[i];
  }
  const int* begin() const { return axes_; }
  const int* end() const { return axes_ + (size_ < static_cast<std::size_t>(kMaxRank) ? size_ : kMaxRank); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  int axes_[kMaxRank] = {};
  std::size_t size_ = 0;
};

}  // namespace foldkit
