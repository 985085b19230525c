// The kernel families of the CUDA tensor reductions (issue #22), one per canonical shape of the
// plan (foldkit/detail/reduce_plan.hpp). Host side: tensor_reduce.cu picks the family and the
// launch shape (constants: foldkit/cuda/tuning/tensor_reduce_tuning.hpp).
//
// Output elements are numbered row-major over the plan's kept dimensions, the elements each one
// folds ("positions") row-major over its reduced dimensions (for argmin/argmax those are in
// logical order, so a position is the index along the reduced axis). Every family folds a fixed
// set of positions per thread left to right, then combines threads in a fixed tree, and partial
// results of several blocks in split order: the bits depend only on the plan and the launch
// shape, never on timing. No floating-point atomics; a split launch counts finished blocks with
// an integer atomic, and the last one folds the partials and zeroes what it used, so the
// workspace is left zeroed.
//
//   rows-packed  the row (innermost reduced dim, contiguous) is shorter than one 16-byte vector
//                and rows are adjacent: each thread loads whole vectors and reduces the rows in
//                them (f32 rows of 2, bf16 rows of 2 or 4 ...).
//   rows-dense   adjacent rows of 1-32 whole vectors: the input as one flat array of vectors.
//   rows-group   short and medium rows: a group of G lanes per output, each lane folding every
//                G-th vector of the row; kRowsOutputsPerGroup outputs per pass.
//   rows-block   long rows, few outputs: `chunks` blocks per output.
//   outer        the reduced dims are outer, the innermost kept one contiguous: threads across
//                the columns (16-byte column vectors), down the reduced dim; split over blocks.
//   generic      anything else: one warp per output, odometer over the reduced dims.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "foldkit/cuda/block/block_reduce.cuh"
#include "foldkit/cuda/device/reduce_spec.cuh"
#include "foldkit/cuda/device/vector_load.cuh"
#include "foldkit/cuda/tuning/tensor_reduce_tuning.hpp"
#include "foldkit/cuda/warp/warp_reduce.cuh"
#include "foldkit/cuda/warp/warp_shuffle.cuh"
#include "foldkit/ops.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit::cuda::tensor {

enum class Family : int { rows_packed, rows_dense, rows_group, rows_block, outer, generic };

// Dimensions outermost first (sizes and strides in elements).
struct Dims {
  int rank = 0;
  std::int64_t size[kMaxRank] = {};
  std::int64_t in[kMaxRank] = {};
  std::int64_t out[kMaxRank] = {};
  std::int64_t out2[kMaxRank] = {};
};

// Everything a kernel needs, passed by value (__grid_constant__: read from the parameter bank).
struct Launch {
  const void* in = nullptr;
  void* out = nullptr;   // the result (argmin/argmax: the int64 index)
  void* out2 = nullptr;  // arg_reduce's values, or null
  std::int64_t out_numel = 0;
  std::int64_t reduce_numel = 0;  // positions per output
  // rows families: `kept` = the kept dims; `red` = the reduced dims OUTSIDE the run; run = the
  // innermost reduced dim's length (input stride 1). outer: `kept` = the kept dims outside the
  // contiguous column dim (the "batches"); `red` = all reduced dims; cols/col_out/col_out2 = the
  // column dim. generic: `kept` and `red` = all of them.
  Dims kept;
  Dims red;
  std::int64_t run = 1;
  std::int64_t cols = 1, col_out = 0, col_out2 = 0;
  // Launch shape.
  int group_shift = 0;          // rows-group: G = 1 << group_shift lanes per output
  std::int64_t chunks = 1;      // rows-block: blocks per output; outer: splits of the reduced dim
  int tx_shift = 0;             // outer: TX = 1 << tx_shift threads across column vectors
  std::int64_t col_tiles = 1;   // outer: blocks across the columns
  std::int64_t batches = 1;     // outer: product of `kept`
  // Split launches: arrival counters (unsigned) at ws, partials at ws + partials_offset.
  void* ws = nullptr;
  std::int64_t partials_offset = 0;
};

// ---- small device helpers ----------------------------------------------------------------

// One element, streamed (read once: evict first).
template <class T>
__device__ __forceinline__ T load_one(const T* p) {
  T t;
  if constexpr (sizeof(T) == 8) {
    const unsigned long long u = __ldcs(reinterpret_cast<const unsigned long long*>(p));
    memcpy(&t, &u, 8);
  } else if constexpr (sizeof(T) == 4) {
    const unsigned u = __ldcs(reinterpret_cast<const unsigned*>(p));
    memcpy(&t, &u, 4);
  } else {
    static_assert(sizeof(T) == 2, "1-, 2-, 4- or 8-byte elements");
    const unsigned short u = __ldcs(reinterpret_cast<const unsigned short*>(p));
    memcpy(&t, &u, 2);
  }
  return t;
}

