// The tensor scans' test reference and random cases, shared by the CPU and CUDA backends' tests
// (tests/cpu/cpu_tensor_scan_test.cpp, tests/gpu/cuda_tensor_scan_test.cpp).
//
// The reference walks every line of the input's LOGICAL index space (all indices but the axis,
// then along the axis), never through the planner: integer sums and products in wrapping uint64,
// float sums and products in long double (exact for the cases' data: quarters in [-5, 5] for
// sums, +-1 and rarely 2 or 1/2 for products, so the expected output is the exact value rounded once to
// the output type, whatever order a backend combines in), min/max by the documented rules
// (common/scan_reference.hpp: the first NaN wins, -0 < +0). Every output element is then compared
// bit for bit (any NaN for a NaN), and every byte of the output buffer outside the output view
// must still hold its poison (0xFF), or, in place, the input's own bytes.
//
// A case: random shape (ranks 0-6, sizes 0, 1, primes, 2^k +- 1; "long" cases with one axis of
// up to ~20000 and few lines, so that the GPU's look-back chains several tiles and the CPU cuts
// the rows in chunks), a random axis (negative too), an input layout (transposed, stepped,
// broadcast, offset), an output layout (row-major, or transposed / stepped / offset), in place
// now and then (when the result dtype is the input's), inclusive or exclusive with a random init
// (a Scalar of the result dtype, or an int32 that converts exactly).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "common/scan_reference.hpp"
#include "common/tensor_reference.hpp"
#include "foldkit/detail/scan_plan.hpp"
#include "foldkit/scan.hpp"
#include "foldkit/tensor_scan.hpp"
#include "support/random_arrays.hpp"
#include "support/reference.hpp"
#include "support/result_checks.hpp"

namespace foldkit::test::tscan {

// The view layouts and their random strides are the reductions' (common/tensor_reference.hpp).
using foldkit::test::Layout;
using foldkit::test::list_text;
using foldkit::test::make_layout;
using foldkit::test::OpTag;

template <class F> void for_each_scan_op(F&& f) {
  f(OpTag<ReduceOp::sum>{}), f(OpTag<ReduceOp::prod>{}), f(OpTag<ReduceOp::min>{}), f(OpTag<ReduceOp::max>{});
}

inline Layout row_major(const std::vector<std::int64_t>& shape, std::int64_t offset = 0) {
  Rng unused(0);
  return make_layout(shape, unused, false, false, false, offset);
}

// 0, 1, primes and 2^k +- 1.
inline constexpr std::int64_t kSizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 129};
// Lengths for the long axis: around the GPU tiles' row counts (16 .. 4096) and the CPU's chunks.
inline constexpr std::int64_t kLongSizes[] = {1023, 1025, 2047, 2048, 2049, 4095, 4097, 6143, 8191, 8193, 12289, 20011};

inline std::vector<std::int64_t> random_shape(Rng& rng, std::int64_t max_numel, bool long_axis, int& axis_hint) {
  axis_hint = -100;
  if (long_axis) {
    const int rank = static_cast<int>(rng.uniform(1, 3));
    std::vector<std::int64_t> shape(static_cast<std::size_t>(rank));
    for (auto& s : shape) s = std::vector<std::int64_t>{1, 2, 3, 4, 5, 8}[static_cast<std::size_t>(rng.uniform(0, 5))];
    const int a = static_cast<int>(rng.uniform(0, rank - 1));
    shape[static_cast<std::size_t>(a)] = kLongSizes[rng.uniform(0, static_cast<std::int64_t>(std::size(kLongSizes)) - 1)];
    axis_hint = a;
    return shape;
  }
  const int rank = static_cast<int>(rng.uniform(0, 6));
  std::vector<std::int64_t> shape(static_cast<std::size_t>(rank));
  const std::int64_t top = rank <= 2 ? static_cast<std::int64_t>(std::size(kSizes)) - 1 : rank <= 4 ? 12 : 6;
  for (auto& s : shape) s = kSizes[rng.uniform(0, top)];
  while (extent_of(shape) > max_numel) shape[static_cast<std::size_t>(rng.uniform(0, rank - 1))] = rng.uniform(0, 3);
  return shape;
}

