// The tensor reductions' test reference, shared by the CPU and CUDA backends' tests
// (tests/cpu/cpu_tensor_reduce_test.cpp, tests/gpu/cuda_tensor_reduce_test.cpp): a naive walk
// over the LOGICAL index space of the input (flat row-major index -> output index and position in
// the reduced space), accumulating in long double / wrapping uint64, never through the planner;
// the random-case generator (shapes, axes, keepdims, input layouts: transposed, stepped,
// broadcast, offset; output layouts) and poisoned output buffers (0xFF) whose bytes outside the
// output view must stay poisoned.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/tensor_reduce.hpp"
#include "support/random_arrays.hpp"
#include "support/reference.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {

template <ReduceOp Op> using OpTag = std::integral_constant<ReduceOp, Op>;
template <class F> void for_each_reduce_op(F&& f) {
  f(OpTag<ReduceOp::sum>{}), f(OpTag<ReduceOp::prod>{}), f(OpTag<ReduceOp::min>{}), f(OpTag<ReduceOp::max>{});
  f(OpTag<ReduceOp::mean>{}), f(OpTag<ReduceOp::argmin>{}), f(OpTag<ReduceOp::argmax>{});
}
constexpr bool is_arg(ReduceOp op) { return op == ReduceOp::argmin || op == ReduceOp::argmax; }

inline std::string list_text(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}

// A layout: shape and strides over a storage buffer, the view starting `offset` elements in.
struct Layout {
  std::vector<std::int64_t> shape, strides;
  std::int64_t offset = 0;
  std::int64_t storage = 1;  // elements the buffer needs
  int rank() const { return static_cast<int>(shape.size()); }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
  std::string describe() const { return "shape " + list_text(shape) + " strides " + list_text(strides) + " offset " + std::to_string(offset); }
  // Offset (elements from the view's start) of the element with row-major logical index i.
  std::int64_t offset_of(std::int64_t i) const {
    std::int64_t off = 0;
    for (std::size_t d = shape.size(); d-- > 0;) {
      off += (i % shape[d]) * strides[d];
      i /= shape[d];
    }
    return off;
  }
  // The view over a copy of the storage buffer that starts at `storage_base` (host or device).
  TensorView view(const void* storage_base, DType dtype, Device device = Device::host()) const {
    return TensorView::strided(static_cast<const unsigned char*>(storage_base) + offset * static_cast<std::int64_t>(dtype_size(dtype)),
                               dtype, shape.data(), strides.data(), static_cast<int>(shape.size()), device);
  }
};

// Strides for `shape`: dimensions laid out in a random order (permute), each padded by a step of
// 1-3 (stepped), some made 0 (broadcast).
inline Layout make_layout(const std::vector<std::int64_t>& shape, Rng& rng, bool permute, bool stepped, bool broadcast,
                   std::int64_t offset) {
  Layout l;
  l.shape = shape;
  l.strides.assign(shape.size(), 0);
  l.offset = offset;
  std::vector<int> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  if (permute)
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(i) - 1))]);
  std::int64_t run = stepped ? rng.uniform(1, 2) : 1;
  for (std::size_t k = order.size(); k-- > 0;) {
    const int d = order[k];
    l.strides[static_cast<std::size_t>(d)] = run;
    run *= std::max<std::int64_t>(shape[static_cast<std::size_t>(d)], 1) * (stepped ? rng.uniform(1, 3) : 1);
  }
  if (broadcast)
    for (auto& s : l.strides)
      if (rng.uniform(0, 2) == 0) s = 0;
  std::int64_t max_off = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) max_off += std::max<std::int64_t>(shape[i] - 1, 0) * l.strides[i];
  l.storage = offset + max_off + 1;
  return l;
}

inline constexpr std::int64_t kSizes[] = {0, 1, 2, 3, 5, 7, 16, 17, 31, 64, 127};

// The product of a shape's extents with zero-size dims counted as 1: what bounds the storage of
// its (stepped, permuted) layouts. The element count alone is 0 when a dim is 0 and let the other
// dims stay large: a stepped output layout of such a shape needed gigabytes (std::bad_alloc, or
// the OOM killer, about once in 60 CPU runs of CpuTensorReduce.RandomCasesMatchTheReference, e.g.
// FOLDKIT_TEST_SEED=16722658359570075731). The random shapes are bounded by it.
inline std::int64_t extent_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= std::max<std::int64_t>(s, 1);
  return n;
}

inline std::vector<std::int64_t> random_shape(Rng& rng, std::int64_t max_numel) {
  const int rank = static_cast<int>(rng.uniform(0, 5));
  std::vector<std::int64_t> shape(static_cast<std::size_t>(rank));
  for (auto& s : shape) s = kSizes[rng.uniform(0, 10)];
  while (extent_of(shape) > max_numel) shape[static_cast<std::size_t>(rng.uniform(0, rank - 1))] = rng.uniform(0, 3);
  return shape;
}