// A partial written by another block of this launch (after its __threadfence): read from L2.
template <class A>
__device__ __forceinline__ A load_partial(const A* p) {
  static_assert(sizeof(A) % 4 == 0, "accumulators are whole words");
  constexpr int kWords = sizeof(A) / 4;
  unsigned w[kWords];
#pragma unroll
  for (int k = 0; k < kWords; ++k) w[k] = __ldcg(reinterpret_cast<const unsigned*>(p) + k);
  A a;
  memcpy(&a, w, sizeof(A));
  return a;
}

template <class A>
__device__ __forceinline__ void zero_partial(A* p) {
  constexpr int kWords = sizeof(A) / 4;
#pragma unroll
  for (int k = 0; k < kWords; ++k) reinterpret_cast<unsigned*>(p)[k] = 0u;
}

// 16 bytes kept as four 32-bit words until each element is folded. Loaded into Vec16<T> of a
// 2-byte T, ptxas split every vector into eight 16-bit registers (PRMT) as soon as it arrived,
// which made the first loads' consumers wait before the later loads were issued: bf16 sums over
// dim 1 at 45-71 % of the read ceiling (SASS of rows-dense, 2026-11-26).
using Raw16 = Vec16<unsigned>;
template <class T>
__device__ __forceinline__ Raw16 load_raw(const T* p) {
  return load_streaming(reinterpret_cast<const Raw16*>(p));
}
template <class T>
__device__ __forceinline__ T raw_element(const Raw16& r, int e) {
  T t;
  if constexpr (sizeof(T) == 2) {
    const auto h = static_cast<unsigned short>(r.v[e >> 1] >> ((e & 1) * 16));
    memcpy(&t, &h, 2);
  } else if constexpr (sizeof(T) == 4) {
    memcpy(&t, &r.v[e], 4);
  } else {
    const unsigned long long w = (static_cast<unsigned long long>(r.v[2 * e + 1]) << 32) | r.v[2 * e];
    memcpy(&t, &w, 8);
  }
  return t;
}

// Offsets of output o (row-major over d) in the input and the outputs.
struct Offsets {
  std::int64_t in = 0, out = 0, out2 = 0;
};
__device__ __forceinline__ Offsets dims_offsets(const Dims& d, std::int64_t o) {
  Offsets r;
  for (int k = d.rank - 1; k >= 0; --k) {
    std::int64_t i = o;
    if (k > 0) {
      i = o % d.size[k];
      o /= d.size[k];
    }
    r.in += i * d.in[k];
    r.out += i * d.out[k];
    r.out2 += i * d.out2[k];
  }
  return r;
}

// The input offset of index r, row-major over d (the reduced dims' input strides).
__device__ __forceinline__ std::int64_t dims_in_offset(const Dims& d, std::int64_t r) {
  if (d.rank == 1) return r * d.in[0];
  std::int64_t off = 0;
  for (int k = d.rank - 1; k >= 0; --k) {
    std::int64_t i = r;
    if (k > 0) {
      i = r % d.size[k];
      r /= d.size[k];
    }
    off += i * d.in[k];
  }
  return off;
}

// rows families: the input offset of position p of an output (runs of a.run contiguous
// elements, the runs placed by a.red).
__device__ __forceinline__ std::int64_t rows_offset(const Launch& a, std::int64_t p) {
  if (a.red.rank == 0) return p;
  const std::int64_t r = p / a.run;
  return dims_in_offset(a.red, r) + (p - r * a.run);
}

// The hot-loop form of (Op, T), as the full-array kernels pick it (reduce_spec.cuh): f32
// min/max as one FMNMX.NAN per element, other float min/max as integer keys, argmin/argmax of
// 2- and 4-byte types as one 64-bit key|index (positions per output below 2^32 for 4-byte
// types: the host sends larger rows to the generic kernel), everything else reduce_traits.
template <ReduceOp Op, class T>
struct TensorSpec {
  static constexpr bool kArg = Op == ReduceOp::argmin || Op == ReduceOp::argmax;
  using type = std::conditional_t<
      kArg && (sizeof(T) == 2 || sizeof(T) == 4), PackedArgSpec<Op, T>,
      std::conditional_t<(Op == ReduceOp::min || Op == ReduceOp::max) && std::is_same_v<T, float>, NanMinMaxF32Spec<Op>,
                         std::conditional_t<(Op == ReduceOp::min || Op == ReduceOp::max) && is_floating_v<T>,
                                            KeyedMinMaxSpec<Op, T>, BuiltinReduceSpec<Op, T>>>>;
};
template <ReduceOp Op, class T>
using spec_t = typename TensorSpec<Op, T>::type;

