// foldkit::cpu::reduce over tensors (foldkit/tensor_reduce.hpp): executes the backend-independent
// plan (foldkit/detail/reduce_plan.hpp) on the CPU backend's threads, through the executor it
// shares with the user functors (foldkit/detail/tensor_reduce_cpu.hpp: chunking, walks, outer
// blocks, work units), with the op's reduce_traits as the fold. A row that is one contiguous run
// uses the full-array reduction's own chunk kernel (reduce_chunk.hpp), so its value is bit for
// bit cpu::reduce<Op, T> over the run.
#include <algorithm>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#include <string>
#include <type_traits>

#include "common/erased_dispatch.hpp"
#include "cpu/output_lines.hpp"
#include "cpu/reduce_chunk.hpp"
#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/detail/tensor_reduce_cpu.hpp"
#include "foldkit/reduce.hpp"
#include "foldkit/tensor_reduce.hpp"
#include "foldkit/tensor_reduce_custom.hpp"

namespace foldkit::cpu {

// The public executor decides when short rows stream (it cannot see src/cpu); the same rule as the scans'.
static_assert(detail::kRowsStreamingOutMinBytes == detail::kStreamingStoreMinBytes);

namespace {

using foldkit::detail::ReducePlan;

// Outer runs of float and double sums (and means) in vectors of GCC's vector extensions (SSE
// here). The executor's generic strips kept strips of 4 and 8 floats in memory (checked in the
// assembly: a store-to-load chain per row; (2^24, 4) over dim 0 at 18 % of the ceiling), and its
// tiles read consecutive rows through an array of row pointers ((2^22, 16): 43-61 %, against 87-92
// here with one strided pointer).
template <class A>
struct VectorSumRows {
  static constexpr int kLanes = static_cast<int>(16 / sizeof(A));
  static constexpr std::int64_t kStrip = 8 * kLanes;  // 8 registers of accumulators
  typedef A Vec __attribute__((vector_size(16)));

  static Vec load(const A* p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(A* p, Vec v) { std::memcpy(p, &v, sizeof v); }

  // Columns [j, j + V * kLanes) of rows [0, n) (n = R when R > 0): V vectors of accumulators
  // stay in registers. A fixed R unrolls the row loop: with a loop of 8 rows the wide blocks
  // ((2^12, 2^14) over dim 0) ran at 76-78 % of the ceiling, unrolled at 94 % (a mispredicted
  // loop exit per strip empties the window of loads in flight).
  template <int V, int R>
  static void strip(A* acc, const A* first, std::int64_t stride, std::int64_t n, std::int64_t j) {
    Vec a[V];
    for (int v = 0; v < V; ++v) a[v] = load(acc + j + v * kLanes);
    const A* q = first + j;
    if constexpr (R > 0) {
      (void)n;
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r, q += stride)
        for (int v = 0; v < V; ++v) a[v] += load(q + v * kLanes);
    } else {
      for (std::int64_t r = 0; r < n; ++r, q += stride)
        for (int v = 0; v < V; ++v) a[v] += load(q + v * kLanes);
    }
    for (int v = 0; v < V; ++v) store(acc + j + v * kLanes, a[v]);
  }

  // Every column of rows [0, n), strip by strip (a strip re-reads the rows: n must keep them in L1).
  template <int R>
  static void strips(A* acc, const A* first, std::int64_t stride, std::int64_t n, std::int64_t width) {
    std::int64_t j = 0;
    for (; j + kStrip <= width; j += kStrip) strip<8, R>(acc, first, stride, n, j);
    if (j + 4 * kLanes <= width) strip<4, R>(acc, first, stride, n, j), j += 4 * kLanes;
    if (j + 2 * kLanes <= width) strip<2, R>(acc, first, stride, n, j), j += 2 * kLanes;
    if (j + kLanes <= width) strip<1, R>(acc, first, stride, n, j), j += kLanes;
    for (; j < width; ++j) {
      A a = acc[j];
      const A* q = first + j;
      for (std::int64_t r = 0; r < n; ++r, q += stride) a += *q;
      acc[j] = a;
    }
  }

