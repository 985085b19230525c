// Randomized tensor-reduction problems for both backends' tests (tests/cpu/cpu_tensor_random_test.cpp,
// tests/gpu/cuda_tensor_random_test.cpp), built on tests/common/tensor_reference.hpp (Layout,
// RefAcc/ref_add, OutBuffer, the tolerances), and the bad-input table both backends run
// (tests/{cpu/cpu,gpu/cuda}_tensor_bad_input_test.cpp).
//
// A problem: an op x dtype (dealt from a shuffled deck of all 56 pairs), a logical shape and axes
// from a REGIME aimed at one of the kernel families the planner picks by canonical form:
//   general    ranks 0-6, sizes 0, 1, small, primes, 2^k +- 1, any axis set, any layout;
//   short-rows contiguous rows of 1..40 elements or 2^k +- 1 <= 65, many of them, last axis
//              reduced (sometimes two trailing axes that merge into one run), rows padded or
//              not, the data pointer offset by 0..3 elements (16-byte loads misaligned and
//              crossing row boundaries);
//   long-rows  few rows (1..64) of 33 .. ~2^19 elements;
//   outer      reduction over outer dims with the contiguous kept dim innermost: (R, C) over 0,
//              (A, R, C) over 1, (R1, R2, C) over {0, 1}; C from 1 to 4097 (wide), R up to ~2^18;
//   strided    stepped views (no unit stride anywhere) with random permutations;
//   transposed a random permutation of the dims in memory;
//   all        every axis reduced (the empty list, or every axis listed);
//   map        only size-1 axes reduced (every row one element);
//   empty      a size-0 dimension, kept or reduced (null data pointers allowed);
//   broadcast  zero strides on random dims (kept or reduced).
// plus a fixed list of EDGE shapes (edge_specs(): every row length 1..40, 2^k +- 1 rows, (4, 3e5)
// rows, (2^17 + 3, 3) over dim 0, wide outer reductions, transposed, stepped and broadcast views,
// rank 0, rank 6, size-0 dims), each with a random op x dtype and layout details.
// Every problem then draws: negative or positive axes in any order, keepdims, an input layout
// (contiguous / padded rows (sliced) / transposed / permuted / stepped / broadcast / mixed; an
// offset of 0..3 elements; arbitrary strides on size-1 dims), an output layout (contiguous, or
// permuted / stepped / offset, arbitrary strides on size-1 dims) and, for argmin/argmax, whether
// arg_reduce's values are written too. Input holes (padding, steps) and the elements before and
// after the view hold GUARD values that change the answer if read (NaN for floats; for integers
// a huge odd value, 0 for products, the type's extreme for min/max). Values: small integers and
// k/4 (exact sums, many ties), {-1, 0, 1} (ties everywhere, +-0), full-range integers (wrapping
// sums and products, planted type extremes), real floats, 1 +- k/128 or powers of two (products),
// with NaN and +-inf planted at a rate scaled to the row length.
//
// Checks (check_problem): integers exact (wrapping 64-bit sums/products), float sums/means/products
// against the long double reference within tensor_reference.hpp's bound (lambda sqrt(n) u sum|x|),
// NaN and inf results exactly, min/max exactly (and the sign of a zero result: max is +0 if any +0
// ties, min -0 if any -0), argmin/argmax index exactly (first index on ties, first NaN) and their
// values bit for bit, every output byte outside the output views still poisoned, and a call that
// must throw (empty_input) writing nothing. Every failure names the case: regime, op, dtype,
// layouts, axes, keepdims, values drawn, and describe_plan (the planner's family).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/tensor_reference.hpp"
#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/error.hpp"
#include "foldkit/tensor_reduce.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {

// ---- sizes -----------------------------------------------------------------------------------

inline constexpr std::int64_t kSmallSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 11, 13, 15, 16, 17};
inline constexpr std::int64_t kMediumSizes[] = {19, 23, 31, 32, 33, 37, 47, 63, 64, 65, 97, 127, 128, 129, 251, 255, 256, 257};
inline constexpr std::int64_t kLargeSizes[] = {509, 511, 512, 513, 1021, 1023, 1024, 1025, 2047, 2049, 4093, 4095, 4097};
inline constexpr std::int64_t kShortRowSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65};
inline constexpr std::int64_t kLongRowSizes[] = {33, 37, 63, 64, 65, 127, 129, 255, 257, 1023, 1025, 4095, 4097, 8191, 8193,
                                                 32767, 32769, 65521, 65537, 131071, 131073, 262143, 262145, 300007};

template <std::size_t N> std::int64_t pick_from(Rng& rng, const std::int64_t (&a)[N]) {
  return a[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(N) - 1))];
}

inline std::int64_t numel_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

// A random size: mostly small, some primes / 2^k +- 1 up to 257, a few up to 4097.
inline std::int64_t random_size(Rng& rng) {
  const std::int64_t k = rng.uniform(0, 99);
  if (k < 55) return pick_from(rng, kSmallSizes);
  if (k < 88) return pick_from(rng, kMediumSizes);
  return pick_from(rng, kLargeSizes);
}

// Replaces the largest dimension by a smaller size until the extents' product (extent_of: zero
// dims counted as 1) is <= cap.
inline void shrink_to(std::vector<std::int64_t>& shape, std::int64_t cap, Rng& rng) {
  while (extent_of(shape) > cap) {
    auto it = std::max_element(shape.begin(), shape.end());
    const std::int64_t cur = *it;
    std::int64_t next = pick_from(rng, kSmallSizes);
    if (next >= cur || rng.uniform(0, 1)) next = std::max<std::int64_t>(1, cur / 2 + rng.uniform(-1, 1));
    *it = std::min(next, cur - 1);
  }
}

// ---- layouts -----------------------------------------------------------------------------------

enum class Style { contiguous, padded, transposed, permuted, stepped, broadcast, mixed };
inline const char* style_name(Style s) {
  switch (s) {
    case Style::contiguous: return "contiguous";
    case Style::padded: return "padded";
    case Style::transposed: return "transposed";
    case Style::permuted: return "permuted";
    case Style::stepped: return "stepped";
    case Style::broadcast: return "broadcast";
    case Style::mixed: return "mixed";
  }
  return "?";
}

// Strides for `shape` in `style`: dims laid out in memory in row-major, reversed (transposed) or
// random order; each dim's parent extent padded by 0..3 (a slice of a larger array) and stepped
// by 1..3 (x[::2]); some strides 0 (broadcast). Size-1 dims sometimes get arbitrary strides
// (0, 7, 123456789): no element ever steps along them.
inline Layout make_styled_layout(const std::vector<std::int64_t>& shape, Style style, std::int64_t offset, Rng& rng,
                                 bool allow_zero = true) {
  const std::size_t r = shape.size();
  Layout l;
  l.shape = shape;
  l.strides.assign(r, 0);
  l.offset = offset;
  std::vector<std::size_t> order(r);  // outermost first
  for (std::size_t i = 0; i < r; ++i) order[i] = i;
  if (style == Style::transposed) std::reverse(order.begin(), order.end());
  if (style == Style::permuted || style == Style::mixed || style == Style::stepped)
    for (std::size_t i = r; i > 1; --i) std::swap(order[i - 1], order[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(i) - 1))]);
  std::vector<std::int64_t> step(r, 1), pad(r, 0);
  std::vector<bool> zero(r, false);
  for (std::size_t d = 0; d < r; ++d) {
    if (style == Style::stepped) step[d] = rng.uniform(1, 3);
    if (style == Style::mixed) { step[d] = rng.uniform(1, 2); pad[d] = rng.uniform(0, 2); }
    if (style == Style::padded) pad[d] = rng.uniform(0, 3);
    if (allow_zero && style == Style::broadcast) zero[d] = rng.uniform(0, 2) == 0;
    if (allow_zero && style == Style::mixed) zero[d] = rng.uniform(0, 4) == 0;
  }
  if (style == Style::stepped && r > 0) step[order[r - 1]] = rng.uniform(2, 3);  // no unit stride innermost
  if (allow_zero && style == Style::broadcast) {  // at least one real broadcast dim where one exists
    std::vector<std::size_t> big;
    for (std::size_t d = 0; d < r; ++d)
      if (shape[d] > 1) big.push_back(d);
    if (!big.empty()) zero[big[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(big.size()) - 1))]] = true;
  }
  std::int64_t run = 1;
  for (std::size_t k = r; k-- > 0;) {
    const std::size_t d = order[k];
    if (zero[d]) continue;
    l.strides[d] = run * step[d];
    run *= std::max<std::int64_t>(shape[d], 1) * step[d] + pad[d];
  }
  static constexpr std::int64_t kOddStrides[] = {0, 1, 7, 123456789};
  for (std::size_t d = 0; d < r; ++d)
    if (shape[d] == 1 && rng.uniform(0, 2) == 0) l.strides[d] = kOddStrides[rng.uniform(0, 3)];
  std::int64_t max_off = 0;
  for (std::size_t d = 0; d < r; ++d) max_off += std::max<std::int64_t>(shape[d] - 1, 0) * l.strides[d];
  l.storage = offset + max_off + 1;
  return l;
}

inline Layout explicit_layout(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides, std::int64_t offset) {
  Layout l;
  l.shape = shape;
  l.strides = strides;
  l.offset = offset;
  std::int64_t max_off = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) max_off += std::max<std::int64_t>(shape[d] - 1, 0) * strides[d];
  l.storage = offset + max_off + 1;
  return l;
}