// Element values: small integers (ties for min/max/arg), floats k/4 in [-5, 5] (ties, and sums
// exact at these sizes), 1 +- 2^-6 at most for float products; NaN and -0 planted when asked.
template <class T> T random_value(ReduceOp op, CounterRng r, std::uint64_t i, bool plant_nan) {
  if constexpr (std::is_integral_v<T>) {
    if (op == ReduceOp::prod) return static_cast<T>(r.in_range<std::int64_t>(i, std::is_signed_v<T> ? -3 : 0, 3));
    return static_cast<T>(r.in_range<std::int64_t>(i, std::is_signed_v<T> ? -40 : 0, 40));
  } else {
    const std::int64_t k = r.in_range<std::int64_t>(i, -20, 20);
    if (plant_nan && k == 20 && (r.bits(i) >> 40) % 8 == 0) return quiet_nan<T>();
    if (k == 0 && (r.bits(i) >> 40) % 2) return from_double<T>(-0.0);
    // 1 + {-2..2}/128: exact in every float dtype, and 3000 of them (a broadcast row) stay far
    // from float's underflow.
    if (op == ReduceOp::prod) return from_double<T>(1.0 + static_cast<double>(k % 3) / 128.0);
    return from_double<T>(static_cast<double>(k) / 4.0);
  }
}

// The reference, per output element (numbered row-major over the output shape).
struct RefAcc {
  std::int64_t n = 0;
  std::uint64_t isum = 0, iprod = 1;
  long double sum = 0, abs_sum = 0, prod = 1;
  ExtremeRef min{false, 0}, max{false, 0};
  std::int64_t argmin = -1, argmax = -1;  // position in the reduced space
  long double argmin_v = 0, argmax_v = 0;
  bool argmin_nan = false, argmax_nan = false;
};

template <class T> void ref_add(RefAcc& a, T v, std::int64_t pos) {
  const long double x = to_ld(v);
  const bool nan = x != x;
  if constexpr (std::is_integral_v<T>) {
    a.isum += as_u64(v);
    a.iprod *= as_u64(v);
  }
  a.sum += x;
  a.abs_sum += std::fabs(x);
  a.prod *= x;
  if (a.n == 0) a.min = a.max = ExtremeRef{nan, x};
  if (nan) a.min = a.max = ExtremeRef{true, x};
  if (!a.min.nan && x < a.min.value) a.min.value = x;
  if (!a.max.nan && x > a.max.value) a.max.value = x;
  // First NaN wins; else the first strictly better.
  if (!a.argmin_nan && (a.argmin < 0 || nan || x < a.argmin_v)) { a.argmin = pos; a.argmin_v = x; a.argmin_nan = nan; }
  if (!a.argmax_nan && (a.argmax < 0 || nan || x > a.argmax_v)) { a.argmax = pos; a.argmax_v = x; a.argmax_nan = nan; }
  ++a.n;
}

// Walks the input's logical index space row-major.
template <class T>
std::vector<RefAcc> reference(const T* base, const Layout& l, unsigned mask) {
  const std::size_t r = l.shape.size();
  std::int64_t out_n = 1, numel = 1;
  for (std::size_t i = 0; i < r; ++i) {
    numel *= l.shape[i];
    if (!((mask >> i) & 1u)) out_n *= l.shape[i];
  }
  std::vector<RefAcc> acc(static_cast<std::size_t>(out_n));
  std::vector<std::int64_t> idx(r, 0);
  for (std::int64_t f = 0; f < numel; ++f) {
    std::int64_t rem = f, off = 0, o = 0, pos = 0, o_scale = 1, p_scale = 1;
    for (std::size_t d = r; d-- > 0;) {
      const std::int64_t i = rem % l.shape[d];
      rem /= l.shape[d];
      off += i * l.strides[d];
      if ((mask >> d) & 1u) { pos += i * p_scale; p_scale *= l.shape[d]; }
      else { o += i * o_scale; o_scale *= l.shape[d]; }
    }
    ref_add(acc[static_cast<std::size_t>(o)], base[l.offset + off], pos);
  }
  return acc;
}

template <class R> R load(const unsigned char* bytes, std::int64_t off) {
  R v;
  std::memcpy(&v, bytes + off * static_cast<std::int64_t>(sizeof(R)), sizeof(R));
  return v;
}