  // Rows in tiles: narrow blocks (one strip) 64 rows a tile, a few KiB; blocks whose
  // accumulators fit in L1 one row a tile (the unit reads in address order); wider blocks
  // kOuterTileRows rows a tile (see the tuning header for the measurements).
  static void run(A* acc, const A* first, std::int64_t stride, std::int64_t n, std::int64_t width) {
    const std::int64_t bytes = width * static_cast<std::int64_t>(sizeof(A));
    if (width > kStrip && bytes > detail::kOuterTileMinBytes) {
      constexpr int kTile = detail::kOuterTileRows;
      std::int64_t r = 0;
      for (; r + kTile <= n; r += kTile) strips<kTile>(acc, first + r * stride, stride, kTile, width);
      if (r < n) strips<0>(acc, first + r * stride, stride, n - r, width);
      return;
    }
    const std::int64_t tile = width <= kStrip ? 64 : 1;
    for (std::int64_t r = 0; r < n; r += tile) strips<0>(acc, first + r * stride, stride, std::min(tile, n - r), width);
  }
};

#if defined(__SSE2__)
// a + b with a as the first operand, always: when both are NaN, SSE returns the first one, so the
// operand order decides which payload survives. GCC treats _mm_add_ps as commutative and may
// swap the operands (it did in MediumFloatRows' lane fold: a NaN of lane 15 won over lane 4's,
// which the row's serial fold in reduce_chunk_fold keeps); the asm pins the order.
inline __m128 add_in_order(__m128 a, __m128 b) {
#if defined(__GNUC__) || defined(__clang__)
  asm("addps %1, %0" : "+x"(a) : "x"(b));
  return a;
#else
  return _mm_add_ps(a, b);
#endif
}

// a (one partial per row) folded with elements [i, len) of four rows (row k at p + k * stride),
// left to right: groups of four columns gathered by a 4x4 transpose, then the rest one by one.
inline __m128 fold_four_rows(__m128 a, const float* p, std::int64_t stride, std::int64_t i, std::int64_t len) {
  const float* p0 = p;
  const float* p1 = p0 + stride;
  const float* p2 = p1 + stride;
  const float* p3 = p2 + stride;
  for (; i + 4 <= len; i += 4) {
    __m128 c0 = _mm_loadu_ps(p0 + i), c1 = _mm_loadu_ps(p1 + i), c2 = _mm_loadu_ps(p2 + i), c3 = _mm_loadu_ps(p3 + i);
    _MM_TRANSPOSE4_PS(c0, c1, c2, c3);  // c_k = element i + k of the four rows
    a = add_in_order(add_in_order(add_in_order(add_in_order(a, c0), c1), c2), c3);
  }
  for (; i < len; ++i) a = add_in_order(a, _mm_setr_ps(p0[i], p1[i], p2[i], p3[i]));
  return a;
}
#endif

// Short contiguous rows of float sums (and means), four rows at a time: a row shorter than two
// rounds of reduce_chunk_fold's lanes (2 * kLanes<float> = 32) is folded by it serially from the
// identity (no round completes below 16; from 16 to 31 the one round's lanes hold one element
// each and are folded in order before the rest), so folding four rows serially side by side in one
// SSE register, their columns gathered by 4x4 transposes, gives the same bits. Per row before:
// one reduce_chunk call ((2^24, 4) over dim 1 at 17 % of the ceiling).
struct ShortFloatRows {
  static constexpr std::int64_t kMaxLen = 2 * detail::kLanes<float> - 1;

  static void run(const float* first, std::int64_t stride, std::int64_t rows, std::int64_t len, float* acc) {
    std::int64_t r = 0;
#if defined(__SSE2__)
    for (; r + 4 <= rows; r += 4)
      _mm_storeu_ps(acc + r, fold_four_rows(_mm_set1_ps(-0.0f), first + r * stride, stride, 0, len));
#endif
    for (; r < rows; ++r) {
      float a = -0.0f;
      for (std::int64_t i = 0; i < len; ++i) a += first[r * stride + i];
      acc[r] = a;
    }
  }
};

// Medium contiguous rows of float sums (and means), four rows at a time, with
// reduce_chunk_fold's bits: each row's 16 lanes as it keeps them (four SSE registers; lane l
// folds elements l, l + 16, ... from the identity), then the four rows' lanes transposed (one
// register holds lane l of the four rows) and folded lane 0, 1, ..., 15 in order, then the tail
// elements in order (fold_four_rows, as ShortFloatRows), for the four rows side by side. Per row before: one reduce_chunk call, whose
// serial fold of 16 lanes (15 dependent adds) cost more than the row's loads at 64 floats:
// (2^20, 64) over dim 1 on the 2-core VM 73.2-76.8 -> 90.4-92.0 % of the all-core read ceiling
// (three runs each, 2026-11-27); on the 16-core host it read 74.4-80 % before (not yet re-run).
struct MediumFloatRows {
  static constexpr std::int64_t kMaxLen = 1024;
  static_assert(detail::kLanes<float> == 16, "four SSE registers of lanes");