// A thread's running fold. Every family feeds a thread its positions in increasing order, so
// argmin/argmax of 2- and 4-byte types keep the best value and its position instead of
// building a 64-bit key|index per element: floats take one NaN-propagating FMNMX and one
// compare per element (the position moves when the extreme changes value: ties and anything
// after a NaN keep the earlier position; -0 and +0 compare equal, as the keys do), integers one
// compare. The key is built once, for the combine across threads. Rows of 64 f32, argmax:
// 75 % of the read ceiling with a key per element, 86 % with this state.
// result(spec, first): `first` is the first position the thread read (-1: none). A thread
// whose elements all equal the identity's value never moves its position; it credits `first`.
template <class Spec, class T>
struct PlainFold {
  typename Spec::accum_type acc;
  PlainFold() = default;
  __device__ __forceinline__ explicit PlainFold(const Spec& s) : acc(s.identity()) {}
  __device__ __forceinline__ void add(const Spec& s, T v, std::int64_t p) { acc = s.combine(acc, s.from_element(v, p)); }
  __device__ __forceinline__ typename Spec::accum_type result(const Spec&, std::int64_t) const { return acc; }
};
template <class Spec, class T>
struct ArgFold {
  using C = std::conditional_t<is_16bit_float_v<T>, float, T>;
  static constexpr bool kIsMax = Spec::kIsMax;
  C best;
  std::int64_t pos = -1;  // -1: the extreme never moved from the identity's value
  ArgFold() = default;
  __device__ __forceinline__ explicit ArgFold(const Spec&) : best(identity_value()) {}
  __device__ __forceinline__ static C identity_value() {
    if constexpr (std::is_floating_point_v<C>)
      return kIsMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
    else
      return kIsMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
  }
  __device__ __forceinline__ void add(const Spec&, T v, std::int64_t p) {
    const C c = static_cast<C>(v);
    if constexpr (std::is_floating_point_v<C>) {
      const C next = nan_min_max<kIsMax>(best, c);
      const bool moved = !(next == best) && !(best != best);  // a NaN best stays where it is
      pos = moved ? p : pos;
      best = next;
    } else {
      const bool moved = kIsMax ? c > best : c < best;
      pos = moved ? p : pos;
      best = moved ? c : best;
    }
  }
  __device__ __forceinline__ typename Spec::accum_type result(const Spec& s, std::int64_t first) const {
    if (pos >= 0) return s.from_element(static_cast<T>(best), pos);
    if (first >= 0) return s.from_element(static_cast<T>(identity_value()), first);
    return s.identity();
  }
};
template <ReduceOp Op, class T>
using fold_t = std::conditional_t<std::is_same_v<spec_t<Op, T>, PackedArgSpec<Op, T>>, ArgFold<spec_t<Op, T>, T>,
                                  PlainFold<spec_t<Op, T>, T>>;

// The index an argmin/argmax accumulator holds.
template <class Spec>
__device__ __forceinline__ std::int64_t arg_index(const Spec&, const typename Spec::accum_type& acc) {
  if constexpr (std::is_same_v<typename Spec::accum_type, unsigned long long>) {
    const unsigned long long low = acc & Spec::kIndexMask;
    return static_cast<std::int64_t>(Spec::kIsMax ? Spec::kIndexMask - low : low);
  } else {
    return acc.index;
  }
}

// Writes the finalized result of `acc` for an output whose offsets are `out_off`/`out2_off`;
// `value_at` gives the input offset of a position (arg_reduce's value: the winning element
// itself, reloaded, so its bits are the input's and not those of a key or compare type).
template <ReduceOp Op, class T, class Spec, class ValueAt>
__device__ __forceinline__ void write_result(const Launch& a, const Spec& spec, typename Spec::accum_type acc,
                                             std::int64_t out_off, std::int64_t out2_off, ValueAt value_at) {
  if constexpr (Op == ReduceOp::argmin || Op == ReduceOp::argmax) {
    const std::int64_t index = arg_index(spec, acc);
    static_cast<std::int64_t*>(a.out)[out_off] = index;
    if (a.out2 != nullptr) static_cast<T*>(a.out2)[out2_off] = static_cast<const T*>(a.in)[value_at(index)];
  } else {
    static_cast<reduce_result_t<Op, T>*>(a.out)[out_off] = spec.finalize(acc, a.reduce_numel, nullptr);
  }
}