// Element values (see the top of the file); NaN planted for float min/max when asked.
template <class T> T scan_value(ReduceOp op, const CounterRng& r, std::uint64_t i, bool plant_nan) {
  if constexpr (std::is_integral_v<T>) {
    if (op == ReduceOp::prod) return static_cast<T>(r.in_range<std::int64_t>(i, std::is_signed_v<T> ? -3 : 0, 3));
    return static_cast<T>(r.in_range<std::int64_t>(i, std::is_signed_v<T> ? -40 : 0, 40));
  } else {
    const std::int64_t k = r.in_range<std::int64_t>(i, -20, 20);
    if (op == ReduceOp::prod) {  // +-1, and rarely 2 or 1/2: the exponent walks slowly, so no
                                 // partial product of a long line leaves float's range
      const std::uint64_t u = (r.bits(i) >> 20) % 64;
      return from_double<T>(u == 0 ? 2.0 : u == 1 ? 0.5 : u < 24 ? -1.0 : 1.0);
    }
    if (plant_nan && k == 20 && (r.bits(i) >> 40) % 4 == 0) return quiet_nan<T>();
    if (k == 0 && (r.bits(i) >> 40) % 2) return from_double<T>(-0.0);
    return from_double<T>(static_cast<double>(k) / 4.0);
  }
}

// One case, type-erased: what a backend runner needs.
struct ScanCase {
  ReduceOp op = ReduceOp::sum;
  DType dtype = DType::f32, out_dtype = DType::f32;
  Layout in, out;  // out: over `out_bytes` (in place: the input buffer itself, out == in)
  int axis = 0;
  bool in_place = false;
  bool exclusive = false;
  Scalar init = Scalar(0);
  std::vector<unsigned char> in_bytes;   // the input's buffer
  std::vector<unsigned char> out_bytes;  // the output's buffer, poisoned (in place: empty)
  std::string describe() const {
    std::string s = std::string(exclusive ? "exclusive " : "inclusive ") + op_name(op) + " " + dtype_name(dtype) +
                    " input " + in.describe() + " axis " + std::to_string(axis);
    if (in_place) s += " IN PLACE";
    else s += " out " + out.describe();
    if (exclusive) s += " init " + init.to_string() + " (" + dtype_name(init.dtype()) + ")";
    return s;
  }
};

// Runs the backend on a case: `result` receives the output buffer's bytes after the call (in
// place: the input buffer's), also when the call throws.
using Runner = void (*)(const ScanCase&, std::vector<unsigned char>& result);

template <class V> V load_at(const unsigned char* bytes, std::int64_t elem_offset) {
  V v;
  std::memcpy(&v, bytes + elem_offset * static_cast<std::int64_t>(sizeof(V)), sizeof(V));
  return v;
}

// The expected outputs, in row-major logical order.
template <ReduceOp Op, class T>
std::vector<expected_scan_t<Op, T>> reference(const ScanCase& c) {
  using R = expected_scan_t<Op, T>;
  const Layout& l = c.in;
  const std::int64_t n = l.numel();
  std::vector<R> want(static_cast<std::size_t>(n));
  if (n == 0) return want;
  const int rank = l.rank();
  const int axis = rank == 0 ? 0 : (c.axis < 0 ? c.axis + rank : c.axis);
  const std::int64_t len = rank == 0 ? 1 : l.shape[static_cast<std::size_t>(axis)];
  std::int64_t inner = 1;  // row-major step of the axis
  for (int d = axis + 1; d < rank; ++d) inner *= l.shape[static_cast<std::size_t>(d)];
  const unsigned char* base = c.in_bytes.data() + l.offset * static_cast<std::int64_t>(sizeof(T));
  const R init = c.exclusive ? c.init.to_exact<R>("test init") : R{};
  std::vector<T> line(static_cast<std::size_t>(len));
  for (std::int64_t first = 0; first < n; ++first) {
    if ((first / inner) % len != 0) continue;  // not a line's first element
    for (std::int64_t k = 0; k < len; ++k) line[static_cast<std::size_t>(k)] = load_at<T>(base, l.offset_of(first + k * inner));
    const auto out = ref_scan_exact<Op, T>(line.data(), whole_offsets(len), !c.exclusive, init);
    for (std::int64_t k = 0; k < len; ++k) want[static_cast<std::size_t>(first + k * inner)] = out[static_cast<std::size_t>(k)];
  }
  return want;
}