// Visits every logical element of a layout in row-major order: f(storage offset).
template <class F> void for_each_offset(const Layout& l, F&& f) {
  const std::size_t r = l.shape.size();
  const std::int64_t n = numel_of(l.shape);
  if (n == 0) return;
  std::vector<std::int64_t> idx(r, 0);
  std::int64_t off = l.offset;
  for (std::int64_t i = 0; i < n; ++i) {
    f(off);
    for (std::size_t d = r; d-- > 0;) {
      off += l.strides[d];
      if (++idx[d] < l.shape[d]) break;
      off -= l.strides[d] * l.shape[d];
      idx[d] = 0;
    }
  }
}

// ---- values -------------------------------------------------------------------------------------

enum class Values { small, few, wide, real, near_one, pow2 };
inline const char* values_name(Values v) {
  switch (v) {
    case Values::small: return "small";
    case Values::few: return "few";
    case Values::wide: return "wide";
    case Values::real: return "real";
    case Values::near_one: return "near-one";
    case Values::pow2: return "pow2";
  }
  return "?";
}

struct ValuePlan {
  Values kind = Values::small;
  double nan_rate = 0, inf_rate = 0, extreme_rate = 0, pow2_rate = 0;  // per element
  std::string text() const {
    std::ostringstream os;
    os << values_name(kind);
    if (nan_rate > 0) os << " nan@" << nan_rate;
    if (inf_rate > 0) os << " inf@" << inf_rate;
    if (extreme_rate > 0) os << " extremes@" << extreme_rate;
    if (pow2_rate > 0) os << " 2^+-1@" << pow2_rate;
    return os.str();
  }
};

inline double unit_of(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1p-53; }

template <class T> T draw_value(const ValuePlan& vp, ReduceOp op, const CounterRng& r, std::uint64_t i) {
  const std::uint64_t b = r.bits(i);
  const double u_plant = unit_of(mix64(b + 0x51ull));
  if constexpr (std::is_integral_v<T>) {
    using L = std::numeric_limits<T>;
    if (u_plant < vp.extreme_rate) return ((b >> 7) & 1u) ? L::max() : L::lowest();
    constexpr bool kSigned = std::is_signed_v<T>;
    switch (vp.kind) {
      case Values::few: return static_cast<T>(r.in_range<std::int64_t>(i, kSigned ? -1 : 0, kSigned ? 1 : 2));
      case Values::wide: return static_cast<T>(op == ReduceOp::prod ? (b | 1u) : b);
      default:
        if (op == ReduceOp::prod) return static_cast<T>(r.in_range<std::int64_t>(i, kSigned ? -3 : 0, 3));
        return static_cast<T>(r.in_range<std::int64_t>(i, kSigned ? -40 : 0, kSigned ? 40 : 80));
    }
  } else {
    if (u_plant < vp.nan_rate) return quiet_nan<T>();
    if (u_plant < vp.nan_rate + vp.inf_rate)
      return from_double<T>(((b >> 7) & 1u) ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity());
    const std::int64_t k = r.in_range<std::int64_t>(i, -20, 20);
    switch (vp.kind) {
      case Values::few: {
        const std::int64_t f = k % 3;  // -2..2 -> -1, -0/+0, 1
        if (f == 0) return from_double<T>(((b >> 9) & 1u) ? -0.0 : 0.0);
        return from_double<T>(f > 0 ? 1.0 : -1.0);
      }
      case Values::real: {
        double x = 2.0 * r.unit(i) - 1.0;
        if ((b >> 58) == 0) x *= 64.0;  // an occasional large one
        return from_double<T>(x);
      }
      case Values::near_one: return from_double<T>(1.0 + static_cast<double>(k % 3) / 128.0);
      case Values::pow2: {
        const double sign = ((b >> 9) & 1u) ? -1.0 : 1.0;
        if (unit_of(mix64(b + 0x77ull)) < vp.pow2_rate) return from_double<T>(sign * (((b >> 10) & 1u) ? 2.0 : 0.5));
        return from_double<T>(sign);
      }
      default:
        if (k == 0 && ((b >> 40) & 1u)) return from_double<T>(-0.0);
        return from_double<T>(static_cast<double>(k) / 4.0);
    }
  }
}

// A value that changes the op's answer if an element outside the view (a hole, or before/after it)
// is ever read.
template <class T> T guard_value(ReduceOp op) {
  if constexpr (is_floating_v<T>) {
    (void)op;
    return quiet_nan<T>();
  } else {
    switch (op) {
      case ReduceOp::prod: return T(0);
      case ReduceOp::min: case ReduceOp::argmin: return std::numeric_limits<T>::lowest();
      case ReduceOp::max: case ReduceOp::argmax: return std::numeric_limits<T>::max();
      default: return static_cast<T>(0x5bd1e9955bd1e995ull);
    }
  }
}

// ---- the problem ----------------------------------------------------------------------------------

// A logical problem before the random details: a regime's shape and axes (non-negative; empty:
// every axis), the layout styles it allows, or explicit input strides.
struct ShapeSpec {
  std::string regime;
  std::vector<std::int64_t> shape;
  std::vector<int> axes;
  std::vector<Style> styles{Style::contiguous};
  std::vector<std::int64_t> strides;  // explicit input strides (then `styles` is unused)
  std::int64_t max_offset = 3;
  std::vector<ReduceOp> ops;  // if not empty, the ops this spec is run with (dtype still dealt)
};

struct RandomProblem {
  int id = 0;
  std::string regime;
  ReduceOp op = ReduceOp::sum;
  DType dtype = DType::f32;
  std::string style;
  Layout in;
  std::shared_ptr<void> storage_owner;  // a std::vector<T> of in.storage elements
  void* storage = nullptr;
  std::size_t storage_bytes = 0;
  bool null_input = false, null_output = false;  // views without elements may have null data
  std::vector<int> axes;
  bool keepdims = false;
  unsigned mask = 0;
  std::int64_t reduce_numel = 1, out_numel = 1;
  ReduceOutput out_shape;
  std::optional<OutBuffer> out, vals;  // vals: arg_reduce's values, when written
  bool expect_empty_error = false;
  ValuePlan values;
  std::string plan_text, family, structure;
  std::vector<std::string> tags;

  TensorView input_view(const void* base, Device device) const {
    if (null_input) return TensorView::strided(nullptr, dtype, in.shape.data(), in.strides.data(), static_cast<int>(in.shape.size()), device);
    return in.view(base, dtype, device);
  }
  TensorView out_view(void* base, Device device) const {
    if (null_output)
      return TensorView::strided(nullptr, out_shape.dtype, out->layout.shape.data(), out->layout.strides.data(),
                                 static_cast<int>(out->layout.shape.size()), device);
    return out->view(out_shape.dtype, base, device);
  }
  TensorView vals_view(void* base, Device device) const {
    if (null_output)
      return TensorView::strided(nullptr, dtype, vals->layout.shape.data(), vals->layout.strides.data(),
                                 static_cast<int>(vals->layout.shape.size()), device);
    return vals->view(dtype, base, device);
  }

  std::string describe() const {
    std::ostringstream os;
    os << "case #" << id << " [" << regime << "] " << op_name(op) << " " << dtype_name(dtype) << " input "
       << in.describe() << " (" << style << (null_input ? ", null data" : "") << ") axes "
       << list_text(std::vector<std::int64_t>(axes.begin(), axes.end())) << " keepdims " << keepdims << " out "
       << out->layout.describe();
    if (vals) os << " values " << vals->layout.describe();
    os << " data " << values.text() << (expect_empty_error ? " expects empty_input" : "") << " | plan " << plan_text;
    return os.str();
  }
};

// The canonical form's structure, named as the planner's families (plan_family) but computed here
// from the plan's dims, so the coverage counts stay meaningful if families are renamed or split.
inline std::string structure_of(const detail::ReducePlan& p) {
  if (p.kept_rank == 0) return "all";
  if (p.reduced_rank == 0) return "map";
  const detail::PlanDim& r = p.reduced[p.reduced_rank - 1];
  if (r.in_stride == 1) return r.size > 32 ? "contiguous-rows" : "short-rows";
  if (p.kept[p.kept_rank - 1].in_stride == 1) return "outer";
  return "strided";
}