// ---- rows-packed -------------------------------------------------------------------------
// Rows of a.run < V elements, adjacent (kept: one dim of input stride a.run), input 16-byte
// aligned, V % a.run == 0. Thread i reduces the V / run rows of vector i.
template <ReduceOp Op, class T>
__global__ void __launch_bounds__(tuning::kTensorThreads) rows_packed_kernel(const __grid_constant__ Launch a) {
  using Spec = spec_t<Op, T>;
  using A = typename Spec::accum_type;
  const Spec spec{};
  const auto f = spec.combine;
  constexpr int V = Vec16<T>::kCount;
  const int run = static_cast<int>(a.run);
  const int per_vec = V / run;
  const T* in = static_cast<const T*>(a.in);
  const std::int64_t vectors = a.out_numel / per_vec;  // whole vectors; the rest below
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t out_stride = a.kept.out[0], out2_stride = a.kept.out2[0];
  constexpr int K = tuning::kRowsOutputsPerGroup;
  for (std::int64_t i0 = tid; i0 < vectors; i0 += K * threads) {
    Raw16 v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const std::int64_t i = i0 + k * threads;
      if (i < vectors) v[k] = load_raw(in + i * V);
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const std::int64_t i = i0 + k * threads;
      if (i >= vectors) break;
      for (int r = 0; r < per_vec; ++r) {
        A acc = spec.identity();
        for (int e = 0; e < run; ++e) acc = f(acc, spec.from_element(raw_element<T>(v[k], r * run + e), e));
        const std::int64_t o = i * per_vec + r;
        write_result<Op, T>(a, spec, acc, o * out_stride, o * out2_stride, [&](std::int64_t p) { return o * run + p; });
      }
    }
  }
  // The last rows that do not fill a vector: one thread each.
  const std::int64_t o = vectors * per_vec + tid;
  if (o < a.out_numel) {
    A acc = spec.identity();
    for (int e = 0; e < run; ++e) acc = f(acc, spec.from_element(in[o * run + e], e));
    write_result<Op, T>(a, spec, acc, o * out_stride, o * out2_stride, [&](std::int64_t p) { return o * run + p; });
  }
}

// ---- rows-dense --------------------------------------------------------------------------
// Adjacent rows of S = run / V whole 16-byte vectors (S a power of two), input 16-byte aligned:
// the input is one flat array of out_numel * S vectors. No per-output offset arithmetic: about
// two thirds of the registers of rows-group, so more loads in flight per SM (rows of 64 f32:
// rows-group 69 %, rows-dense 96 % of the read ceiling).
//   kM == 1 (S <= 32): thread tid loads vectors tid, tid + threads, ... (kDenseLoadsInFlight at
//     a time: every warp reads 512 contiguous bytes per load); vector i belongs to output i / S,
//     and the S lanes of a row combine in a shuffle tree.
//   kM > 1 (S == 32 * kM): a warp per row; lane l loads vectors l, l + 32, ... of its row
//     (kDenseLoadsInFlight / kM rows at a time), then a full-warp shuffle tree.
template <ReduceOp Op, class T, int kM>
__global__ void __launch_bounds__(tuning::kTensorThreads) rows_dense_kernel(const __grid_constant__ Launch a) {
  using Spec = spec_t<Op, T>;
  using A = typename Spec::accum_type;
  const Spec spec{};
  const auto f = spec.combine;
  constexpr int V = Vec16<T>::kCount;
  const Vec16<T>* in = static_cast<const Vec16<T>*>(a.in);
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t out_stride = a.kept.out[0], out2_stride = a.kept.out2[0];
  if constexpr (kM == 1) {
    constexpr int U = tuning::kDenseLoadsInFlight;
    const int shift = a.group_shift;  // S = 1 << shift vectors per row
    const std::int64_t total = a.out_numel << shift;
    for (std::int64_t i0 = tid; i0 - lane < total; i0 += U * threads) {  // warp-uniform
      Raw16 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t i = i0 + u * threads;
        if (i < total) v[u] = load_streaming(reinterpret_cast<const Raw16*>(in + i));
      }
      after_all_loads(v, static_cast<unsigned>(static_cast<std::uint64_t>(total) >> 62));
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t i = i0 + u * threads;
        const std::int64_t pos0 = (i & ((std::int64_t{1} << shift) - 1)) * V;
        fold_t<Op, T> fold(spec);
        if (i < total) {
#pragma unroll
          for (int e = 0; e < V; ++e) fold.add(spec, raw_element<T>(v[u], e), pos0 + e);
        }
        A acc = fold.result(spec, i < total ? pos0 : -1);
        for (int d = (1 << shift) >> 1; d > 0; d >>= 1) acc = f(acc, shfl_down_any(acc, static_cast<unsigned>(d)));
        if (i < total && pos0 == 0) {
          const std::int64_t o = i >> shift;
          write_result<Op, T>(a, spec, acc, o * out_stride, o * out2_stride, [&](std::int64_t p) { return o * a.run + p; });
        }
      }
    }
  } else {
    constexpr int R = tuning::kDenseLoadsInFlight / kM;  // rows per pass
    constexpr int S = 32 * kM;
    const std::int64_t warp = tid >> 5, warps = threads >> 5;
    for (std::int64_t o0 = warp; o0 < a.out_numel; o0 += R * warps) {  // warp-uniform
      Raw16 v[R * kM];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const std::int64_t o = o0 + r * warps;
#pragma unroll
        for (int m = 0; m < kM; ++m)
          if (o < a.out_numel) v[r * kM + m] = load_streaming(reinterpret_cast<const Raw16*>(in + o * S + m * 32 + lane));
      }
      after_all_loads(v, static_cast<unsigned>(static_cast<std::uint64_t>(a.out_numel) >> 62));
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const std::int64_t o = o0 + r * warps;
        fold_t<Op, T> fold(spec);
        if (o < a.out_numel) {
#pragma unroll
          for (int m = 0; m < kM; ++m) {
#pragma unroll
            for (int e = 0; e < V; ++e) fold.add(spec, raw_element<T>(v[r * kM + m], e), (m * 32 + lane) * V + e);
          }
        }
        A acc = fold.result(spec, o < a.out_numel ? lane * V : -1);
        acc = warp_reduce(acc, f);
        if (lane == 0 && o < a.out_numel)
          write_result<Op, T>(a, spec, acc, o * out_stride, o * out2_stride, [&](std::int64_t p) { return o * a.run + p; });
      }
    }
  }
}