template <class R> bool same_result(const R& got, const R& want) {
  if constexpr (is_floating_v<R>) {
    if (is_nan_value(want)) return is_nan_value(got);
  }
  return same_bits(got, want);
}

// Runs case c of (Op, T) through `run` and checks it.
template <ReduceOp Op, class T>
::testing::AssertionResult check_case(const ScanCase& c, Runner run) {
  using R = scan_result_t<Op, T>;
  static_assert(std::is_same_v<R, expected_scan_t<Op, T>>);
  const std::vector<R> want = reference<Op, T>(c);
  std::vector<unsigned char> got;
  run(c, got);
  const Layout& ol = c.in_place ? c.in : c.out;
  const unsigned char* at = got.data() + ol.offset * static_cast<std::int64_t>(sizeof(R));
  std::int64_t bad = 0;
  std::ostringstream first;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(want.size()); ++i) {
    const R g = load_at<R>(at, ol.offset_of(i));
    if (same_result(g, want[static_cast<std::size_t>(i)])) continue;
    if (bad++ < 3) first << "\n  element " << i << " (row-major): got " << show(g) << ", want " << show(want[static_cast<std::size_t>(i)]);
  }
  if (bad > 0) return ::testing::AssertionFailure() << bad << " of " << want.size() << " outputs differ:" << first.str();
  // Bytes outside the output view: poison (or, in place, the input's bytes).
  std::vector<char> covered(got.size(), 0);
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(want.size()); ++i)
    std::memset(&covered[static_cast<std::size_t>((ol.offset + ol.offset_of(i)) * static_cast<std::int64_t>(sizeof(R)))], 1, sizeof(R));
  for (std::size_t b = 0; b < got.size(); ++b) {
    if (covered[b]) continue;
    const unsigned char expect = c.in_place ? c.in_bytes[b] : 0xFF;
    if (got[b] != expect) return ::testing::AssertionFailure() << "byte " << b << " outside the output view was written";
  }
  return ::testing::AssertionSuccess();
}

// A random case of (Op, T). long_axis: one long axis and few lines.
template <ReduceOp Op, class T>
ScanCase make_case(Rng& rng, std::int64_t max_numel, bool long_axis) {
  using R = scan_result_t<Op, T>;
  ScanCase c;
  c.op = Op;
  c.dtype = dtype_v<T>;
  c.out_dtype = dtype_v<R>;
  int axis_hint;
  const auto shape = random_shape(rng, max_numel, long_axis, axis_hint);
  const int rank = static_cast<int>(shape.size());
  const int r = rank > 0 ? rank : 1;
  c.axis = axis_hint >= 0 ? axis_hint : static_cast<int>(rng.uniform(0, r - 1));
  if (rng.uniform(0, 1)) c.axis -= r;  // negative from the end
  // Inputs: row-major half the time (the fast families), else transposed / stepped / broadcast.
  const bool plain = rng.uniform(0, 1) == 0;
  const bool permute = !plain && rng.uniform(0, 1), stepped = !plain && rng.uniform(0, 2) == 0;
  const bool broadcast = !plain && rng.uniform(0, 3) == 0;
  c.in = make_layout(shape, rng, permute, stepped, broadcast, rng.uniform(0, 3));
  bool has_zero_stride = false;
  for (std::size_t d = 0; d < shape.size(); ++d) has_zero_stride |= shape[d] > 1 && c.in.strides[d] == 0;
  c.in_place = std::is_same_v<R, T> && !has_zero_stride && rng.uniform(0, 5) == 0;
  c.exclusive = rng.uniform(0, 1);
  if (c.exclusive) {
    const std::int64_t kind = rng.uniform(0, 15);
    if (kind < 4) {  // an int32 Scalar that converts exactly to the result dtype
      const std::int64_t lo = std::is_unsigned_v<R> || Op == ReduceOp::prod ? 0 : -5;
      c.init = Scalar(static_cast<std::int32_t>(rng.uniform(lo, 5)));
    } else if (kind == 4 && is_floating_v<R>) {
      c.init = Scalar(quiet_nan<R>());  // NaN converts to a NaN of R
    } else {
      c.init = Scalar(scan_value<R>(Op, rng.counter(), 0, false));
    }
  }
  c.in_bytes.resize(static_cast<std::size_t>(c.in.storage) * sizeof(T));
  const CounterRng values = rng.counter();
  const bool plant_nan = (Op == ReduceOp::min || Op == ReduceOp::max) && rng.uniform(0, 2) == 0;
  for (std::int64_t i = 0; i < c.in.storage; ++i) {
    const T v = scan_value<T>(Op, values, static_cast<std::uint64_t>(i), plant_nan);
    std::memcpy(c.in_bytes.data() + i * static_cast<std::int64_t>(sizeof(T)), &v, sizeof(T));
  }
  if (c.in_place) {
    c.out = c.in;
  } else {
    const bool strided_out = rng.uniform(0, 2) == 0;
    c.out = strided_out ? make_layout(shape, rng, rng.uniform(0, 1), rng.uniform(0, 1), false, rng.uniform(0, 2))
                        : row_major(shape, rng.uniform(0, 1) ? 0 : rng.uniform(1, 3));
    c.out_bytes.assign(static_cast<std::size_t>(c.out.storage + 4) * sizeof(R), 0xFF);
  }
  return c;
}