// An output buffer: poisoned, with the view's strides; checks that only the view was written.
struct OutBuffer {
  Layout layout;
  std::size_t elem;
  std::vector<unsigned char> bytes;
  OutBuffer(const ReduceOutput& o, Rng& rng, bool strided) : elem(dtype_size(o.dtype)) {
    layout = make_layout(std::vector<std::int64_t>(o.shape, o.shape + o.rank), rng, strided, strided, false,
                         strided ? rng.uniform(0, 2) : 0);
    bytes.assign(static_cast<std::size_t>(layout.storage + 4) * elem, 0xFF);
  }
  // A poisoned buffer for a given layout (tests/common/tensor_random_cases.hpp builds its own).
  OutBuffer(Layout l, std::size_t elem_bytes)
      : layout(std::move(l)), elem(elem_bytes), bytes(static_cast<std::size_t>(layout.storage + 4) * elem, 0xFF) {}
  TensorView view(DType dtype) { return layout.view(bytes.data(), dtype); }
  // The same view over a copy of `bytes` at `base` (a device buffer of bytes.size() bytes).
  TensorView view(DType dtype, void* base, Device device) const { return layout.view(base, dtype, device); }
  // Offset (elements from the view's start) of output element o, row-major.
  std::int64_t offset_of(std::int64_t o) const {
    std::int64_t off = 0;
    for (std::size_t d = layout.shape.size(); d-- > 0;) {
      off += (o % layout.shape[d]) * layout.strides[d];
      o /= layout.shape[d];
    }
    return off;
  }
  const unsigned char* at() const { return bytes.data() + layout.offset * static_cast<std::int64_t>(elem); }
  ::testing::AssertionResult untouched_outside(std::int64_t out_n) const {
    std::vector<char> covered(bytes.size(), 0);
    for (std::int64_t o = 0; o < out_n; ++o)
      std::memset(&covered[static_cast<std::size_t>((layout.offset + offset_of(o)) * static_cast<std::int64_t>(elem))], 1, elem);
    for (std::size_t b = 0; b < bytes.size(); ++b)
      if (!covered[b] && bytes[b] != 0xFF) return ::testing::AssertionFailure() << "byte " << b << " outside the output view was written";
    return ::testing::AssertionSuccess();
  }
  bool all_poison() const { return std::all_of(bytes.begin(), bytes.end(), [](unsigned char c) { return c == 0xFF; }); }
};

// Checks output element `o` of op Op against the reference.
template <ReduceOp Op, class T>
::testing::AssertionResult check_element(const RefAcc& a, const OutBuffer& out, const OutBuffer* values, std::int64_t o,
                                         const std::vector<T>& storage, const Layout& in, const std::vector<std::int64_t>& pos_to_off) {
  using R = reduce_result_t<Op, T>;
  using Acc = reduce_accum_t<Op, T>;
  const std::int64_t off = out.offset_of(o);
  if constexpr (Op == ReduceOp::argmin || Op == ReduceOp::argmax) {
    const std::int64_t want = Op == ReduceOp::argmin ? a.argmin : a.argmax;
    const std::int64_t got = load<std::int64_t>(out.at(), off);
    if (got != want) return ::testing::AssertionFailure() << "index " << got << ", want " << want;
    if (values != nullptr) {
      const T v = load<T>(values->at(), values->offset_of(o));
      const T w = storage[static_cast<std::size_t>(in.offset + pos_to_off[static_cast<std::size_t>(want)])];
      return bits_equal(v, w);
    }
    return ::testing::AssertionSuccess();
  } else {
    const R got = load<R>(out.at(), off);
    if constexpr (Op == ReduceOp::min) return matches_extreme(got, a.min);
    else if constexpr (Op == ReduceOp::max) return matches_extreme(got, a.max);
    else if constexpr (Op == ReduceOp::mean) {
      if (a.n == 0) return is_nan_result(got);
      const long double m = a.sum / static_cast<long double>(a.n);
      return within(got, m, mean_tolerance<Acc>(a.n, a.abs_sum, m));
    } else if constexpr (std::is_integral_v<T>) {
      return exactly(got, static_cast<R>(Op == ReduceOp::sum ? a.isum : a.iprod));
    } else if constexpr (Op == ReduceOp::sum) {
      return within(got, a.sum, sum_tolerance<Acc>(a.n, a.abs_sum));
    } else {
      return within(got, a.prod, prod_tolerance<Acc>(a.n, a.prod));
    }
  }
}

