// The argument checks of the segmented reductions, shared by both backends (segmented_prepare.hpp).
#include "common/segmented_prepare.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include "common/erased_dispatch.hpp"
#include "foldkit/error.hpp"
#include "foldkit/tensor_reduce.hpp"  // reduce_result_dtype

namespace foldkit::detail {
namespace {

[[noreturn]] void bad(const SegmentedCall& c, const std::string& why) {
  throw Error(Errc::invalid_argument, std::string(c.api) + ": " + why);
}

// [first, last) of `count` elements of `size` bytes at p (count may be 0). Sizes beyond the
// address space saturate (such a call cannot be valid anyway; the overlap test stays safe).
struct Bytes {
  std::uintptr_t first, last;
};
Bytes bytes_of(const void* p, std::int64_t count, std::size_t size) {
  const auto first = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t room = std::numeric_limits<std::uintptr_t>::max() - first;
  const auto c = static_cast<std::uintptr_t>(count);
  const std::uintptr_t span = c > room / (size == 0 ? 1 : size) ? room : c * size;
  return Bytes{first, first + span};
}
bool overlap(Bytes a, Bytes b) { return a.first < a.last && b.first < b.last && a.first < b.last && b.first < a.last; }

}  // namespace

void check_segmented_call(const SegmentedCall& c) {
  erased::check_enums(c.op, c.dtype);
  const bool is_arg = c.op == ReduceOp::argmin || c.op == ReduceOp::argmax;
  if (c.two_outputs && !is_arg) bad(c, std::string("takes argmin or argmax, not ") + op_name(c.op));
  if (c.n < 0) bad(c, "n = " + std::to_string(c.n) + " is negative");
  if (c.num_segments < 0) bad(c, "num_segments = " + std::to_string(c.num_segments) + " is negative");
  if (c.in == nullptr && c.n > 0) bad(c, "input is null but n = " + std::to_string(c.n));
  const std::string segs = " is null but num_segments = " + std::to_string(c.num_segments);
  if (c.by_offsets) {
    if (c.offsets == nullptr) bad(c, "offsets is null (it has num_segments + 1 entries, at least one)");
  } else if (c.num_segments > 0) {
    if (c.begin == nullptr) bad(c, "begin offsets" + segs);
    if (c.end == nullptr) bad(c, "end offsets" + segs);
  }
  const char* out_name = c.two_outputs ? "indices" : "out";
  if (c.num_segments > 0) {
    if (c.out == nullptr) bad(c, std::string(out_name) + segs);
    if (c.two_outputs && c.values == nullptr) bad(c, "values" + segs);
  }
  if (c.num_segments == 0) return;  // nothing is written: no overlap to check

  const std::size_t element = dtype_size(c.dtype);
  const Bytes in = bytes_of(c.in, c.n, element);
  const Bytes out = bytes_of(c.out, c.num_segments, dtype_size(reduce_result_dtype(c.op, c.dtype)));
  const Bytes values = bytes_of(c.values, c.values != nullptr ? c.num_segments : 0, element);
  Bytes heads[2] = {{0, 0}, {0, 0}};
  const char* head_names[2] = {"offsets", "end offsets"};
  if (c.by_offsets) {
    heads[0] = bytes_of(c.offsets, c.num_segments + 1, sizeof(std::int64_t));
  } else {
    heads[0] = bytes_of(c.begin, c.num_segments, sizeof(std::int64_t));
    heads[1] = bytes_of(c.end, c.num_segments, sizeof(std::int64_t));
    head_names[0] = "begin offsets";
  }
  auto check_output = [&](Bytes o, const char* name) {
    if (overlap(o, in)) bad(c, std::string(name) + " overlaps the input");
    for (int k = 0; k < 2; ++k)
      if (overlap(o, heads[k])) bad(c, std::string(name) + " overlaps the " + head_names[k]);
  };
  check_output(out, out_name);
  if (c.values != nullptr) {
    check_output(values, "values");
    if (overlap(values, out)) bad(c, "values overlaps indices");
  }
}

std::int64_t first_bad_offset(const std::int64_t* offsets, std::int64_t num_segments, std::int64_t n) {
  for (std::int64_t i = 0; i <= num_segments; ++i) {
    if (bad_offset(offsets[i], i < num_segments, i < num_segments ? offsets[i + 1] : 0, n)) return i;
  }
  return -1;
}

std::string bad_offset_message(std::int64_t i, std::int64_t value, std::int64_t next, std::int64_t num_segments,
                               std::int64_t n) {
  const std::string at = "offsets[" + std::to_string(i) + "] = " + std::to_string(value);
  if (offset_outside(value, n)) return at + " is outside [0, n = " + std::to_string(n) + "]";
  (void)num_segments;
  return "offsets decrease: " + at + " > offsets[" + std::to_string(i + 1) + "] = " + std::to_string(next);
}

void check_offset_values(const std::int64_t* offsets, std::int64_t num_segments, std::int64_t n) {
  const std::int64_t i = first_bad_offset(offsets, num_segments, n);
  if (i < 0) return;
  throw Error(Errc::invalid_argument,
              bad_offset_message(i, offsets[i], i < num_segments ? offsets[i + 1] : 0, num_segments, n));
}

std::string bad_begin_end_message(std::int64_t s, std::int64_t b, std::int64_t e, std::int64_t n) {
  const std::string seg = "segment " + std::to_string(s) + " = [begin " + std::to_string(b) + ", end " +
                          std::to_string(e) + ")";
  if (b < 0 || b > n || e < 0 || e > n) return seg + " is outside [0, n = " + std::to_string(n) + "]";
  return seg + " ends before it begins";
}

}  // namespace foldkit::detail