// ---- rows-group --------------------------------------------------------------------------
// kVec: every run starts 16-byte aligned and holds whole vectors; else element by element.
template <ReduceOp Op, class T, bool kVec>
__global__ void __launch_bounds__(tuning::kTensorThreads, tuning::kTensorMinBlocksPerSm) rows_group_kernel(const __grid_constant__ Launch a) {
  using Spec = spec_t<Op, T>;
  using A = typename Spec::accum_type;
  const Spec spec{};
  const auto f = spec.combine;
  constexpr int V = kVec ? Vec16<T>::kCount : 1;
  constexpr bool kArg = Op == ReduceOp::argmin || Op == ReduceOp::argmax;
  constexpr int K = kArg ? tuning::kRowsArgOutputsPerGroup : tuning::kRowsOutputsPerGroup;
  using Chunk = std::conditional_t<kVec, Raw16, T>;
  const T* in = static_cast<const T*>(a.in);
  const int G = 1 << a.group_shift;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int gl = lane & (G - 1);
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t group = tid >> a.group_shift;
  const std::int64_t groups = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) >> a.group_shift;
  const std::int64_t warp_group = (tid - lane) >> a.group_shift;  // the warp's first group: a warp-uniform loop
  const std::int64_t slots = a.reduce_numel / V;

  for (std::int64_t pass = 0; warp_group + pass * K * groups < a.out_numel; ++pass) {
    std::int64_t o[K];
    std::int64_t in_off[K];  // the output offsets are recomputed at the end (fewer live registers)
    using Fold = fold_t<Op, T>;
    Fold fold[K];
#pragma unroll
    for (int k = 0; k < K; ++k) fold[k] = Fold(spec);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      o[k] = group + (pass * K + k) * groups;
      in_off[k] = o[k] < a.out_numel ? dims_offsets(a.kept, o[k]).in : 0;
    }
    for (std::int64_t s = gl; s < slots; s += G) {
      const std::int64_t pos0 = s * V;
      const std::int64_t roff = rows_offset(a, pos0);
      Chunk c[K];
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if (o[k] < a.out_numel) {
          if constexpr (kVec) c[k] = load_raw(in + in_off[k] + roff);
          else c[k] = load_one(in + in_off[k] + roff);
        }
      }
      if constexpr (kVec) after_all_loads(c, static_cast<unsigned>(static_cast<std::uint64_t>(slots) >> 62));
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if (o[k] < a.out_numel) {
          if constexpr (kVec) {
#pragma unroll
            for (int e = 0; e < V; ++e) fold[k].add(spec, raw_element<T>(c[k], e), pos0 + e);
          } else {
            fold[k].add(spec, c[k], pos0);
          }
        }
      }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      A acc = fold[k].result(spec, gl < slots ? gl * V : -1);
      for (int d = G >> 1; d > 0; d >>= 1) acc = f(acc, shfl_down_any(acc, static_cast<unsigned>(d)));
      if (gl == 0 && o[k] < a.out_numel) {
        const Offsets off = dims_offsets(a.kept, o[k]);
        write_result<Op, T>(a, spec, acc, off.out, off.out2, [&](std::int64_t p) { return off.in + rows_offset(a, p); });
      }
    }
  }
}