inline ValuePlan choose_values(ReduceOp op, DType dtype, std::int64_t row, bool reduced_broadcast, Rng& rng) {
  ValuePlan vp;
  const double n = static_cast<double>(std::max<std::int64_t>(row, 1));
  const bool is_float = dtype == DType::f32 || dtype == DType::f64 || dtype == DType::f16 || dtype == DType::bf16;
  const std::int64_t k = rng.uniform(0, 99);
  if (!is_float) {
    if (op == ReduceOp::prod) vp.kind = (row > 16 ? k < 70 : k < 35) ? Values::wide : Values::small;
    else if (op == ReduceOp::sum) vp.kind = k < 50 ? Values::wide : Values::small;
    // i64/u64 means accumulate in double: one huge value repeated along a broadcast dim rounds
    // the same way every time, beyond the bound for independent roundings.
    else if (op == ReduceOp::mean) vp.kind = (k < 50 && !reduced_broadcast) ? Values::wide : Values::small;
    else {
      vp.kind = k < 35 ? Values::small : k < 65 ? Values::few : Values::wide;
      if (vp.kind == Values::wide && rng.uniform(0, 1)) vp.extreme_rate = std::min(0.25, 1.5 / n);
    }
    return vp;
  }
  if (op == ReduceOp::prod) {
    vp.kind = row <= 64 ? Values::near_one : Values::pow2;
    // A broadcast reduced dim repeats one factor along the row: only +-1 keep that exact and finite.
    if (vp.kind == Values::pow2 && !reduced_broadcast) vp.pow2_rate = std::min(0.25, 8.0 / n);
  } else if (op == ReduceOp::sum || op == ReduceOp::mean) {
    // Real values only where rounding errors are independent (not one value summed many times).
    vp.kind = (k < 50 || reduced_broadcast) ? Values::small : Values::real;
  } else {
    vp.kind = k < 40 ? Values::small : k < 70 ? Values::few : Values::real;
  }
  const bool minmax = needs_nonempty(op);
  if (rng.uniform(0, 99) < (minmax ? 50 : 15)) vp.nan_rate = (rng.uniform(0, 1) ? 0.3 : 1.5) / n;
  if (rng.uniform(0, 99) < (minmax ? 20 : 10)) vp.inf_rate = 0.7 / n;
  return vp;
}

template <class T> void fill_storage(RandomProblem& p, const CounterRng& r) {
  auto v = std::make_shared<std::vector<T>>(static_cast<std::size_t>(p.in.storage), guard_value<T>(p.op));
  T* data = v->data();
  for_each_offset(p.in, [&](std::int64_t off) { data[off] = draw_value<T>(p.values, p.op, r, static_cast<std::uint64_t>(off)); });
  p.storage = data;
  p.storage_bytes = v->size() * sizeof(T);
  p.storage_owner = std::move(v);
}

// Builds a problem from a spec: op x dtype given, every other detail drawn from rng.
inline RandomProblem make_problem(const ShapeSpec& spec, ReduceOp op, DType dtype, Rng& rng, int id) {
  RandomProblem p;
  p.id = id;
  p.regime = spec.regime;
  p.op = op;
  p.dtype = dtype;
  const int rank = static_cast<int>(spec.shape.size());
  // Axes: argmin/argmax take one (or none); sometimes every axis is listed instead of none.
  std::vector<int> axes = spec.axes;
  if (is_arg(op) && axes.size() > 1) {
    if (rng.uniform(0, 3) == 0) axes.clear();
    else axes = {axes[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(axes.size()) - 1))]};
  }
  if (!is_arg(op) && axes.empty() && rank > 0 && rng.uniform(0, 2) == 0)
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  p.mask = 0;
  for (int a : axes) p.mask |= 1u << a;
  if (axes.empty()) p.mask = (1u << rank) - 1u;
  bool negative = false;
  for (int& a : axes)
    if (rng.uniform(0, 1)) { a -= rank; negative = true; }
  for (std::size_t i = axes.size(); i > 1; --i) std::swap(axes[i - 1], axes[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(i) - 1))]);
  p.axes = axes;
  p.keepdims = rng.uniform(0, 1);

  const std::int64_t offset = rng.uniform(0, spec.max_offset);
  if (!spec.strides.empty()) {
    p.in = explicit_layout(spec.shape, spec.strides, offset);
    p.style = "explicit";
  } else {
    const Style style = spec.styles[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(spec.styles.size()) - 1))];
    p.in = make_styled_layout(spec.shape, style, offset, rng);
    p.style = style_name(style);
  }
  for (int d = 0; d < rank; ++d) {
    const auto s = static_cast<std::size_t>(d);
    if ((p.mask >> d) & 1u) p.reduce_numel *= spec.shape[s];
    else p.out_numel *= spec.shape[s];
  }
  bool reduced_broadcast = false;
  for (int d = 0; d < rank; ++d)
    if (((p.mask >> d) & 1u) && spec.shape[static_cast<std::size_t>(d)] > 1 && p.in.strides[static_cast<std::size_t>(d)] == 0) reduced_broadcast = true;
  p.values = choose_values(op, dtype, p.reduce_numel, reduced_broadcast, rng);
  const CounterRng value_bits = rng.counter();
  visit_dtype(dtype, [&](auto tag) { fill_storage<decltype(tag)>(p, value_bits); });

  const TensorView host_view = p.in.view(p.storage, dtype);
  p.out_shape = cpu::reduce_output_shape(op, host_view, p.axes, p.keepdims);
  const std::vector<std::int64_t> oshape(p.out_shape.shape, p.out_shape.shape + p.out_shape.rank);
  auto out_layout = [&] {
    if (rng.uniform(0, 1) == 0) return make_styled_layout(oshape, Style::contiguous, 0, rng, false);
    static constexpr Style kOut[] = {Style::permuted, Style::stepped, Style::padded, Style::mixed, Style::transposed};
    return make_styled_layout(oshape, kOut[rng.uniform(0, 4)], rng.uniform(0, 3), rng, false);
  };
  p.out.emplace(out_layout(), dtype_size(p.out_shape.dtype));
  if (is_arg(op) && rng.uniform(0, 1)) p.vals.emplace(out_layout(), dtype_size(dtype));
  if (numel_of(spec.shape) == 0 && rng.uniform(0, 2) == 0) p.null_input = true;
  if (p.out_numel == 0 && rng.uniform(0, 2) == 0) p.null_output = true;
  p.expect_empty_error = needs_nonempty(op) && p.reduce_numel == 0;

  const detail::ReducePlan plan =
      detail::plan_reduce(host_view, p.axes, p.keepdims, p.out->layout.strides.data(),
                          is_arg(op) ? detail::ReducedOrder::logical : detail::ReducedOrder::memory,
                          p.vals ? p.vals->layout.strides.data() : nullptr);
  p.plan_text = detail::describe_plan(plan);
  p.family = detail::plan_family(plan);
  p.structure = structure_of(plan);

  // Coverage tags (counted and printed by the tests).
  auto tag = [&](const std::string& t) { p.tags.push_back(t); };
  if (p.expect_empty_error) tag("expects empty_input");
  if (rank == 0) tag("rank 0");
  if (rank >= 5) tag("rank 5-6");
  if (numel_of(spec.shape) == 0) tag("size-0 input");
  if (p.out_numel == 0) tag("size-0 output");
  if (p.null_input || p.null_output) tag("null data (no elements)");
  if (p.keepdims) tag("keepdims");
  if (negative) tag("negative axis");
  if (p.vals) tag("arg_reduce values");
  if ((offset * static_cast<std::int64_t>(dtype_size(dtype))) % 16 != 0) tag("input start not 16-byte aligned");
  bool zero_stride = false, out_strided = false;
  for (int d = 0; d < rank; ++d)
    if (spec.shape[static_cast<std::size_t>(d)] > 1 && p.in.strides[static_cast<std::size_t>(d)] == 0) zero_stride = true;
  if (zero_stride) tag("zero input stride (broadcast)");
  std::int64_t out_run = 1;
  for (int d = p.out_shape.rank - 1; d >= 0; --d) {
    const std::int64_t size = p.out_shape.shape[d];
    if (size > 1 && p.out->layout.strides[static_cast<std::size_t>(d)] != out_run) out_strided = true;
    out_run *= std::max<std::int64_t>(size, 1);
  }
  if (out_strided || p.out->layout.offset != 0) tag("strided/offset output");
  if (p.values.nan_rate > 0) tag("NaN planted");
  if (!p.expect_empty_error && p.out_numel > 0) {
    const detail::PlanDim* inner_red = plan.reduced_rank > 0 ? &plan.reduced[plan.reduced_rank - 1] : nullptr;
    if (inner_red != nullptr && inner_red->in_stride == 1) {
      const std::int64_t len = inner_red->size;
      if (plan.reduced_rank == 1 && len <= 40) tag("contiguous rows of 1..40");
      if (len == 31 || len == 32 || len == 33) tag("rows of 31/32/33");
      for (int k = 2; k <= 19; ++k)
        if (len == (std::int64_t{1} << k) - 1 || len == (std::int64_t{1} << k) + 1) { tag("rows of 2^k+-1"); break; }
      if (plan.reduced_rank == 1 && len >= (1 << 17) && p.out_numel <= 8) tag("rows >= 2^17, <= 8 outputs");
    }
    if (plan.kept_rank > 0 && plan.kept[plan.kept_rank - 1].in_stride == 1 && plan.reduced_rank > 0 &&
        plan.reduced[plan.reduced_rank - 1].in_stride != 1) {
      const std::int64_t inner_kept = plan.kept[plan.kept_rank - 1].size;
      if (p.reduce_numel >= (1 << 17) && p.out_numel <= 8) tag("columns >= 2^17, <= 8 outputs");
      if (inner_kept >= 1024) tag("wide outer (inner kept >= 1024)");
    }
  }
  return p;
}

// ---- regimes -------------------------------------------------------------------------------------

struct RandomCaseLimits {
  std::int64_t small_numel = 4096;  // general shapes
  std::int64_t big_numel = 1 << 18;  // long rows / long columns
};

inline std::vector<int> random_axes(int rank, Rng& rng, bool nonempty) {
  std::vector<int> axes;
  for (int d = 0; d < rank; ++d)
    if (rng.uniform(0, 1)) axes.push_back(d);
  if (nonempty && axes.empty() && rank > 0) axes.push_back(static_cast<int>(rng.uniform(0, rank - 1)));
  return axes;
}