// One random case of op Op on dtype T: layout, axes, keepdims, output layout, then every output
// element against the reference and the poison outside the output views.
// The backend runs through `runner(storage, in_layout, axes, keepdims, out, out_dtype, vals)`:
// it reduces the input (`in_layout` over `storage`) into the output buffers `out` and, when
// `vals` is not null, arg_reduce's values; afterwards out.bytes (and vals->bytes) must hold the
// buffers' final contents, also when the call throws (a device runner copies back, then
// rethrows).
template <ReduceOp Op, class T, class Runner> void random_case(Rng& rng, int case_no, Runner&& runner) {
  const auto shape = random_shape(rng, 3000);
  const int rank = static_cast<int>(shape.size());
  const bool permute = rng.uniform(0, 1), stepped = rng.uniform(0, 2) == 0, broadcast = rng.uniform(0, 3) == 0;
  const Layout in = make_layout(shape, rng, permute, stepped, broadcast, rng.uniform(0, 3));
  std::vector<T> storage(static_cast<std::size_t>(in.storage));
  const CounterRng values_rng = rng.counter();
  const bool plant_nan = Op != ReduceOp::sum && Op != ReduceOp::prod && Op != ReduceOp::mean && rng.uniform(0, 2) == 0;
  for (std::size_t i = 0; i < storage.size(); ++i) storage[i] = random_value<T>(Op, values_rng, i, plant_nan);

  std::vector<int> axes;
  if (is_arg(Op)) {
    if (rank > 0 && rng.uniform(0, 2) > 0) axes.push_back(static_cast<int>(rng.uniform(-rank, rank - 1)));
  } else {
    for (int d = 0; d < rank; ++d)
      if (rng.uniform(0, 1)) axes.push_back(rng.uniform(0, 1) ? d : d - rank);
    std::reverse(axes.begin(), axes.end());  // order never matters
  }
  const bool keepdims = rng.uniform(0, 1);
  unsigned mask = 0;
  for (int a : axes) mask |= 1u << (a < 0 ? a + rank : a);
  if (axes.empty()) mask = (1u << rank) - 1u;

  const TensorView view = TensorView::strided(storage.data() + in.offset, dtype_v<T>, in.shape.data(), in.strides.data(), rank);
  const ReduceOutput shape_out = cpu::reduce_output_shape(Op, view, axes, keepdims);
  OutBuffer out(shape_out, rng, rng.uniform(0, 1));
  const bool with_values = is_arg(Op) && rng.uniform(0, 1);
  ReduceOutput vshape = shape_out;
  vshape.dtype = dtype_v<T>;
  OutBuffer vals(vshape, rng, rng.uniform(0, 1));

  std::int64_t reduced_n = 1;
  for (int d = 0; d < rank; ++d)
    if ((mask >> d) & 1u) reduced_n *= shape[static_cast<std::size_t>(d)];
  SCOPED_TRACE("case " + std::to_string(case_no) + " " + op_name(Op) + " " + dtype_name(dtype_v<T>) + " input " +
               in.describe() + " axes " + list_text(std::vector<std::int64_t>(axes.begin(), axes.end())) +
               " keepdims " + std::to_string(keepdims) + " out " + out.layout.describe() + " plan " +
               detail::describe_plan(detail::plan_reduce(view, axes, keepdims, out.layout.strides.data())));

  auto call = [&] { runner(storage, in, axes, keepdims, out, shape_out.dtype, with_values ? &vals : nullptr); };
  if (needs_nonempty(Op) && reduced_n == 0) {
    EXPECT_TRUE(throws_errc(Errc::empty_input, call));
    EXPECT_TRUE(out.all_poison());
    return;
  }
  call();
  const std::vector<RefAcc> ref = reference(storage.data(), in, mask);
  ASSERT_EQ(static_cast<std::int64_t>(ref.size()), shape_out.numel());
  // The arg value check needs (o, pos) -> input offset: the reference walk again, per output.
  for (std::int64_t o = 0; o < shape_out.numel(); ++o) {
    std::vector<std::int64_t> pos_to_off;
    if (with_values) {
      // Input offsets of output o's row, in reduced row-major order.
      std::int64_t rem_o = o, base = 0;
      for (int d = rank - 1; d >= 0; --d)
        if (!((mask >> d) & 1u)) { base += (rem_o % shape[static_cast<std::size_t>(d)]) * in.strides[static_cast<std::size_t>(d)]; rem_o /= shape[static_cast<std::size_t>(d)]; }
      for (std::int64_t p = 0; p < reduced_n; ++p) {
        std::int64_t rem = p, off = base;
        for (int d = rank - 1; d >= 0; --d)
          if ((mask >> d) & 1u) { off += (rem % shape[static_cast<std::size_t>(d)]) * in.strides[static_cast<std::size_t>(d)]; rem /= shape[static_cast<std::size_t>(d)]; }
        pos_to_off.push_back(off);
      }
    }
    const auto r = check_element<Op, T>(ref[static_cast<std::size_t>(o)], out, with_values ? &vals : nullptr, o, storage, in, pos_to_off);
    if (!r) {
      ADD_FAILURE() << "output element " << o << ": " << r.message();
      return;
    }
  }
  EXPECT_TRUE(out.untouched_outside(shape_out.numel()));
  if (with_values) {
    EXPECT_TRUE(vals.untouched_outside(shape_out.numel()));
  }
}

}  // namespace foldkit::test
