// Output-view checks shared by the tensor reductions and scans (view_checks.hpp).
#include "common/view_checks.hpp"

#include "foldkit/error.hpp"

namespace foldkit::detail {

std::string shape_text(const std::int64_t* shape, int rank) {
  std::string s = "(";
  for (int i = 0; i < rank; ++i) s += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

void check_no_self_overlap(const TensorView& out, const char* what) {
  std::int64_t strides[kMaxRank], sizes[kMaxRank];
  int n = 0;
  for (int i = 0; i < out.rank; ++i)
    if (out.shape[i] > 1) {
      strides[n] = out.strides[i];
      sizes[n] = out.shape[i];
      ++n;
    }
  int order[kMaxRank];
  for (int i = 0; i < n; ++i) {  // insertion sort by stride (at most 8 entries)
    int j = i;
    for (; j > 0 && strides[order[j - 1]] > strides[i]; --j) order[j] = order[j - 1];
    order[j] = i;
  }
  std::int64_t span = 0;  // the largest offset the dimensions so far reach
  for (int k = 0; k < n; ++k) {
    const int d = order[k];
    if (strides[d] <= span)
      throw Error(Errc::invalid_argument,
                  std::string(what) + " maps two elements to one address (a zero or overlapping stride: strides " +
                      shape_text(out.strides, out.rank) + ", shape " + shape_text(out.shape, out.rank) + ")");
    span += (sizes[d] - 1) * strides[d];
  }
}

bool views_overlap(const TensorView& a, const TensorView& b) {
  const ByteRange x = byte_range(a), y = byte_range(b);
  return x.first < x.last && y.first < y.last && x.first < y.last && y.first < x.last;
}

}  // namespace foldkit::detail