inline ShapeSpec random_spec(const std::string& regime, const RandomCaseLimits& lim_in, Rng& rng) {
  RandomCaseLimits lim = lim_in;
  lim.small_numel = std::min(lim.small_numel, max_n());
  lim.big_numel = std::min(lim.big_numel, max_n());
  ShapeSpec s;
  s.regime = regime;
  static const std::vector<Style> kAny = {Style::contiguous, Style::padded, Style::transposed, Style::permuted,
                                          Style::stepped,    Style::broadcast, Style::mixed};
  static const std::vector<Style> kRows = {Style::contiguous, Style::contiguous, Style::padded};
  auto random_shape_of_rank = [&](int rank, std::int64_t cap) {
    std::vector<std::int64_t> shape(static_cast<std::size_t>(rank));
    for (auto& d : shape) d = random_size(rng);
    shrink_to(shape, cap, rng);
    return shape;
  };
  if (regime == "general") {
    s.shape = random_shape_of_rank(static_cast<int>(rng.uniform(0, 6)), lim.small_numel);
    if (rng.uniform(0, 19) == 0 && !s.shape.empty()) s.shape[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(s.shape.size()) - 1))] = 0;
    s.axes = random_axes(static_cast<int>(s.shape.size()), rng, false);
    s.styles = kAny;
  } else if (regime == "short-rows") {
    const std::int64_t len = rng.uniform(0, 9) < 7 ? rng.uniform(1, 40) : pick_from(rng, kShortRowSizes);
    const std::int64_t rows = rng.uniform(1, std::max<std::int64_t>(1, std::min<std::int64_t>(4096, 4 * lim.small_numel / len)));
    const std::int64_t v = rng.uniform(0, 9);
    if (v < 7) {
      s.shape = {rows, len};
      s.axes = {1};
    } else if (v < 9) {  // two kept dims
      const std::int64_t a = rng.uniform(1, 7);
      s.shape = {a, std::max<std::int64_t>(1, rows / a), len};
      s.axes = {2};
    } else {  // two trailing reduced dims that merge into one run
      const std::int64_t a = rng.uniform(1, 5);
      s.shape = {rows, a, std::max<std::int64_t>(1, len / a)};
      s.axes = {1, 2};
    }
    shrink_to(s.shape, std::max<std::int64_t>(lim.small_numel * 4, 1), rng);
    s.styles = kRows;
  } else if (regime == "long-rows") {
    std::int64_t len = rng.uniform(0, 2) == 0 ? rng.uniform(33, 5000) : pick_from(rng, kLongRowSizes);
    len = std::min(len, lim.big_numel);
    const std::int64_t rows = rng.uniform(1, std::max<std::int64_t>(1, std::min<std::int64_t>(64, lim.big_numel / len)));
    s.shape = {rows, len};
    s.axes = {1};
    if (rng.uniform(0, 5) == 0) {
      s.shape = {len};
      s.axes = {0};
    }
    s.styles = kRows;
  } else if (regime == "outer" && rng.uniform(0, 7) == 0) {  // few very long columns
    const std::int64_t cols = rng.uniform(1, 8);
    const std::int64_t most = std::max<std::int64_t>(1, lim.big_numel / cols);
    s.shape = {rng.uniform(std::max<std::int64_t>(1, most / 4), most), cols};
    s.axes = {0};
    s.styles = kRows;
  } else if (regime == "outer") {
    const std::int64_t k = rng.uniform(0, 9);
    const std::int64_t cols = k < 5 ? rng.uniform(1, 40) : k < 8 ? pick_from(rng, kLargeSizes) : rng.uniform(41, 3000);
    const std::int64_t cap = rng.uniform(0, 4) == 0 ? lim.big_numel : lim.small_numel * 4;
    const std::int64_t red = rng.uniform(1, std::max<std::int64_t>(1, cap / cols));
    const std::int64_t v = rng.uniform(0, 9);
    if (v < 6) {
      s.shape = {red, cols};
      s.axes = {0};
    } else if (v < 8) {
      const std::int64_t a = rng.uniform(1, 8);
      s.shape = {a, std::max<std::int64_t>(1, red / a), cols};
      s.axes = {1};
    } else {
      const std::int64_t a = rng.uniform(1, 9);
      s.shape = {a, std::max<std::int64_t>(1, red / a), cols};
      s.axes = {0, 1};
    }
    shrink_to(s.shape, std::max<std::int64_t>(cap, 1), rng);
    s.styles = kRows;
  } else if (regime == "strided" || regime == "transposed" || regime == "broadcast") {
    s.shape = random_shape_of_rank(static_cast<int>(rng.uniform(1, 4)), lim.small_numel);
    s.axes = random_axes(static_cast<int>(s.shape.size()), rng, true);
    s.styles = {regime == "strided" ? Style::stepped : regime == "transposed" ? Style::transposed : Style::broadcast};
    if (regime == "transposed" && rng.uniform(0, 1)) s.styles = {Style::permuted};
  } else if (regime == "all") {
    const std::int64_t cap = rng.uniform(0, 4) == 0 ? lim.big_numel : lim.small_numel;
    s.shape = random_shape_of_rank(static_cast<int>(rng.uniform(0, 5)), cap);
    s.axes.clear();
    s.styles = kAny;
  } else if (regime == "map") {
    s.shape = random_shape_of_rank(static_cast<int>(rng.uniform(1, 5)), lim.small_numel);
    // One to three size-1 dims, inserted anywhere; only they are reduced.
    const std::int64_t ones = rng.uniform(1, 3);
    for (std::int64_t i = 0; i < ones && s.shape.size() < 6; ++i)
      s.shape.insert(s.shape.begin() + rng.uniform(0, static_cast<std::int64_t>(s.shape.size())), 1);
    for (std::size_t d = 0; d < s.shape.size(); ++d)
      if (s.shape[d] == 1 && rng.uniform(0, 3) > 0) s.axes.push_back(static_cast<int>(d));
    if (s.axes.empty())
      for (std::size_t d = 0; d < s.shape.size(); ++d)
        if (s.shape[d] == 1) { s.axes.push_back(static_cast<int>(d)); break; }
    s.styles = kAny;
  } else {  // "empty"
    s.shape = random_shape_of_rank(static_cast<int>(rng.uniform(1, 4)), lim.small_numel);
    s.shape[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(s.shape.size()) - 1))] = 0;
    s.axes = random_axes(static_cast<int>(s.shape.size()), rng, false);
    s.styles = kAny;
  }
  shrink_to(s.shape, std::max<std::int64_t>(max_n(), 1), rng);  // FOLDKIT_TEST_MAX_N (compute-sanitizer runs)
  return s;
}

// Regimes and their weights (out of 100).
inline const std::vector<std::pair<const char*, int>>& regime_weights() {
  static const std::vector<std::pair<const char*, int>> w = {
      {"general", 24}, {"short-rows", 16}, {"long-rows", 7}, {"outer", 16}, {"strided", 8},
      {"transposed", 7}, {"all", 8},       {"map", 4},       {"empty", 4}, {"broadcast", 6}};
  return w;
}

// Cuts the outermost dims (explicit strides stay valid) until the shape has at most max_n() elements.
inline void fit_max_n(std::vector<std::int64_t>& shape) {
  const std::int64_t cap = std::max<std::int64_t>(max_n(), 1);
  for (std::size_t d = 0; d < shape.size() && numel_of(shape) > cap; ++d) {
    const std::int64_t rest = numel_of(shape) / shape[d];
    shape[d] = std::max<std::int64_t>(1, cap / std::max<std::int64_t>(rest, 1));
  }
}