// ---- rows-block --------------------------------------------------------------------------
// Block b reduces chunk (b % chunks) of output (b / chunks): a contiguous range of its vector
// slots. With chunks > 1 every block leaves its partial in the workspace and the last block of
// an output folds the partials in chunk order.
template <ReduceOp Op, class T, bool kVec>
__global__ void __launch_bounds__(tuning::kTensorThreads, tuning::kTensorMinBlocksPerSm) rows_block_kernel(const __grid_constant__ Launch a) {
  using Spec = spec_t<Op, T>;
  using A = typename Spec::accum_type;
  const Spec spec{};
  const auto f = spec.combine;
  constexpr int V = kVec ? Vec16<T>::kCount : 1;
  constexpr int U = tuning::kLoadsInFlight;
  using Chunk = std::conditional_t<kVec, Raw16, T>;
  __shared__ BlockReduceStorage<A> storage;
  __shared__ bool last_block;
  const T* in = static_cast<const T*>(a.in);
  const std::int64_t o = blockIdx.x / a.chunks;
  const std::int64_t chunk = blockIdx.x - o * a.chunks;
  const Offsets off = dims_offsets(a.kept, o);
  const std::int64_t slots = a.reduce_numel / V;
  const std::int64_t per_chunk = (slots + a.chunks - 1) / a.chunks;
  const std::int64_t s_begin = chunk * per_chunk;
  const std::int64_t s_end = s_begin + per_chunk < slots ? s_begin + per_chunk : slots;
  const std::int64_t threads = blockDim.x;
  // One reduced dim outside the run and fewer than 2^32 slots: 32-bit division for the run
  // instead of the 64-bit one in rows_offset.
  const bool fast = a.red.rank == 1 && slots < (std::int64_t{1} << 32);
  const auto run_vectors = static_cast<std::uint32_t>(a.run / V);
  auto fast_offset = [&](std::int64_t s) {
    const std::uint32_t r = static_cast<std::uint32_t>(s) / run_vectors;
    return r * a.red.in[0] + (s - static_cast<std::int64_t>(r) * run_vectors) * V;
  };

  fold_t<Op, T> fold(spec);
  for (std::int64_t s0 = s_begin + threadIdx.x; s0 < s_end; s0 += U * threads) {
    Chunk c[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t s = s0 + u * threads;
      if (s < s_end) {
        const std::int64_t roff = off.in + (fast ? fast_offset(s) : rows_offset(a, s * V));
        if constexpr (kVec) c[u] = load_raw(in + roff);
        else c[u] = load_one(in + roff);
      }
    }
    if constexpr (kVec) after_all_loads(c, static_cast<unsigned>(static_cast<std::uint64_t>(slots) >> 62));
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t s = s0 + u * threads;
      if (s < s_end) {
        if constexpr (kVec) {
#pragma unroll
          for (int e = 0; e < V; ++e) fold.add(spec, raw_element<T>(c[u], e), s * V + e);
        } else {
          fold.add(spec, c[u], s);
        }
      }
    }
  }
  A acc = block_reduce(fold.result(spec, s_begin + threadIdx.x < s_end ? (s_begin + threadIdx.x) * V : -1), f,
                       spec.identity(), storage);
  auto value_at = [&](std::int64_t p) { return off.in + rows_offset(a, p); };
  if (a.chunks == 1) {
    if (threadIdx.x == 0) write_result<Op, T>(a, spec, acc, off.out, off.out2, value_at);
    return;
  }
  unsigned* counters = static_cast<unsigned*>(a.ws);
  A* partials = reinterpret_cast<A*>(static_cast<char*>(a.ws) + a.partials_offset) + o * a.chunks;
  if (threadIdx.x == 0) {
    partials[chunk] = acc;
    __threadfence();
    last_block = atomicAdd(counters + o, 1u) == static_cast<unsigned>(a.chunks - 1);
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  A total = spec.identity();
#pragma unroll 4
  for (std::int64_t c = threadIdx.x; c < a.chunks; c += threads) total = f(total, load_partial(partials + c));
  __syncthreads();  // storage is reused
  total = block_reduce(total, f, spec.identity(), storage);
  for (std::int64_t c = threadIdx.x; c < a.chunks; c += threads) zero_partial(partials + c);
  if (threadIdx.x == 0) {
    counters[o] = 0u;
    write_result<Op, T>(a, spec, total, off.out, off.out2, value_at);
  }
}