  static void run(const float* first, std::int64_t stride, std::int64_t rows, std::int64_t len, float* acc) {
    std::int64_t r = 0;
#if defined(__SSE2__)
    const std::int64_t body = len / 16 * 16;
    for (; r + 4 <= rows; r += 4) {
      __m128 lanes[4][4];  // [row][q]: lanes 4q .. 4q + 3 of the row
      for (int k = 0; k < 4; ++k) {
        const float* p = first + (r + k) * stride;
        __m128 v0 = _mm_set1_ps(-0.0f), v1 = v0, v2 = v0, v3 = v0;
        for (std::int64_t i = 0; i < body; i += 16) {
          v0 = add_in_order(v0, _mm_loadu_ps(p + i));
          v1 = add_in_order(v1, _mm_loadu_ps(p + i + 4));
          v2 = add_in_order(v2, _mm_loadu_ps(p + i + 8));
          v3 = add_in_order(v3, _mm_loadu_ps(p + i + 12));
        }
        lanes[k][0] = v0;
        lanes[k][1] = v1;
        lanes[k][2] = v2;
        lanes[k][3] = v3;
      }
      __m128 a = _mm_setzero_ps();
      for (int q = 0; q < 4; ++q) {
        __m128 c0 = lanes[0][q], c1 = lanes[1][q], c2 = lanes[2][q], c3 = lanes[3][q];
        _MM_TRANSPOSE4_PS(c0, c1, c2, c3);  // c_k = lane 4q + k of the four rows
        a = q == 0 ? c0 : add_in_order(a, c0);
        a = add_in_order(a, c1);
        a = add_in_order(a, c2);
        a = add_in_order(a, c3);
      }
      _mm_storeu_ps(acc + r, fold_four_rows(a, first + r * stride, stride, body, len));
    }
#endif
    for (; r < rows; ++r) acc[r] = detail::reduce_chunk_fold<ReduceOp::sum, float>(first + r * stride, len);
  }
};

template <ReduceOp Op, class T>
inline constexpr bool kVectorSum = (Op == ReduceOp::sum || Op == ReduceOp::mean) && std::is_floating_point_v<T>;

// A built-in op as the executor's fold.
template <ReduceOp Op, class T>
struct BuiltinFold {
  using Tr = reduce_traits<Op, T>;
  using value_type = T;
  using accum_type = typename Tr::accum_type;
  using A = accum_type;
  // Outer rows fold in pieces (foldkit/detail/tensor_reduce_cpu.hpp): the public contract fixes
  // only the contiguous runs' bits.
  static constexpr bool kPiecedOuter = true;