// The fixed edge shapes (each run with a random op x dtype, offsets, keepdims, output layout).
// Under FOLDKIT_TEST_MAX_N their outer dims are cut to fit.
inline std::vector<ShapeSpec> edge_specs() {
  std::vector<ShapeSpec> v;
  const std::vector<Style> rows = {Style::contiguous, Style::contiguous, Style::padded};
  auto add = [&](const std::string& name, std::vector<std::int64_t> shape, std::vector<int> axes,
                 std::vector<Style> styles = {Style::contiguous, Style::contiguous, Style::padded}) {
    ShapeSpec s;
    s.regime = "edge " + name;
    s.shape = std::move(shape);
    s.axes = std::move(axes);
    s.styles = std::move(styles);
    fit_max_n(s.shape);
    v.push_back(std::move(s));
  };
  auto add_strided = [&](const std::string& name, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides,
                         std::vector<int> axes) {
    ShapeSpec s;
    s.regime = "edge " + name;
    s.shape = std::move(shape);
    s.strides = std::move(strides);
    s.axes = std::move(axes);
    fit_max_n(s.shape);
    v.push_back(std::move(s));
  };
  for (std::int64_t len = 1; len <= 40; ++len) add("rows of " + std::to_string(len), {97 + (len * 37) % 61, len}, {1}, rows);
  for (int k : {6, 7, 8, 10, 12})
    for (int d : {-1, 0, 1}) add("rows of 2^k+-1", {5, (std::int64_t{1} << k) + d}, {1}, rows);
  // Whole-vector rows of 2^k elements, 128 to 4096: rows-dense with 1, 2 and 4 vectors per lane,
  // rows-group and rows-block, over every dtype (the vector holds 2 to 8 elements).
  for (int k = 7; k <= 12; ++k) add("rows of 2^k", {67, std::int64_t{1} << k}, {1});
  // Enough rows of whole rounds of 8 vectors per lane for rows-dense's warp per long row (at
  // least 64 rows per SM: 8448 on an H100): one round for 4-byte types, two for 8-byte ones.
  add("long dense rows (8461, 2^10)", {8461, 1024}, {1});
  v.back().ops = {ReduceOp::sum, ReduceOp::max, ReduceOp::argmax};
  add("4 rows of 3e5", {4, 300000}, {1});
  add("4 rows of 300007", {4, 300007}, {1});
  add("3 rows of 2^17+1", {3, 131073}, {1});
  add("2 rows of 2^18-1", {2, 262143}, {1});
  add("1 row of 2^19+1", {1, 524289}, {1});
  add("8 rows of 2^16+1", {8, 65537}, {1});
  add("(2^17+3, 3) over dim 0", {131075, 3}, {0});
  add("(2^17+3, 1) over dim 0", {131075, 1}, {0});
  add("(2^16+1, 5) over dim 0", {65537, 5}, {0});
  add("(100003, 2) over dim 0", {100003, 2}, {0});
  add("(2^17-1, 7) over dim 0", {131071, 7}, {0});
  add("(8191, 33) over dim 0", {8191, 33}, {0});
  add("wide outer (7, 30011)", {7, 30011}, {0});
  add("wide outer (33, 4097)", {33, 4097}, {0});
  add("wide outer (3, 1000, 129) over {0, 1}", {3, 1000, 129}, {0, 1});
  add("wide outer (64, 3, 1025) over 1", {64, 3, 1025}, {1});
  add("wide outer (2, 2^16+1)", {2, 65537}, {0});
  add("middle (5, 2000, 3) over 1", {5, 2000, 3}, {1});
  add("transposed (1000, 37) over 0", {1000, 37}, {0}, {Style::transposed});
  add("transposed (1000, 37) over 1", {1000, 37}, {1}, {Style::transposed});
  add("transposed (37, 1000) over 1", {37, 1000}, {1}, {Style::transposed});
  add("transposed (7, 9, 11) over {0, 2}", {7, 9, 11}, {0, 2}, {Style::transposed});
  add("stepped (50, 70) over 1", {50, 70}, {1}, {Style::stepped});
  add("stepped (50, 70) over 0", {50, 70}, {0}, {Style::stepped});
  add("stepped (9, 11, 13) over {0, 2}", {9, 11, 13}, {0, 2}, {Style::stepped});
  add_strided("broadcast rows (1000, 64) strides (0, 1) over 0", {1000, 64}, {0, 1}, {0});
  add_strided("broadcast rows (1000, 64) strides (0, 1) over 1", {1000, 64}, {0, 1}, {1});
  add_strided("broadcast (64, 1000) strides (1, 0) over 1", {64, 1000}, {1, 0}, {1});
  add_strided("broadcast inner (300, 40) strides (40, 0) over 1", {300, 40}, {40, 0}, {1});
  add_strided("broadcast (5, 7, 11) all strides 0", {5, 7, 11}, {0, 0, 0}, {});
  add_strided("broadcast (40, 300) strides (0, 1) over 0", {40, 300}, {0, 1}, {0});
  add("rank 0", {}, {}, {Style::contiguous});
  add("rank 6 (2, 3, 1, 5, 1, 7) over {1, 3, 5}", {2, 3, 1, 5, 1, 7}, {1, 3, 5}, {Style::mixed, Style::contiguous});
  add("rank 6 (3, 1, 4, 1, 5, 9) over all", {3, 1, 4, 1, 5, 9}, {}, {Style::mixed, Style::permuted});
  add("rank 6 (2, 2, 2, 2, 2, 2) over {0, 2, 4}", {2, 2, 2, 2, 2, 2}, {0, 2, 4}, {Style::mixed, Style::stepped});
  add("size 0 (0, 5) over 0", {0, 5}, {0});
  v.back().ops = {ReduceOp::sum, ReduceOp::prod, ReduceOp::mean};  // the identity (NaN for mean) per output
  add("size 0 (5, 0) over 1", {5, 0}, {1});
  v.back().ops = {ReduceOp::min, ReduceOp::max, ReduceOp::argmin, ReduceOp::argmax};  // empty_input, nothing written
  add("size 0 (6, 0) over 1", {6, 0}, {1});
  v.back().ops = {ReduceOp::sum, ReduceOp::prod, ReduceOp::mean};
  add("size 0 (0) over all", {0}, {});
  add("size 0 (3, 0, 4) over {0, 2}", {3, 0, 4}, {0, 2});
  add("size 0 (3, 0, 4) over 1", {3, 0, 4}, {1});
  add("size 0 (0, 0) over 1", {0, 0}, {1});
  add("size 0 (0, 7) over 1", {0, 7}, {1});
  add("map (17, 1, 5) over 1", {17, 1, 5}, {1}, {Style::contiguous, Style::mixed});
  add("map (1, 33) over 0", {1, 33}, {0});
  return v;
}

// Deals op x dtype pairs from a shuffled deck (every pair once per 56 cases) and regimes from a
// weighted one.
class ProblemSource {
 public:
  ProblemSource(std::uint64_t seed, RandomCaseLimits limits) : rng_(seed), limits_(limits) {}
  Rng& rng() { return rng_; }
  std::pair<ReduceOp, DType> next_pair() {
    if (pairs_.empty()) {
      for (ReduceOp op : kAllReduceOps)
        for (DType dt : kAllDTypes) pairs_.emplace_back(op, dt);
      shuffle(pairs_);
    }
    const auto p = pairs_.back();
    pairs_.pop_back();
    return p;
  }
  RandomProblem next_random(int id) {
    if (regimes_.empty()) {
      for (const auto& [name, weight] : regime_weights())
        for (int i = 0; i < weight; ++i) regimes_.push_back(name);
      shuffle(regimes_);
    }
    const std::string regime = regimes_.back();
    regimes_.pop_back();
    const ShapeSpec spec = random_spec(regime, limits_, rng_);
    const auto [op, dt] = next_pair();
    return make_problem(spec, op, dt, rng_, id);
  }
  RandomProblem next_edge(const ShapeSpec& spec, int id) {
    auto [op, dt] = next_pair();
    if (!spec.ops.empty()) op = spec.ops[static_cast<std::size_t>(rng_.uniform(0, static_cast<std::int64_t>(spec.ops.size()) - 1))];
    return make_problem(spec, op, dt, rng_, id);
  }

 private:
  template <class V> void shuffle(V& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<std::size_t>(rng_.uniform(0, static_cast<std::int64_t>(i) - 1))]);
  }
  Rng rng_;
  RandomCaseLimits limits_;
  std::vector<std::pair<ReduceOp, DType>> pairs_;
  std::vector<std::string> regimes_;
};

// ---- the reference and the checks ------------------------------------------------------------------

// Per output element: tensor_reference.hpp's RefAcc, plus the storage offsets of the argmin /
// argmax elements and whether a +0 / -0 occurred (the sign of a zero min/max).
struct ProblemReference {
  std::vector<RefAcc> acc;
  std::vector<std::int64_t> argmin_off, argmax_off;
  std::vector<unsigned char> zeros;  // bit 0: a +0 seen, bit 1: a -0 seen
};

// Walks the input's LOGICAL index space row-major (never through the planner): f(off, o, pos) for
// every element, with its storage offset, its output element (row-major over the kept dims) and
// its position in that output's row (row-major over the reduced dims).
template <class F> void for_each_element(const RandomProblem& p, F&& f) {
  const Layout& l = p.in;
  const std::size_t r = l.shape.size();
  const std::int64_t numel = numel_of(l.shape);
  if (numel == 0) return;
  std::vector<std::int64_t> ow(r, 0), pw(r, 0), idx(r, 0);
  for (std::int64_t d = static_cast<std::int64_t>(r) - 1, so = 1, sp = 1; d >= 0; --d) {
    const auto u = static_cast<std::size_t>(d);
    if ((p.mask >> d) & 1u) { pw[u] = sp; sp *= l.shape[u]; }
    else { ow[u] = so; so *= l.shape[u]; }
  }
  std::int64_t off = l.offset, o = 0, pos = 0;
  for (std::int64_t i = 0; i < numel; ++i) {
    f(off, o, pos);
    for (std::size_t d = r; d-- > 0;) {
      off += l.strides[d];
      o += ow[d];
      pos += pw[d];
      if (++idx[d] < l.shape[d]) break;
      off -= l.strides[d] * l.shape[d];
      o -= ow[d] * l.shape[d];
      pos -= pw[d] * l.shape[d];
      idx[d] = 0;
    }
  }
}