// ---- outer -------------------------------------------------------------------------------
// Block b: column tile (b % col_tiles), split ((b / col_tiles) % chunks), batch (the rest).
// Thread (tx, ty) = (threadIdx.x % TX, threadIdx.x / TX) folds the V columns of column vector
// (tile * TX + tx) over reduced positions split_begin + ty, + TY, ...; the TY partials of a
// column then combine in a fixed tree in shared memory.
template <ReduceOp Op, class T, bool kVec>
__global__ void __launch_bounds__(tuning::kTensorThreads, (Op == ReduceOp::argmin || Op == ReduceOp::argmax) && sizeof(T) == 4 ? 2 : tuning::kTensorMinBlocksPerSm) outer_kernel(const __grid_constant__ Launch a) {
  using Spec = spec_t<Op, T>;
  using A = typename Spec::accum_type;
  const Spec spec{};
  const auto f = spec.combine;
  constexpr int V = kVec ? Vec16<T>::kCount : 1;
  constexpr int U = tuning::kLoadsInFlight;
  using Chunk = std::conditional_t<kVec, Raw16, T>;
  __shared__ A tree[tuning::kTensorThreads][V];
  __shared__ bool last_block;
  const T* in = static_cast<const T*>(a.in);
  const int TX = 1 << a.tx_shift;
  const int TY = tuning::kTensorThreads >> a.tx_shift;
  const int tx = static_cast<int>(threadIdx.x) & (TX - 1);
  const int ty = static_cast<int>(threadIdx.x) >> a.tx_shift;
  const std::int64_t tile = blockIdx.x % a.col_tiles;
  const std::int64_t rest = blockIdx.x / a.col_tiles;
  const std::int64_t split = rest % a.chunks;
  const std::int64_t batch = rest / a.chunks;
  const Offsets boff = dims_offsets(a.kept, batch);
  const std::int64_t colv = tile * TX + tx;
  const std::int64_t col0 = colv * V;
  const bool active = col0 < a.cols;
  const std::int64_t R = a.reduce_numel;
  const std::int64_t per_split = (R + a.chunks - 1) / a.chunks;
  const std::int64_t r_begin = split * per_split;
  const std::int64_t r_end = r_begin + per_split < R ? r_begin + per_split : R;
  const T* base = in + boff.in + col0;

  A acc[V];
  if (active) {
    fold_t<Op, T> fold[V];
#pragma unroll
    for (int e = 0; e < V; ++e) fold[e] = fold_t<Op, T>(spec);
    // Positions r0, r0 + TY, ... (U of them loaded together), at input offsets given by
    // offset_of: one reduced dim (the common case) walks a pointer, several take the odometer.
    auto sweep = [&](auto offset_of, auto loads) {
      constexpr int kU = decltype(loads)::value;
      for (std::int64_t r0 = r_begin + ty; r0 < r_end; r0 += kU * TY) {
        Chunk c[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) {
          const std::int64_t r = r0 + u * TY;
          if (r < r_end) {
            const T* p = base + offset_of(r);
            if constexpr (kVec) c[u] = load_raw(p);
            else c[u] = load_one(p);
          }
        }
        if constexpr (kVec) after_all_loads(c, static_cast<unsigned>(static_cast<std::uint64_t>(R) >> 62));
#pragma unroll
        for (int u = 0; u < kU; ++u) {
          const std::int64_t r = r0 + u * TY;
          if (r < r_end) {
            if constexpr (kVec) {
#pragma unroll
              for (int e = 0; e < V; ++e) fold[e].add(spec, raw_element<T>(c[u], e), r);
            } else {
              fold[0].add(spec, c[u], r);
            }
          }
        }
      }
    };
    if (a.red.rank == 1) {
      const std::int64_t stride = a.red.in[0];
      // argmin/argmax and 2-byte types (8 columns per vector) keep U: their folds with 8 loads
      // spilled 170-750 bytes.
      constexpr bool kFew = sizeof(T) == 2;
      sweep([&](std::int64_t r) { return r * stride; }, std::integral_constant<int, kFew ? U : tuning::kOuterLoadsInFlight>{});
    } else {
      sweep([&](std::int64_t r) { return dims_in_offset(a.red, r); }, std::integral_constant<int, U>{});
    }
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = fold[e].result(spec, r_begin + ty < r_end ? r_begin + ty : -1);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = spec.identity();
  }
  // The fixed tree over ty: ty with ty + stride, lower on the left.
  auto tree_reduce = [&]() {
#pragma unroll
    for (int e = 0; e < V; ++e) tree[threadIdx.x][e] = acc[e];
    for (int stride = TY >> 1; stride > 0; stride >>= 1) {
      __syncthreads();
      if (ty < stride) {
#pragma unroll
        for (int e = 0; e < V; ++e) {
          acc[e] = f(acc[e], tree[threadIdx.x + stride * TX][e]);
          tree[threadIdx.x][e] = acc[e];
        }
      }
    }
  };
  tree_reduce();
  auto write_columns = [&]() {
    if (ty != 0 || !active) return;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const std::int64_t col = col0 + e;
      if (col < a.cols)
        write_result<Op, T>(a, spec, acc[e], boff.out + col * a.col_out, boff.out2 + col * a.col_out2,
                            [&](std::int64_t p) { return boff.in + col + dims_in_offset(a.red, p); });
    }
  };
  if (a.chunks == 1) {
    write_columns();
    return;
  }
  // Split: partial of (batch, tile, split) = TX * V accumulators; the last split folds them.
  const std::int64_t group = batch * a.col_tiles + tile;
  const int width = TX * V;
  unsigned* counters = static_cast<unsigned*>(a.ws);
  A* partials = reinterpret_cast<A*>(static_cast<char*>(a.ws) + a.partials_offset) + group * a.chunks * width;
  if (ty == 0) {
#pragma unroll
    for (int e = 0; e < V; ++e) partials[split * width + tx * V + e] = acc[e];
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last_block = atomicAdd(counters + group, 1u) == static_cast<unsigned>(a.chunks - 1);
  __syncthreads();
  if (!last_block) return;
  __threadfence();
#pragma unroll
  for (int e = 0; e < V; ++e) acc[e] = spec.identity();
#pragma unroll 4
  for (std::int64_t sp = ty; sp < a.chunks; sp += TY) {  // unrolled: several partials in flight
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = f(acc[e], load_partial(partials + sp * width + tx * V + e));
  }
  __syncthreads();  // the tree is reused
  tree_reduce();
  for (std::int64_t sp = ty; sp < a.chunks; sp += TY) {
#pragma unroll
    for (int e = 0; e < V; ++e) zero_partial(partials + sp * width + tx * V + e);
  }
  if (threadIdx.x == 0) counters[group] = 0u;
  write_columns();
}