  A identity() const { return Tr::identity(); }
  A combine(A a, A b) const { return typename Tr::combine_type{}(a, b); }
  A from_element(T v, std::int64_t pos) const { return Tr::from_element(v, pos); }
  A contiguous_chunk(const T* p, std::int64_t len, std::int64_t first_pos) const {
    return detail::reduce_chunk<Op, T>(p, len, first_pos);
  }
  template <ReduceOp O = Op, std::enable_if_t<kVectorSum<O, T> && std::is_same_v<T, float>, int> = 0>
  void contiguous_rows(const T* first, std::int64_t stride, std::int64_t rows, std::int64_t len, A* acc) const {
    if (len <= ShortFloatRows::kMaxLen) return ShortFloatRows::run(first, stride, rows, len, acc);
    if (len <= MediumFloatRows::kMaxLen) return MediumFloatRows::run(first, stride, rows, len, acc);
    for (std::int64_t r = 0; r < rows; ++r) acc[r] = contiguous_chunk(first + r * stride, len, 0);
  }
  // Float sums of short rows, contiguous (foldkit/detail/tensor_reduce_cpu.hpp, write_rows): as
  // write(), whole 64-byte lines by the scans' streaming stores when `stream` (output_lines.hpp).
  // A sum over n > 0 positions finalizes to its accumulator, which contiguous_rows folded from
  // the identity (never a signalling NaN, so combine(identity, acc) is acc too): the lines are
  // streamed straight from acc. (Through a line of finalized values instead, the 2-core VM took
  // 9 % longer than with plain stores; means keep write().)
  template <ReduceOp O = Op, std::enable_if_t<O == ReduceOp::sum && std::is_same_v<T, float>, int> = 0>
  void write_rows(char* out, std::int64_t at, const A* acc, std::int64_t count, std::int64_t row_len, bool stream) const {
    float* dst = reinterpret_cast<float*>(out) + at;
    std::int64_t i = 0;
    if (stream) {
      constexpr std::int64_t kLine = detail::kLineBytes / sizeof(float);
      for (const std::int64_t head = std::min(count, detail::elements_to_line(dst)); i < head; ++i) dst[i] = acc[i];
      for (; i + kLine <= count; i += kLine) detail::store_line(dst + i, acc + i, true);
    }
    for (; i < count; ++i) dst[i] = Tr::finalize(combine(identity(), acc[i]), row_len);
  }
  template <ReduceOp O = Op, std::enable_if_t<kVectorSum<O, T>, int> = 0>
  void outer_run(A* acc, const T* first, std::int64_t stride, std::int64_t n, std::int64_t width, std::int64_t) const {
    static_assert(std::is_same_v<A, T>);
    VectorSumRows<A>::run(acc, first, stride, n, width);
  }
  // Finalizes and writes the output element at offsets r (arg ops: the index, and the value).
  void write(char* out, char* out2, const detail::RowOffsets& r, A acc, std::int64_t row_len) const {
    const auto result = Tr::finalize(acc, row_len);
    if constexpr (Tr::kUsesIndex) {
      std::memcpy(out + r.out * sizeof(std::int64_t), &result.index, sizeof(std::int64_t));
      if (out2 != nullptr) std::memcpy(out2 + r.out2 * sizeof(T), &result.value, sizeof(T));
    } else {
      std::memcpy(out + r.out * sizeof(result), &result, sizeof(result));
    }
  }
};

template <ReduceOp Op, class T>
void execute(const ReducePlan& p, const TensorView& in, const TensorView& out, const TensorView* values) {
  detail::execute_tensor_reduce(p, in.data, out.data, values != nullptr ? values->data : nullptr, BuiltinFold<Op, T>{});
}

// The CPU backend's own checks: host views over host memory.
void check_host_view(const TensorView& v, const char* what) {
  if (v.device.kind != DeviceKind::host)
    throw Error(Errc::wrong_memory, std::string(what) + " is a CUDA device view; the CPU backend needs host memory");
  detail::check_host_input(v.data, v.numel() > 0 ? 1 : 0);
}

void run(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out,
         const TensorView* values) {
  const ReducePlan plan = foldkit::detail::prepare_reduce(op, in, axes, keepdims, out, values);
  check_host_view(in, "input");
  check_host_view(out, values != nullptr ? "indices" : "out");
  if (values != nullptr) check_host_view(*values, "values");
  visit_dtype(in.dtype, [&](auto tag) {
    using T = decltype(tag);
    erased::visit_reduce_op(op, [&](auto op_tag) { execute<decltype(op_tag)::value, T>(plan, in, out, values); });
  });
}

}  // namespace

ReduceOutput reduce_output_shape(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims) {
  validate(in, "input");
  erased::check_enums(op, in.dtype);
  if ((op == ReduceOp::argmin || op == ReduceOp::argmax) && axes.size() > 1)
    throw Error(Errc::invalid_argument, std::string(op_name(op)) + " takes at most one axis");
  const ReducePlan p = foldkit::detail::plan_reduce(in, axes, keepdims);
  ReduceOutput r;
  r.dtype = reduce_result_dtype(op, in.dtype);
  r.rank = p.out_rank;
  for (int i = 0; i < p.out_rank; ++i) r.shape[i] = p.out_shape[i];
  return r;
}

void reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out) {
  run(op, in, axes, keepdims, out, nullptr);
}

void arg_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& indices,
                const TensorView& values) {
  if (op != ReduceOp::argmin && op != ReduceOp::argmax)
    throw Error(Errc::invalid_argument, std::string("arg_reduce takes argmin or argmax, not ") +
                                            (is_valid(op) ? op_name(op) : "an unknown op"));
  run(op, in, axes, keepdims, indices, &values);
}

namespace detail {

foldkit::detail::ReducePlan prepare_reduce_custom(DType dtype, const TensorView& in, AxisList axes, bool keepdims,
                                                  const TensorView& out) {
  const ReducePlan plan = foldkit::detail::prepare_reduce_custom(dtype, in, axes, keepdims, out);
  check_host_view(in, "input");
  check_host_view(out, "out");
  return plan;
}

}  // namespace detail

}  // namespace foldkit::cpu