template <class T> ProblemReference reference_of(const RandomProblem& p) {
  const T* base = static_cast<const T*>(p.storage);
  ProblemReference ref;
  ref.acc.resize(static_cast<std::size_t>(p.out_numel));
  ref.argmin_off.assign(static_cast<std::size_t>(p.out_numel), -1);
  ref.argmax_off.assign(static_cast<std::size_t>(p.out_numel), -1);
  ref.zeros.assign(static_cast<std::size_t>(p.out_numel), 0);
  for_each_element(p, [&](std::int64_t off, std::int64_t o, std::int64_t pos) {
    const T v = base[off];
    RefAcc& a = ref.acc[static_cast<std::size_t>(o)];
    ref_add(a, v, pos);
    if (a.argmin == pos) ref.argmin_off[static_cast<std::size_t>(o)] = off;
    if (a.argmax == pos) ref.argmax_off[static_cast<std::size_t>(o)] = off;
    if constexpr (is_floating_v<T>) {
      const long double x = to_ld(v);
      if (x == 0) ref.zeros[static_cast<std::size_t>(o)] |= std::signbit(x) ? 2 : 1;
    }
  });
  return ref;
}

// A float result against a reference that may be NaN or infinite (then the result must match
// exactly), else within tol.
template <class R> ::testing::AssertionResult real_result(const R& got, long double want, long double tol) {
  if (want != want) return is_nan_result(got);
  if (std::isinf(want)) {
    if (to_ld(got) == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << show(got) << ", want " << (want > 0 ? "+inf" : "-inf");
  }
  return within(got, want, tol);
}

template <ReduceOp Op, class T>
::testing::AssertionResult check_element_of(const RandomProblem& p, const ProblemReference& ref, std::int64_t o) {
  using R = reduce_result_t<Op, T>;
  using Acc = reduce_accum_t<Op, T>;
  const RefAcc& a = ref.acc[static_cast<std::size_t>(o)];
  const OutBuffer& out = *p.out;
  const std::int64_t off = out.offset_of(o);
  const T* base = static_cast<const T*>(p.storage);
  if constexpr (Op == ReduceOp::argmin || Op == ReduceOp::argmax) {
    const std::int64_t want = Op == ReduceOp::argmin ? a.argmin : a.argmax;
    const std::int64_t want_off = (Op == ReduceOp::argmin ? ref.argmin_off : ref.argmax_off)[static_cast<std::size_t>(o)];
    const std::int64_t got = load<std::int64_t>(out.at(), off);
    if (got != want)
      return ::testing::AssertionFailure() << "index " << got << ", want " << want << " (value " << show(base[want_off])
                                           << ", row of " << a.n << ")";
    if (p.vals) {
      const T v = load<T>(p.vals->at(), p.vals->offset_of(o));
      const auto r = bits_equal(v, base[want_off]);
      if (!r) return ::testing::AssertionFailure() << "value at index " << want << ": " << r.message();
    }
    return ::testing::AssertionSuccess();
  } else {
    const R got = load<R>(out.at(), off);
    if constexpr (Op == ReduceOp::min || Op == ReduceOp::max) {
      const ExtremeRef& e = Op == ReduceOp::min ? a.min : a.max;
      auto r = matches_extreme(got, e);
      if (!r) return r;
      if constexpr (is_floating_v<T>) {
        if (!e.nan && e.value == 0) {
          const unsigned char z = ref.zeros[static_cast<std::size_t>(o)];
          const bool want_negative = Op == ReduceOp::min ? (z & 2) != 0 : (z & 1) == 0;
          if (std::signbit(to_ld(got)) != want_negative)
            return ::testing::AssertionFailure() << "got " << show(got) << ", want " << (want_negative ? "-0" : "+0")
                                                 << " (" << (Op == ReduceOp::min ? "-0 < +0" : "+0 > -0") << ")";
        }
      }
      return r;
    } else if constexpr (Op == ReduceOp::mean) {
      if (a.n == 0) return is_nan_result(got);
      const long double m = a.sum / static_cast<long double>(a.n);
      return real_result(got, m, mean_tolerance<Acc>(a.n, a.abs_sum, m));
    } else if constexpr (std::is_integral_v<T>) {
      return exactly(got, static_cast<R>(Op == ReduceOp::sum ? a.isum : a.iprod));
    } else if constexpr (Op == ReduceOp::sum) {
      if (a.n == 0) return exactly(got, R(0));
      return real_result(got, a.sum, sum_tolerance<Acc>(a.n, a.abs_sum));
    } else {
      if (a.n == 0) return exactly(got, R(1));
      return real_result(got, a.prod, prod_tolerance<Acc>(a.n, a.prod));
    }
  }
}

inline std::string out_index_text(const ReduceOutput& s, std::int64_t o) {
  std::vector<std::int64_t> idx(static_cast<std::size_t>(s.rank));
  for (int d = s.rank - 1; d >= 0; --d) {
    idx[static_cast<std::size_t>(d)] = o % s.shape[d];
    o /= s.shape[d];
  }
  return list_text(idx);
}

// What a backend call did.
struct Outcome {
  bool threw = false;
  Errc code = Errc::invalid_argument;
  std::string what;
};

// Everything about one problem after the call: `outcome` of the call; p.out->bytes and
// p.vals->bytes hold the output buffers' final contents.
template <ReduceOp Op, class T> ::testing::AssertionResult check_problem_typed(const RandomProblem& p, const Outcome& outcome) {
  if (p.expect_empty_error) {
    if (!outcome.threw || outcome.code != Errc::empty_input)
      return ::testing::AssertionFailure() << "want Error empty_input, "
                                           << (outcome.threw ? std::string("threw ") + errc_name(outcome.code) + ": " + outcome.what : "did not throw");
  } else if (outcome.threw) {
    return ::testing::AssertionFailure() << "threw " << errc_name(outcome.code) << ": " << outcome.what;
  }
  if (p.expect_empty_error || p.null_output) {
    if (!p.out->all_poison() || (p.vals && !p.vals->all_poison())) return ::testing::AssertionFailure() << "wrote an output buffer";
    return ::testing::AssertionSuccess();
  }
  const ProblemReference ref = reference_of<T>(p);
  for (std::int64_t o = 0; o < p.out_numel; ++o) {
    const auto r = check_element_of<Op, T>(p, ref, o);
    if (!r)
      return ::testing::AssertionFailure() << "output element " << o << " " << out_index_text(p.out_shape, o) << " of "
                                           << p.out_numel << ": " << r.message();
  }
  auto untouched = p.out->untouched_outside(p.out_numel);
  if (!untouched) return ::testing::AssertionFailure() << "out: " << untouched.message();
  if (p.vals) {
    untouched = p.vals->untouched_outside(p.out_numel);
    if (!untouched) return ::testing::AssertionFailure() << "values: " << untouched.message();
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult check_problem(const RandomProblem& p, const Outcome& outcome) {
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  visit_dtype(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    for_each_reduce_op([&](auto op) {
      if (decltype(op)::value == p.op) result = check_problem_typed<decltype(op)::value, T>(p, outcome);
    });
  });
  return result;
}

// Counts of what a test ran, printed at its end and checked against the families it must reach.
struct CoverageSummary {
  int cases = 0, failures = 0;
  std::map<std::string, int> structure, family, regime, tags, ops, dtypes;
  void add(const RandomProblem& p) {
    ++cases;
    if (!p.expect_empty_error && p.out_numel > 0) {
      ++structure[p.structure];
      ++family[p.family];
    }
    ++regime[p.regime.rfind("edge", 0) == 0 ? "edge" : p.regime];
    ++ops[op_name(p.op)];
    ++dtypes[dtype_name(p.dtype)];
    for (const auto& t : p.tags) ++tags[t];
  }
  static std::string line(const char* title, const std::map<std::string, int>& m) {
    std::string s = std::string("  ") + title + ":";
    for (const auto& [k, v] : m) s += " " + k + "=" + std::to_string(v);
    return s + "\n";
  }
  std::string text() const {
    return "  " + std::to_string(cases) + " cases, " + std::to_string(failures) + " failed\n" +
           line("structure (with outputs)", structure) + line("plan_family", family) + line("regime", regime) +
           line("op", ops) + line("dtype", dtypes) + line("tags", tags);
  }
  // Every structure (family) reached at least `min_each` times.
  ::testing::AssertionResult reached_every_structure(int min_each) const {
    for (const char* s : {"all", "map", "contiguous-rows", "short-rows", "outer", "strided"}) {
      const auto it = structure.find(s);
      const int n = it == structure.end() ? 0 : it->second;
      if (n < min_each) return ::testing::AssertionFailure() << "structure " << s << " reached " << n << " times, want >= " << min_each;
    }
    return ::testing::AssertionSuccess();
  }
  ::testing::AssertionResult reached_tags(const std::vector<std::string>& want) const {
    for (const auto& t : want)
      if (tags.find(t) == tags.end()) return ::testing::AssertionFailure() << "no case tagged '" << t << "'";
    return ::testing::AssertionSuccess();
  }
};

// The tags every edge run must reach (the edge list guarantees them); none when FOLDKIT_TEST_MAX_N
// leaves some edge shapes out.
inline std::vector<std::string> required_tags() {
  if (max_n() < 4 * 300007) return {};
  return {"expects empty_input",       "rank 0",          "rank 5-6",       "size-0 input",    "size-0 output",
          "keepdims",                  "negative axis",   "arg_reduce values", "input start not 16-byte aligned",
          "zero input stride (broadcast)", "strided/offset output", "NaN planted", "contiguous rows of 1..40",
          "rows of 31/32/33",          "rows of 2^k+-1",  "rows >= 2^17, <= 8 outputs", "columns >= 2^17, <= 8 outputs",
          "wide outer (inner kept >= 1024)"};
}

// ---- bad inputs: one table, run by both backends -----------------------------------------------------
//
// Every class of bad argument (issue #22): rank > 8, axes out of range or repeated, output
// shape / dtype / strides that do not match, an output overlapping the input or itself, negative
// or overflowing strides, null data, unknown op / dtype / device kind, an empty reduced extent for
// an op without identity. Each call must throw the stated Errc and write nothing; `input_only`
// marks the ones reduce_output_shape must reject too.

struct BadCall {
  std::string what;
  Errc want = Errc::invalid_argument;
  ReduceOp op = ReduceOp::sum;
  TensorView in;
  AxisList axes;
  bool keepdims = false;
  TensorView out;
  bool arg = false;  // arg_reduce(op, in, axes, keepdims, out, values)
  TensorView values;
  bool input_only = false;
};

inline constexpr std::size_t kBadInBytes = 4096;   // the input buffer (f32 data at float offset 256)
inline constexpr std::size_t kBadOutBytes = 4096;  // the poisoned output buffer

// in_base: kBadInBytes bytes; out_base: kBadOutBytes bytes; both in `dev`'s memory space.
inline std::vector<BadCall> bad_calls(void* in_base, void* out_base, Device dev) {
  using V = TensorView;
  auto* inf = static_cast<float*>(in_base);
  auto* ob = static_cast<unsigned char*>(out_base);
  float* x0 = inf + 256;  // the usual input: (4, 16) f32, row-major
  const V x = V::contiguous(x0, DType::f32, {4, 16}, dev);
  const V out4 = V::contiguous(ob, DType::f32, {4}, dev);
  const V idx4 = V::contiguous(ob, DType::i64, {4}, dev);
  const V vals4 = V::contiguous(ob + 512, DType::f32, {4}, dev);
  std::vector<BadCall> v;
  auto add = [&](std::string what, Errc want, ReduceOp op, V in, AxisList axes, bool keepdims, V out, bool input_only = false) {
    BadCall c;
    c.what = std::move(what);
    c.want = want;
    c.op = op;
    c.in = in;
    c.axes = axes;
    c.keepdims = keepdims;
    c.out = out;
    c.input_only = input_only;
    v.push_back(c);
  };
  auto add_arg = [&](std::string what, Errc want, ReduceOp op, V in, AxisList axes, bool keepdims, V indices, V values) {
    BadCall c;
    c.what = std::move(what);
    c.want = want;
    c.op = op;
    c.in = in;
    c.axes = axes;
    c.keepdims = keepdims;
    c.out = indices;
    c.arg = true;
    c.values = values;
    v.push_back(c);
  };
  const Errc bad = Errc::invalid_argument;
  const ReduceOp sum = ReduceOp::sum, amax = ReduceOp::argmax;

  // Rank.
  const std::int64_t ones9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  V rank9 = V::contiguous(x0, DType::f32, ones9, 9, dev);
  add("input rank 9", bad, sum, rank9, {}, false, V::contiguous(ob, DType::f32, {}, dev), true);
  V out_rank9 = V::contiguous(ob, DType::f32, ones9, 9, dev);
  add("output rank 9", bad, sum, V::contiguous(x0, DType::f32, ones9, 8, dev), {}, true, out_rank9);
  add_arg("values rank 9", bad, amax, x, {}, true, V::contiguous(ob, DType::i64, {1, 1}, dev), V::contiguous(ob + 512, DType::f32, ones9, 9, dev));
  add("input rank -1 (shape and strides lists differ)", bad, sum, V::strided(x0, DType::f32, {4, 16}, {16}, dev), {1}, false, out4, true);
  V neg_rank = x;
  neg_rank.rank = -3;
  add("input rank -3", bad, sum, neg_rank, {}, false, V::contiguous(ob, DType::f32, {}, dev), true);

  // Axes out of range.
  add("axis 2 of rank 2", bad, sum, x, {2}, false, out4, true);
  add("axis -3 of rank 2", bad, sum, x, {-3}, false, out4, true);
  add("axis 0 of rank 0", bad, sum, V::contiguous(x0, DType::f32, {}, dev), {0}, false, V::contiguous(ob, DType::f32, {}, dev), true);
  add("axis -1 of rank 0", bad, sum, V::contiguous(x0, DType::f32, {}, dev), {-1}, false, V::contiguous(ob, DType::f32, {}, dev), true);
  add("axis INT_MAX", bad, sum, x, {INT_MAX}, false, out4, true);
  add("axis INT_MIN", bad, sum, x, {INT_MIN}, false, out4, true);
  const int nine[9] = {0, 1, 2, 3, 4, 5, 6, 7, 0};
  add("9 axes for rank 8", bad, sum, V::contiguous(x0, DType::f32, ones9, 8, dev), AxisList(nine, 9), false,
      V::contiguous(ob, DType::f32, {}, dev), true);
  add("3 axes for rank 2", bad, sum, x, {0, 1, -1}, false, V::contiguous(ob, DType::f32, {}, dev), true);
  add_arg("argmax axis 2 of rank 2 (arg_reduce)", bad, amax, x, {2}, false, idx4, vals4);

  // Duplicate axes.
  add("duplicate axes {1, 1}", bad, sum, x, {1, 1}, false, out4, true);
  add("duplicate axes {1, -1}", bad, sum, x, {1, -1}, false, out4, true);
  add("duplicate axes {-2, 0}", bad, sum, x, {-2, 0}, false, V::contiguous(ob, DType::f32, {16}, dev), true);
  add("duplicate axes {0, 2, -1} of rank 3", bad, sum, V::contiguous(x0, DType::f32, {2, 4, 8}, dev), {0, 2, -1}, false,
      V::contiguous(ob, DType::f32, {4}, dev), true);

  // Output shape and dtype.
  add("keepdims but out (4)", bad, sum, x, {1}, true, out4);
  add("no keepdims but out (4, 1)", bad, sum, x, {1}, false, V::contiguous(ob, DType::f32, {4, 1}, dev));
  add("out (16) for a (4) result", bad, sum, x, {1}, false, V::contiguous(ob, DType::f32, {16}, dev));
  add("out (5) for a (4) result", bad, sum, x, {1}, false, V::contiguous(ob, DType::f32, {5}, dev));
  add("out (4, 16): nothing reduced", bad, sum, x, {1}, false, V::contiguous(ob, DType::f32, {4, 16}, dev));
  add("rank-0 out for a (4) result", bad, sum, x, {1}, false, V::contiguous(ob, DType::f32, {}, dev));
  add("out (1, 4) for a (4) result", bad, sum, x, {1}, false, V::contiguous(ob, DType::f32, {1, 4}, dev));
  add("sum f32 into f64", bad, sum, x, {1}, false, V::contiguous(ob, DType::f64, {4}, dev));
  add("sum i32 into i32 (writes i64)", bad, sum, V::contiguous(x0, DType::i32, {4, 16}, dev), {1}, false, V::contiguous(ob, DType::i32, {4}, dev));
  add("sum u32 into i64 (writes u64)", bad, sum, V::contiguous(x0, DType::u32, {4, 16}, dev), {1}, false, V::contiguous(ob, DType::i64, {4}, dev));
  add("mean i32 into f32 (writes f64)", bad, ReduceOp::mean, V::contiguous(x0, DType::i32, {4, 16}, dev), {1}, false, out4);
  add("sum f16 into f16 (writes f32)", bad, sum, V::contiguous(x0, DType::f16, {4, 16}, dev), {1}, false, V::contiguous(ob, DType::f16, {4}, dev));
  add("max f16 into f32 (writes f16)", bad, ReduceOp::max, V::contiguous(x0, DType::f16, {4, 16}, dev), {1}, false, out4);
  add("prod bf16 into bf16 (writes f32)", bad, ReduceOp::prod, V::contiguous(x0, DType::bf16, {4, 16}, dev), {1}, false, V::contiguous(ob, DType::bf16, {4}, dev));
  add("argmax into f32 (writes i64)", bad, amax, x, {1}, false, out4);
  add("argmin into i32 (writes i64)", bad, ReduceOp::argmin, x, {1}, false, V::contiguous(ob, DType::i32, {4}, dev));
  add_arg("arg_reduce indices f32", bad, amax, x, {1}, false, V::contiguous(ob, DType::f32, {4}, dev), vals4);
  add_arg("arg_reduce values f64 for f32 input", bad, amax, x, {1}, false, idx4, V::contiguous(ob + 512, DType::f64, {4}, dev));
  add_arg("arg_reduce values i64 for f32 input", bad, amax, x, {1}, false, idx4, V::contiguous(ob + 512, DType::i64, {4}, dev));
  add_arg("arg_reduce values (4, 1) beside indices (4)", bad, amax, x, {1}, false, idx4, V::contiguous(ob + 512, DType::f32, {4, 1}, dev));
  add_arg("arg_reduce indices (16) for a (4) result", bad, amax, x, {1}, false, V::contiguous(ob, DType::i64, {16}, dev), vals4);

  // Output strides.
  add("out zero stride on a dim of 4", bad, sum, x, {1}, false, V::strided(ob, DType::f32, {4}, {0}, dev));
  add("out (2, 4) strides (2, 1) overlap", bad, sum, V::contiguous(x0, DType::f32, {2, 4, 8}, dev), {2}, false, V::strided(ob, DType::f32, {2, 4}, {2, 1}, dev));
  add("out (3, 2) strides (1, 2) overlap", bad, sum, V::contiguous(x0, DType::f32, {3, 2, 5}, dev), {2}, false, V::strided(ob, DType::f32, {3, 2}, {1, 2}, dev));
  add("out (4, 4) strides (1, 1) overlap", bad, sum, V::contiguous(x0, DType::f32, {4, 4, 4}, dev), {0}, false, V::strided(ob, DType::f32, {4, 4}, {1, 1}, dev));
  add("out (2, 3) strides (0, 1): zero stride", bad, sum, V::contiguous(x0, DType::f32, {2, 3, 4}, dev), {2}, false, V::strided(ob, DType::f32, {2, 3}, {0, 1}, dev));
  add("out negative stride", bad, sum, x, {1}, false, V::strided(ob + 64, DType::f32, {4}, {-1}, dev));
  add("out stride 2^62 (byte extent overflows)", bad, sum, x, {1}, false, V::strided(ob, DType::f32, {4}, {std::int64_t{1} << 62}, dev));
  add("out negative shape", bad, sum, x, {1}, false, V::contiguous(ob, DType::f32, {-4}, dev));
  add_arg("values zero stride", bad, amax, x, {1}, false, idx4, V::strided(ob + 512, DType::f32, {4}, {0}, dev));
  add_arg("indices zero stride", bad, amax, x, {1}, false, V::strided(ob, DType::i64, {4}, {0}, dev), vals4);
  add_arg("values (2, 4) strides (2, 1) overlap", bad, amax, V::contiguous(x0, DType::f32, {2, 4, 8}, dev), {2}, false,
          V::contiguous(ob, DType::i64, {2, 4}, dev), V::strided(ob + 512, DType::f32, {2, 4}, {2, 1}, dev));

  // Outputs overlapping the input or each other.
  add("out at the input's start", bad, sum, x, {1}, false, V::contiguous(x0, DType::f32, {4}, dev));
  add("out ending on the input's first element", bad, sum, x, {1}, false, V::contiguous(x0 - 3, DType::f32, {4}, dev));
  add("out starting on the input's last element", bad, sum, x, {1}, false, V::contiguous(x0 + 63, DType::f32, {4}, dev));
  add("out sharing one byte with the input", bad, sum, x, {1}, false,
      V::contiguous(reinterpret_cast<unsigned char*>(x0) + 4 * 64 - 1, DType::f32, {4}, dev));
  add("out inside the input", bad, sum, x, {1}, false, V::contiguous(x0 + 20, DType::f32, {4}, dev));
  add("in place: a (4, 1) map into itself", bad, sum, V::contiguous(x0, DType::f32, {4, 1}, dev), {1}, false, V::contiguous(x0, DType::f32, {4}, dev));
  add("strided out spanning the input", bad, sum, x, {1}, false, V::strided(x0 - 100, DType::f32, {4}, {60}, dev));
  add("out over a broadcast input's bytes", bad, sum, V::strided(x0, DType::f32, {4, 16}, {0, 1}, dev), {1}, false,
      V::contiguous(x0 + 15, DType::f32, {4}, dev));
  add("i64 out overlapping an i32 input", bad, sum, V::contiguous(x0, DType::i32, {4, 16}, dev), {1}, false,
      V::contiguous(reinterpret_cast<std::int64_t*>(x0 + 62), DType::i64, {4}, dev));
  add_arg("indices overlap the input", bad, amax, x, {1}, false, V::contiguous(x0 + 60, DType::i64, {4}, dev), vals4);
  add_arg("values overlap the input", bad, amax, x, {1}, false, idx4, V::contiguous(x0 + 62, DType::f32, {4}, dev));
  add_arg("values overlap indices", bad, amax, x, {1}, false, idx4, V::contiguous(ob + 24, DType::f32, {4}, dev));
  add_arg("values at the indices' address", bad, amax, x, {1}, false, idx4, V::contiguous(ob, DType::f32, {4}, dev));

  // Input strides and shapes.
  add("input negative stride (reversed rows)", bad, sum, V::strided(x0 + 48, DType::f32, {4, 16}, {-16, 1}, dev), {1}, false, out4, true);
  add("input negative inner stride", bad, sum, V::strided(x0 + 15, DType::f32, {4, 16}, {16, -1}, dev), {1}, false, out4, true);
  add("input stride 2^61 (byte extent overflows)", bad, sum, V::strided(x0, DType::f32, {4, 16}, {std::int64_t{1} << 61, 1}, dev), {1}, false, out4, true);
  add("input stride INT64_MAX / 2 (offset overflows)", bad, sum, V::strided(x0, DType::f32, {3}, {INT64_MAX / 2}, dev), {}, false,
      V::contiguous(ob, DType::f32, {}, dev), true);
  add("input f64 stride 2^60 (bytes overflow)", bad, sum, V::strided(x0, DType::f64, {2, 3}, {std::int64_t{1} << 60, 1}, dev), {1}, false,
      V::contiguous(ob, DType::f64, {2}, dev), true);
  add("input numel overflows (2^32 x 2^32)", bad, sum, V::strided(x0, DType::f32, {std::int64_t{1} << 32, std::int64_t{1} << 32}, {0, 0}, dev), {}, false,
      V::contiguous(ob, DType::f32, {}, dev), true);
  add("input negative shape", bad, sum, V::contiguous(x0, DType::f32, {4, -16}, dev), {1}, false, out4, true);
  add("null input with elements", bad, sum, V::contiguous(nullptr, DType::f32, {4, 16}, dev), {1}, false, out4, true);
  add("null out with elements", bad, sum, x, {1}, false, V::contiguous(nullptr, DType::f32, {4}, dev));
  add_arg("null values with elements", bad, amax, x, {1}, false, idx4, V::contiguous(nullptr, DType::f32, {4}, dev));

  // Ops, dtypes, device kinds.
  add("unknown op 42", Errc::unsupported, static_cast<ReduceOp>(42), x, {1}, false, out4, true);
  add("unknown op -1", Errc::unsupported, static_cast<ReduceOp>(-1), x, {1}, false, out4, true);
  add("unknown input dtype 99", Errc::unsupported, sum, V::contiguous(x0, static_cast<DType>(99), {4, 16}, dev), {1}, false, out4, true);
  add("unknown out dtype 99", Errc::unsupported, sum, x, {1}, false, V::contiguous(ob, static_cast<DType>(99), {4}, dev));
  add("argmax with two axes", bad, amax, x, {0, 1}, false, V::contiguous(ob, DType::i64, {}, dev), true);
  add("argmin with two axes {-1, 0}", bad, ReduceOp::argmin, x, {-1, 0}, false, V::contiguous(ob, DType::i64, {}, dev), true);
  add_arg("arg_reduce of sum", bad, sum, x, {1}, false, idx4, vals4);
  add_arg("arg_reduce of max", bad, ReduceOp::max, x, {1}, false, idx4, vals4);
  add_arg("arg_reduce of unknown op 42", bad, static_cast<ReduceOp>(42), x, {1}, false, idx4, vals4);
  add_arg("arg_reduce with two axes", bad, amax, x, {0, 1}, false, V::contiguous(ob, DType::i64, {}, dev), V::contiguous(ob + 512, DType::f32, {}, dev));
  {
    V odd = x;
    odd.device.kind = static_cast<DeviceKind>(7);
    add("input of unknown device kind 7", bad, sum, odd, {1}, false, out4, true);
    V odd_out = out4;
    odd_out.device.kind = static_cast<DeviceKind>(-1);
    add("out of unknown device kind -1", bad, sum, x, {1}, false, odd_out);
  }

  // Empty reduced extents for ops without identity (also with an empty output).
  add("max over an empty axis", Errc::empty_input, ReduceOp::max, V::contiguous(x0, DType::f32, {4, 0}, dev), {1}, false, out4);
  add("min over dim 0 of (0, 5)", Errc::empty_input, ReduceOp::min, V::contiguous(x0, DType::f32, {0, 5}, dev), {0}, false,
      V::contiguous(ob, DType::f32, {5}, dev));
  add("min of (0, 0) over 1 (empty output too)", Errc::empty_input, ReduceOp::min, V::contiguous(x0, DType::f32, {0, 0}, dev), {1}, false,
      V::contiguous(ob, DType::f32, {0}, dev));
  add("argmin of an empty tensor", Errc::empty_input, ReduceOp::argmin, V::contiguous(x0, DType::f32, {0, 4}, dev), {}, false,
      V::contiguous(ob, DType::i64, {}, dev));
  add("argmax keepdims over an empty last axis", Errc::empty_input, amax, V::contiguous(x0, DType::i32, {3, 0}, dev), {-1}, true,
      V::contiguous(ob, DType::i64, {3, 1}, dev));
  add_arg("arg_reduce argmax over an empty axis", Errc::empty_input, amax, V::contiguous(x0, DType::f32, {4, 0}, dev), {1}, false, idx4, vals4);
  add("max of a null empty input over its empty axis", Errc::empty_input, ReduceOp::max, V::contiguous(nullptr, DType::f32, {4, 0}, dev), {1}, false, out4);
  return v;
}

inline std::string bad_call_text(const BadCall& c) {
  std::ostringstream os;
  os << c.what << " (" << (c.arg ? "arg_reduce " : "reduce ") << (is_valid(c.op) ? op_name(c.op) : "op?") << ", want Error "
     << errc_name(c.want) << ")";
  return os.str();
}

}  // namespace foldkit::test