// A case over given layouts (out: ignored in place), with the cases' random data.
template <ReduceOp Op, class T>
ScanCase make_fixed_case(Rng& rng, const Layout& in, const Layout& out, int axis, bool in_place, bool exclusive,
                         Scalar init = Scalar(1)) {
  using R = scan_result_t<Op, T>;
  ScanCase c;
  c.op = Op;
  c.dtype = dtype_v<T>;
  c.out_dtype = dtype_v<R>;
  c.in = in;
  c.out = in_place ? in : out;
  c.axis = axis;
  c.in_place = in_place;
  c.exclusive = exclusive;
  c.init = init;
  c.in_bytes.resize(static_cast<std::size_t>(c.in.storage) * sizeof(T));
  const CounterRng values = rng.counter();
  const bool plant_nan = (Op == ReduceOp::min || Op == ReduceOp::max) && rng.uniform(0, 1) == 0;
  for (std::int64_t i = 0; i < c.in.storage; ++i) {
    const T v = scan_value<T>(Op, values, static_cast<std::uint64_t>(i), plant_nan);
    std::memcpy(c.in_bytes.data() + i * static_cast<std::int64_t>(sizeof(T)), &v, sizeof(T));
  }
  if (!in_place) c.out_bytes.assign(static_cast<std::size_t>(c.out.storage + 4) * sizeof(R), 0xFF);
  return c;
}

// The plan a case's views get (for failure messages).
inline std::string plan_of(const ScanCase& c) {
  const TensorView in = c.in.view(c.in_bytes.data(), c.dtype);
  const Layout& ol = c.in_place ? c.in : c.out;
  try {
    return detail::describe_scan_plan(detail::plan_scan(in, c.axis, ol.strides.data()));
  } catch (const std::exception& e) {
    return std::string("(no plan: ") + e.what() + ")";
  }
}

// `count` random cases per (op, dtype) pair, every op x dtype, through `run`; every `long_every`-th
// case has a long axis. Returns the number of cases run.
inline int run_random_cases(Rng& rng, int count, int long_every, std::int64_t max_numel, Runner run) {
  int case_no = 0;
  for (DType dt : {DType::i32, DType::u32, DType::i64, DType::u64, DType::f32, DType::f64, DType::f16, DType::bf16})
    visit_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      for_each_scan_op([&](auto op) {
        constexpr ReduceOp kOp = decltype(op)::value;
        for (int k = 0; k < count; ++k, ++case_no) {
          const ScanCase c = make_case<kOp, T>(rng, max_numel, long_every > 0 && k % long_every == long_every - 1);
          const auto r = check_case<kOp, T>(c, run);
          if (!r) {
            ADD_FAILURE() << "case " << case_no << ": " << c.describe() << "\n  plan " << plan_of(c) << "\n  " << r.message();
            return;
          }
        }
      });
    });
  return case_no;
}

}  // namespace foldkit::test::tscan