// ---- generic -----------------------------------------------------------------------------
// One warp per output (grid-stride): lane l folds positions l, l + 32, ... (an odometer over
// the reduced dims advanced 32 positions at a time), then a fixed shuffle tree.
template <ReduceOp Op, class T>
__global__ void __launch_bounds__(tuning::kTensorThreads) generic_kernel(const __grid_constant__ Launch a) {
  using Spec = BuiltinReduceSpec<Op, T>;  // any row length: {value, int64 index} for arg ops
  using A = typename Spec::accum_type;
  const Spec spec{};
  const auto f = spec.combine;
  const T* in = static_cast<const T*>(a.in);
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const std::int64_t warp0 = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) >> 5;
  const int inner = a.red.rank - 1;  // a.red.rank >= 1

  for (std::int64_t o = warp0; o < a.out_numel; o += warps) {  // warp-uniform loop
    const Offsets off = dims_offsets(a.kept, o);
    A acc = spec.identity();
    if (lane < a.reduce_numel) {
      std::int64_t idx[kMaxRank];
      std::int64_t roff = 0;
      {
        std::int64_t r = lane;
        for (int d = inner; d >= 0; --d) {
          idx[d] = r % a.red.size[d];
          r /= a.red.size[d];
          roff += idx[d] * a.red.in[d];
        }
      }
      for (std::int64_t pos = lane;;) {
        acc = f(acc, spec.from_element(in[off.in + roff], pos));
        pos += 32;
        if (pos >= a.reduce_numel) break;
        idx[inner] += 32;
        roff += 32 * a.red.in[inner];
        for (int d = inner; d > 0 && idx[d] >= a.red.size[d]; --d) {
          const std::int64_t q = idx[d] / a.red.size[d];
          idx[d] -= q * a.red.size[d];
          roff -= q * a.red.size[d] * a.red.in[d];
          idx[d - 1] += q;
          roff += q * a.red.in[d - 1];
        }
      }
    }
    acc = warp_reduce(acc, f);
    if (lane == 0)
      write_result<Op, T>(a, spec, acc, off.out, off.out2, [&](std::int64_t p) { return off.in + dims_in_offset(a.red, p); });
  }
}

}  // namespace foldkit::cuda::tensor
