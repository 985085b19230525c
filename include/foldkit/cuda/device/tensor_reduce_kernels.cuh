// The kernel families of the CUDA tensor reductions (issue #22), one per canonical shape of the
// plan (foldkit/detail/reduce_plan.hpp). Host side: src/cuda/tensor_reduce.cu picks the family
// and the launch shape (constants: foldkit/cuda/tuning/tensor_reduce_tuning.hpp); installed
// because the user-functor path (foldkit/cuda/tensor_reduce_custom.cuh) compiles them too.
//
// Every kernel is templated on a policy P (tensor_reduce_ops.cuh): a built-in op
// (BuiltinTensorOp<Op, T>: an empty spec built in the kernel) or a user functor
// (CustomTensorOp<T, F>: the spec read from the kernel's one __grid_constant__ parameter).
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
//   outer-flat   outer with rows of 1-8 vectors back to back (one batch, one reduced dim, not
//                argmin/argmax): the input read as one flat array of vectors, partials through
//                flagged slots to the block that started last.
//   generic      anything else: one warp per output, odometer over the reduced dims.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "foldkit/cuda/block/block_reduce.cuh"
#include "foldkit/cuda/device/flagged_slot.cuh"
#include "foldkit/cuda/device/reduce_full_kernel.cuh"
#include "foldkit/cuda/device/reduce_spec.cuh"
#include "foldkit/cuda/device/reduce_trace.cuh"
#include "foldkit/cuda/device/tensor_reduce_args.hpp"
#include "foldkit/cuda/device/tensor_reduce_ops.cuh"
#include "foldkit/cuda/device/vector_load.cuh"
#include "foldkit/cuda/tuning/tensor_reduce_tuning.hpp"
#include "foldkit/cuda/warp/warp_reduce.cuh"
#include "foldkit/cuda/warp/warp_shuffle.cuh"
#include "foldkit/ops.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit::cuda::tensor {

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
// Built-in accumulators are whole words; a user functor's half or bfloat16 is one 16-bit load.
template <class A>
__device__ __forceinline__ A load_partial(const A* p) {
  static_assert(sizeof(A) % 4 == 0 || sizeof(A) == 2, "accumulators are whole words, or 16-bit");
  A a;
  if constexpr (sizeof(A) % 4 == 0) {
    constexpr int kWords = sizeof(A) / 4;
    unsigned w[kWords];
#pragma unroll
    for (int k = 0; k < kWords; ++k) w[k] = __ldcg(reinterpret_cast<const unsigned*>(p) + k);
    memcpy(&a, w, sizeof(A));
  } else {
    const unsigned short h = __ldcg(reinterpret_cast<const unsigned short*>(p));
    memcpy(&a, &h, sizeof(A));
  }
  return a;
}

template <class A>
__device__ __forceinline__ void zero_partial(A* p) {
  if constexpr (sizeof(A) % 4 == 0) {
    constexpr int kWords = sizeof(A) / 4;
#pragma unroll
    for (int k = 0; k < kWords; ++k) reinterpret_cast<unsigned*>(p)[k] = 0u;
  } else {
    *reinterpret_cast<unsigned short*>(p) = 0u;
  }
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

// Folds one round of loads, c[u] at positions p0 + u * step (those with valid(u)), in order,
// through add(chunk, position), once every load of the round is issued (after_all_loads: for
// vectors, no fold may start before the round's last load has left). The rows-block and outer
// kernels' loops share it.
template <bool kVec, class Chunk, int kU, class Valid, class Add>
__device__ __forceinline__ void fold_round(Chunk (&c)[kU], unsigned zero, std::int64_t p0, std::int64_t step,
                                           Valid valid, Add add) {
  if constexpr (kVec) after_all_loads(c, zero);
#pragma unroll
  for (int u = 0; u < kU; ++u)
    if (valid(u)) add(c[u], p0 + u * step);
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
template <class P, class Spec, class ValueAt>
__device__ __forceinline__ void write_result(const Launch& a, const Spec& spec, typename Spec::accum_type acc,
                                             std::int64_t out_off, std::int64_t out2_off, ValueAt value_at) {
  using T = typename P::value_type;
  if constexpr (P::kArg) {
    const std::int64_t index = arg_index(spec, acc);
    static_cast<std::int64_t*>(a.out)[out_off] = index;
    if (a.out2 != nullptr) static_cast<T*>(a.out2)[out2_off] = static_cast<const T*>(a.in)[value_at(index)];
  } else {
    static_cast<typename P::result_type*>(a.out)[out_off] = spec.finalize(acc, a.reduce_numel, nullptr);
  }
}

// ---- rows-packed -------------------------------------------------------------------------
// Rows of a.run < V elements, adjacent (kept: one dim of input stride a.run), input 16-byte
// aligned, V % a.run == 0. Thread i reduces the V / run rows of vector i. kRun == a.run (2 or 4):
// with the run a runtime value, the element picks indexed the loaded vectors at run time, which
// put them in local memory (a 64-byte stack frame): bf16 rows of 4 at 62 % of the read ceiling.
template <class P, int kRun>
__global__ void __launch_bounds__(tuning::kTensorThreads) rows_packed_kernel(const __grid_constant__ typename P::Args a) {
  using T = typename P::value_type;
  using Spec = typename P::Spec;
  using A = typename Spec::accum_type;
  const Spec spec = P::spec(a);
  const auto f = spec.combine;
  constexpr int V = Vec16<T>::kCount;
  constexpr int run = kRun;
  constexpr int per_vec = V / run;
  static_assert(per_vec >= 2 && V % run == 0, "rows-packed: several whole rows per vector");
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
#pragma unroll
      for (int r = 0; r < per_vec; ++r) {
        A acc = spec.identity();
#pragma unroll
        for (int e = 0; e < run; ++e) acc = f(acc, spec.from_element(raw_element<T>(v[k], r * run + e), e));
        const std::int64_t o = i * per_vec + r;
        write_result<P>(a, spec, acc, o * out_stride, o * out2_stride, [&](std::int64_t p) { return o * run + p; });
      }
    }
  }
  // The last rows that do not fill a vector: one thread each.
  const std::int64_t o = vectors * per_vec + tid;
  if (o < a.out_numel) {
    A acc = spec.identity();
    for (int e = 0; e < run; ++e) acc = f(acc, spec.from_element(in[o * run + e], e));
    write_result<P>(a, spec, acc, o * out_stride, o * out2_stride, [&](std::int64_t p) { return o * run + p; });
  }
}

// ---- rows-dense --------------------------------------------------------------------------
// Adjacent rows of S = run / V whole 16-byte vectors (S a power of two), input 16-byte aligned:
// the input is one flat array of out_numel * S vectors. No per-output offset arithmetic: about
// two thirds of the registers of rows-group, so more loads in flight per SM (rows of 64 f32:
// rows-group 69 %, rows-dense 96 % of the read ceiling).
//   kM == 1 (S <= 32): thread tid loads vectors tid, tid + threads, ... (kDenseLoadsInFlight at
//     a time: every warp reads 512 contiguous bytes per load); vector i belongs to output i / S,
//     and the S lanes of a row's group reduce the U rows of their loads together, sharing them
//     out (group_reduce_scatter: U - 1 shuffles of a value a lane for the first min(log2 S, 3)
//     levels, not a tree per load).
//   kM > 1 (S == G * M, G = 8, 16 or 32 lanes per row, M = kM, or for kM == 8 any multiple
//     of 8): lane l of a row's G loads vectors l, l + G, ... of its row (kDenseLoadsInFlight at
//     a time: 8 / kM rows, or 8 of a longer row's M), then a shuffle tree over the G lanes.
template <class P, int kM>
__global__ void __launch_bounds__(tuning::kTensorThreads) rows_dense_kernel(const __grid_constant__ typename P::Args a) {
  using T = typename P::value_type;
  using Spec = typename P::Spec;
  using A = typename Spec::accum_type;
  const Spec spec = P::spec(a);
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
      A acc[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t i = i0 + u * threads;
        const std::int64_t pos0 = (i & ((std::int64_t{1} << shift) - 1)) * V;
        typename P::Fold fold(spec);
        if (i < total) {
#pragma unroll
          for (int e = 0; e < V; ++e) fold.add(spec, raw_element<T>(v[u], e), pos0 + e);
        }
        acc[u] = fold.result(spec, i < total ? pos0 : -1);
      }
      // Load u of every lane of a row's group is the same row: the group's lanes share out the
      // U rows while reducing them (a shuffle tree per load cost 2 levels x 8 loads of argmax
      // (value, position) a round for rows of 16 f32: 72.6 % of the read ceiling, H200).
      const int h = group_reduce_scatter(acc, 1 << shift, f);
      const int place = lane & ((1 << shift) - 1);  // the lane's place in its row's group
      if ((place >> h) == 0) {  // the lanes holding distinct rows write them
#pragma unroll
        for (int j = 0; j < U; ++j) {
          if (j < (U >> h)) {
            const std::int64_t i = i0 + static_cast<std::int64_t>((j << h) + place) * threads;
            if (i < total) {
              const std::int64_t o = i >> shift;
              write_result<P>(a, spec, acc[j], o * out_stride, o * out2_stride, [&](std::int64_t p) { return o * a.run + p; });
            }
          }
        }
      }
    }
  } else {
    // G = 1 << a.group_shift lanes per row (8, 16 or 32: every load instruction reads whole
    // 128-byte lines), 32 / G rows side by side in a warp; kM < 8: R = 8 / kM rows per lane per
    // round of loads; kM == 8: one row per round, its M = a.chunks (a multiple of 8) vectors per
    // lane read in M / 8 rounds.
    constexpr int U = tuning::kDenseLoadsInFlight;
    constexpr int R = kM >= U ? 1 : U / kM;
    static_assert(kM <= U, "rows-dense reads at most kDenseLoadsInFlight vectors per lane per round");
    const int gshift = a.group_shift;
    const int G = 1 << gshift;
    const int gl = lane & (G - 1);
    const std::int64_t M = kM < U ? kM : a.chunks;
    const std::int64_t S = M << gshift;
    const std::int64_t warp = tid >> 5, warps = threads >> 5;
    const std::int64_t rows_per_warp = 32 >> gshift;
    const std::int64_t row_step = warps * rows_per_warp;  // between a lane's rows r and r + 1
    for (std::int64_t w0 = warp * rows_per_warp; w0 < a.out_numel; w0 += R * row_step) {  // warp-uniform
      const std::int64_t o0 = w0 + (lane >> gshift);
      using Fold = typename P::Fold;
      Fold fold[R];
#pragma unroll
      for (int r = 0; r < R; ++r) fold[r] = Fold(spec);
      for (std::int64_t m0 = 0; m0 < M; m0 += kM) {
        Raw16 v[R * kM];
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const std::int64_t o = o0 + r * row_step;
#pragma unroll
          for (int m = 0; m < kM; ++m)
            if (o < a.out_numel) v[r * kM + m] = load_streaming(reinterpret_cast<const Raw16*>(in + o * S + ((m0 + m) << gshift) + gl));
        }
        after_all_loads(v, static_cast<unsigned>(static_cast<std::uint64_t>(a.out_numel) >> 62));
#pragma unroll
        for (int r = 0; r < R; ++r) {
          if (o0 + r * row_step < a.out_numel) {
#pragma unroll
            for (int m = 0; m < kM; ++m) {
              const std::int64_t pos0 = (((m0 + m) << gshift) + gl) * V;
#pragma unroll
              for (int e = 0; e < V; ++e) fold[r].add(spec, raw_element<T>(v[r * kM + m], e), pos0 + e);
            }
          }
        }
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const std::int64_t o = o0 + r * row_step;
        A acc = fold[r].result(spec, o < a.out_numel ? gl * V : -1);
        acc = group_reduce(acc, G, f);
        if (gl == 0 && o < a.out_numel)
          write_result<P>(a, spec, acc, o * out_stride, o * out2_stride, [&](std::int64_t p) { return o * a.run + p; });
      }
    }
  }
}

// ---- rows-group --------------------------------------------------------------------------
// kVec: every run starts 16-byte aligned and holds whole vectors; else element by element.
template <class P, bool kVec>
__global__ void __launch_bounds__(tuning::kTensorThreads, tuning::kTensorMinBlocksPerSm) rows_group_kernel(const __grid_constant__ typename P::Args a) {
  using T = typename P::value_type;
  using Spec = typename P::Spec;
  using A = typename Spec::accum_type;
  const Spec spec = P::spec(a);
  const auto f = spec.combine;
  constexpr int V = kVec ? Vec16<T>::kCount : 1;
  constexpr bool kArg = P::kArg;
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
    using Fold = typename P::Fold;
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
      acc = group_reduce(acc, G, f);
      if (gl == 0 && o[k] < a.out_numel) {
        const Offsets off = dims_offsets(a.kept, o[k]);
        write_result<P>(a, spec, acc, off.out, off.out2, [&](std::int64_t p) { return off.in + rows_offset(a, p); });
      }
    }
  }
}

// ---- rows-block --------------------------------------------------------------------------
// Block b reduces chunk (b % chunks) of output (b / chunks): a contiguous range of its vector
// slots. With chunks > 1 every block leaves its partial in the workspace and the last block of
// an output folds the partials in chunk order.
// kContig (kVec and one contiguous run per output, a.red.rank == 0): a pointer walk without the
// general offset arithmetic, in fewer registers so that more blocks are resident
// (tuning::kRowsBlockContigMinBlocksPerSm): a block reads a row of 4096 f32 in one round of loads
// and then spends its block reduce idle, so resident blocks are what keeps bytes in flight.
template <class P, bool kVec, bool kContig = false>
__global__ void __launch_bounds__(tuning::kTensorThreads, tuning::rows_block_min_blocks(kContig, P::kArg))
    rows_block_kernel(const __grid_constant__ typename P::Args a) {
  static_assert(!kContig || kVec, "the contiguous pointer walk loads whole vectors");
  using T = typename P::value_type;
  using Spec = typename P::Spec;
  using A = typename Spec::accum_type;
  const Spec spec = P::spec(a);
  const auto f = spec.combine;
  constexpr int V = kVec ? Vec16<T>::kCount : 1;
  constexpr int U = tuning::kLoadsInFlight;
  constexpr int kStepLoads = tuning::kRowsBlockSteppedLoadsInFlight;
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

  typename P::Fold fold(spec);
  const auto zero = static_cast<unsigned>(static_cast<std::uint64_t>(slots) >> 62);  // see after_all_loads
  // Folds a round's loaded chunks c[u] (slots s0 + u * threads, those with valid(u)), in order.
  auto fold_loaded = [&](auto& c, std::int64_t s0, auto valid) {
    fold_round<kVec>(c, zero, s0, threads, valid, [&](const Chunk& x, std::int64_t s) {
      if constexpr (kVec) {
#pragma unroll
        for (int e = 0; e < V; ++e) fold.add(spec, raw_element<T>(x, e), s * V + e);
      } else {
        fold.add(spec, x, s);
      }
    });
  };
  // Runs of whole vectors that tile the block (threads a multiple of the run's vectors: runs of
  // 1-256 vectors), one reduced dim outside the run: a thread's place in its run never changes
  // and each of its loads is threads / run_vectors runs further, so the loop walks a pointer
  // (one 64-bit division a block instead of a 32-bit one and a 64-bit multiply a load).
  bool stepped = false;
  if constexpr (kVec && !kContig) {
    stepped = fast && run_vectors != 0 && threads % run_vectors == 0;
    if (stepped) {
      const std::int64_t s_first = s_begin + threadIdx.x;
      const std::int64_t run0 = s_first / run_vectors;
      const T* p = in + off.in + run0 * a.red.in[0] + (s_first - run0 * run_vectors) * V;
      const std::int64_t load_step = (threads / run_vectors) * a.red.in[0];
      std::int64_t s0 = s_first;
      for (; s0 + (kStepLoads - 1) * threads < s_end; s0 += kStepLoads * threads, p += kStepLoads * load_step) {
        Chunk c[kStepLoads];
#pragma unroll
        for (int u = 0; u < kStepLoads; ++u) c[u] = load_raw(p + u * load_step);
        fold_loaded(c, s0, [](int) { return true; });
      }
      if (s0 < s_end) {  // the last round, cut short by the chunk's end
        Chunk c[kStepLoads];
#pragma unroll
        for (int u = 0; u < kStepLoads; ++u)
          if (s0 + u * threads < s_end) c[u] = load_raw(p + u * load_step);
        fold_loaded(c, s0, [&](int u) { return s0 + u * threads < s_end; });
      }
    }
  }
  if (!stepped) {
    for (std::int64_t s0 = s_begin + threadIdx.x; s0 < s_end; s0 += U * threads) {
      Chunk c[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t s = s0 + u * threads;
        if (s < s_end) {
          const std::int64_t roff = off.in + (kContig ? s * V : fast ? fast_offset(s) : rows_offset(a, s * V));
          if constexpr (kVec) c[u] = load_raw(in + roff);
          else c[u] = load_one(in + roff);
        }
      }
      fold_loaded(c, s0, [&](int u) { return s0 + u * threads < s_end; });
    }
  }
  A acc = block_reduce(fold.result(spec, s_begin + threadIdx.x < s_end ? (s_begin + threadIdx.x) * V : -1), f,
                       spec.identity(), storage);
  auto value_at = [&](std::int64_t p) { return off.in + rows_offset(a, p); };
  if (a.chunks == 1) {
    if (threadIdx.x == 0) write_result<P>(a, spec, acc, off.out, off.out2, value_at);
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
    write_result<P>(a, spec, total, off.out, off.out2, value_at);
  }
}

// ---- outer -------------------------------------------------------------------------------
// Block b: column tile (b % col_tiles), split ((b / col_tiles) % chunks), batch (the rest).
// Thread (tx, ty) = (threadIdx.x % TX, threadIdx.x / TX) folds the V columns of column vector
// (tile * TX + tx) over reduced positions ty, + TY, ... of its split's rounds; the TY partials of
// a column then combine in a fixed tree in shared memory. A round is kU * TY consecutive reduced
// positions (kU loads a thread); split s takes rounds s, s + chunks, s + 2 * chunks, ..., so the
// grid reads one band of the input at a time, as the read ceiling's grid-stride loop does,
// rather than each block its own contiguous range. H200 (2026-11-28, A/B in one run, two runs
// each): sum over dim 0 of (2^24, 4) 91.2 -> 93.5 % of the read ceiling, (4096, 16384) 90.7 ->
// 92.1 %, argmax of (2^20, 64) 82.9 -> 83.6 %; no case slower. (Requires F commutative, as the
// CUDA tensor reductions do: a thread's positions are TY apart.)
// kSplit false: a launch of one split (chunks == 1) only, compiled without the combine (fewer
// registers: tuning::outer_kernel_min_blocks).
template <class P, bool kVec, bool kSplit = true>
__global__ void __launch_bounds__(tuning::kTensorThreads, tuning::outer_kernel_min_blocks<typename P::value_type>(P::kArg, kSplit))
    outer_kernel(const __grid_constant__ typename P::Args a) {
  using T = typename P::value_type;
  using Spec = typename P::Spec;
  using A = typename Spec::accum_type;
  const Spec spec = P::spec(a);
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
  const T* base = in + boff.in + col0;

  A acc[V];
  if (active) {
    typename P::Fold fold[V];
#pragma unroll
    for (int e = 0; e < V; ++e) fold[e] = typename P::Fold(spec);
    std::int64_t first_row = -1;  // this thread's first reduced position
    auto load_at = [&](const T* p) {
      if constexpr (kVec) return load_raw(p);
      else return load_one(p);
    };
    // Folds a round's loaded chunks c[u] (positions r0 + u * TY, those with valid(u)), in order.
    const auto zero = static_cast<unsigned>(static_cast<std::uint64_t>(R) >> 62);  // see after_all_loads
    auto fold_loaded = [&](auto& c, std::int64_t r0, auto valid) {
      fold_round<kVec>(c, zero, r0, TY, valid, [&](const auto& x, std::int64_t r) {
        if constexpr (kVec) {
#pragma unroll
          for (int e = 0; e < V; ++e) fold[e].add(spec, raw_element<T>(x, e), r);
        } else {
          fold[0].add(spec, x, r);
        }
      });
    };
    if (a.red.rank == 1) {
      // One reduced dim (the common case): a pointer walk, and the split's whole rounds (every
      // position inside the dim) with no test a load. Until 2026-11-28 each load computed
      // r * stride and tested r < R in 64 bits, reloading both parameters from the constant
      // bank: a round of the f32 argmax (8 loads, 32 elements) was 367 instructions (SASS,
      // sm_90), now 196, and its loads leave back to back.
      // kU: tuning::outer_loads_per_round (2-byte types keep U; the argmin/argmax of the other
      // types take 8 too: no outer kernel spills, ptxas sm_90, 2026-11-28).
      constexpr int kU = tuning::outer_loads_per_round(sizeof(T));
      const std::int64_t stride = a.red.in[0];
      const std::int64_t first = split * kU * TY + ty;
      first_row = first < R ? first : -1;
      const std::int64_t step = a.chunks * kU * TY;       // positions from one round to the split's next
      const std::int64_t whole_end = R - (kU - 1) * TY;   // r0 < whole_end: all kU positions exist
      const std::int64_t lane_step = TY * stride;
      const std::int64_t round_step = step * stride;
      const T* p = base + first * stride;
      std::int64_t r0 = first;
      for (; r0 < whole_end; r0 += step, p += round_step) {
        Chunk c[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) c[u] = load_at(p + u * lane_step);
        fold_loaded(c, r0, [](int) { return true; });
      }
      if (r0 < R) {  // the split's last round, cut short by the end of the dim
        Chunk c[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u)
          if (r0 + u * TY < R) c[u] = load_at(p + u * lane_step);
        fold_loaded(c, r0, [&](int u) { return r0 + u * TY < R; });
      }
    } else {
      // Several reduced dims: each position's offset from the odometer.
      first_row = split * U * TY + ty < R ? split * U * TY + ty : -1;
      for (std::int64_t r0 = split * U * TY + ty; r0 < R; r0 += a.chunks * U * TY) {
        Chunk c[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const std::int64_t r = r0 + u * TY;
          if (r < R) c[u] = load_at(base + dims_in_offset(a.red, r));
        }
        fold_loaded(c, r0, [&](int u) { return r0 + u * TY < R; });
      }
    }
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = fold[e].result(spec, first_row);
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
        write_result<P>(a, spec, acc[e], boff.out + col * a.col_out, boff.out2 + col * a.col_out2,
                            [&](std::int64_t p) { return boff.in + col + dims_in_offset(a.red, p); });
    }
  };
  if (!kSplit || a.chunks == 1) {
    write_columns();
    return;
  }
  // Split: partial of (batch, tile, split) = TX * V accumulators; the last split folds them.
  const std::int64_t group = batch * a.col_tiles + tile;
  const int width = TX * V;
  unsigned* counters = static_cast<unsigned*>(a.ws);
  // After a block has published its partials: whether it is the last of the group's splits to
  // arrive (the one that combines them; it then sees every split's partials).
  auto last_to_arrive = [&]() {
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last_block = atomicAdd(counters + group, 1u) == static_cast<unsigned>(a.chunks - 1);
    __syncthreads();
    if (last_block) __threadfence();
    return last_block;
  };
  if constexpr (outer_splits_meet_in_slots(P::kArg, sizeof(T))) {
    static_assert(std::is_same_v<A, unsigned long long>, "the slots hold PackedArgSpec's 64-bit keys");
    // argmin/argmax of 2- and 4-byte types: their 64-bit keys pick the extreme and its first
    // position whatever the order they meet in, so the splits combine by atomicMax into one
    // slot a column (argmin's keys complemented: 0, the zeroed workspace, is both identities)
    // and the last split reads the result with one load instead of folding chunks partials.
    unsigned long long* slots =
        reinterpret_cast<unsigned long long*>(static_cast<char*>(a.ws) + a.partials_offset) + group * width;
    constexpr bool kMax = Spec::kIsMax;
    if (ty == 0 && active) {
#pragma unroll
      for (int e = 0; e < V; ++e) atomicMax(slots + tx * V + e, kMax ? acc[e] : ~acc[e]);
    }
    if (!last_to_arrive()) return;
    if (ty == 0 && active) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const unsigned long long k = __ldcg(slots + tx * V + e);
        acc[e] = kMax ? k : ~k;
        slots[tx * V + e] = 0ull;
      }
    }
    if (threadIdx.x == 0) counters[group] = 0u;
    write_columns();
    return;
  }
  A* partials = reinterpret_cast<A*>(static_cast<char*>(a.ws) + a.partials_offset) + group * a.chunks * width;
  if (ty == 0) {
#pragma unroll
    for (int e = 0; e < V; ++e) partials[split * width + tx * V + e] = acc[e];
  }
  if (!last_to_arrive()) return;
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

// Column c's fold of part[c * G + g] over g = 0..G-1 (G a power of two, at most 32), lower g on
// the left in a fixed tree: thread t takes v = t, t + blockDim.x, ... (column v / G, group
// v % G), the G lanes of a column fold by shuffles, and emit(c, fold) runs in its group-0 lane.
// Against one thread per column folding G values in series: ~G shared-memory round trips less
// on the block's path to its slot. Every thread of the block must call it.
template <class A, class F, class Emit>
__device__ __forceinline__ void fold_column_groups(const A* part, int G, int C, F f, A identity, Emit emit) {
  const int total = G * C;
  for (int v0 = 0; v0 < total; v0 += static_cast<int>(blockDim.x)) {  // block-uniform
    const int v = v0 + static_cast<int>(threadIdx.x);
    A x = v < total ? part[v] : identity;
    x = group_reduce(x, G, f);
    if (v < total && (v & (G - 1)) == 0) emit(v / G, x);
  }
}

// ---- outer-flat --------------------------------------------------------------------------
// The outer family's common small case: one batch, one reduced dim whose positions are rows of
// a.cols contiguous columns lying back to back, a row W = 1 << a.tx_shift whole 16-byte vectors
// (W <= kOuterFlatMaxVectorsPerRow), blocks of kOuterFlatThreads. The input is then one flat array of vectors in which vector i holds the columns
// (i % W) * V .. + V - 1, and a thread whose vectors are W apart always folds the same columns:
// the grid reads it as the full-array reduction does (thread t: vectors t, t + S, ... with S
// the grid's threads, a multiple of W; kUnroll loads in flight), one fold per column lane. Then
// lanes of the same lane % W combine by shuffles (the lower lane on the left), the warps'
// column partials through shared memory in a fixed tree (fold_column_groups), and each block publishes its a.cols
// partials to flagged slots (flagged_slot.cuh). The block that started last (a start ticket,
// as in reduce_full_kernel) collects them in block order: thread (c, j) folds column c of
// blocks j, j + J, ..., then the J folds combine in a fixed tree. No fence and no arrival counter on
// the critical path (the outer kernel's split tail: (32768, 32) over dim 0 at 2.0x the read
// ceiling's time, its blocks living ~9k cycles against ~3.4k for a read kernel's).
template <class P, int kUnroll>
__global__ void __launch_bounds__(tuning::kOuterFlatThreads) outer_flat_kernel(const __grid_constant__ typename P::Args a) {
  static_assert(!P::kArg, "argmin/argmax keep the outer kernel (their fold needs positions)");
  using T = typename P::value_type;
  using Spec = typename P::Spec;
  using A = typename Spec::accum_type;
  constexpr int V = Vec16<T>::kCount;
  // Column partials, column-major (part[c * G + g]): the warps' (G = warps, C <= V *
  // kOuterFlatMaxVectorsPerRow), then the collector's (G = J <= blockDim.x / C). At most 4 KiB:
  // with 16 KiB here (rows of up to 32 vectors, blocks of up to 1024 threads) the kernel ran in
  // a 100 KiB shared-memory configuration against the read kernels' 8 KiB, and took ~2k cycles
  // longer than the full-array reduction (ncu) with as many cycles active.
  constexpr int kPart = tuning::kOuterFlatThreads / 32 * tuning::kOuterFlatMaxVectorsPerRow * V > tuning::kOuterFlatThreads
                            ? tuning::kOuterFlatThreads / 32 * tuning::kOuterFlatMaxVectorsPerRow * V
                            : tuning::kOuterFlatThreads;
  __shared__ A part[kPart];
  __shared__ bool is_collector;
  const Spec spec = P::spec(a);
  const auto f = spec.combine;
  const int W = 1 << a.tx_shift;
  const int C = W * V;  // == a.cols
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int warps = static_cast<int>(blockDim.x >> 5);
  unsigned* ticket = static_cast<unsigned*>(a.ws);
  FlaggedSlot<A>* slots = reinterpret_cast<FlaggedSlot<A>*>(static_cast<char*>(a.ws) + a.partials_offset);
  // Launched with programmatic dependent launch (dispatch/tensor_reduce_launch.cuh), as the
  // full-array reduction is: wait for the previous grid before touching memory.
  wait_for_prior_grid();
  if (threadIdx.x == 0) trace_point(spec, kTraceEntry);  // trace points: reduce_trace.cuh (probes only)
  unsigned start_ticket = 0;
  if (gridDim.x > 1 && threadIdx.x == 0) start_ticket = take_ticket(ticket);

  const std::int64_t vectors = a.reduce_numel << a.tx_shift;
  const Raw16* vin = static_cast<const Raw16*>(a.in);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const auto zero = static_cast<unsigned>(static_cast<std::uint64_t>(vectors) >> 62);  // see after_all_loads
  typename P::Fold fold[V];
#pragma unroll
  for (int e = 0; e < V; ++e) fold[e] = typename P::Fold(spec);
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += kUnroll * stride) {
    Raw16 c[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      // Clamped, not predicated (reduce_one_batch: a predicated load's copy waited for it).
      const std::int64_t k = i + u * stride;
      c[u] = load_streaming(vin + (k < vectors ? k : vectors - 1));
    }
    after_all_loads(c, zero);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i + u * stride < vectors) {
#pragma unroll
        for (int e = 0; e < V; ++e) fold[e].add(spec, raw_element<T>(c[u], e), 0);
      }
  }
  allow_next_grid();  // this thread has read its input
  trace_barrier(spec);
  if (threadIdx.x == 0) trace_point(spec, kTraceLoopDone);
  A acc[V];
#pragma unroll
  for (int e = 0; e < V; ++e) acc[e] = fold[e].result(spec, -1);
  // Lanes l and l + o (o = 16, 8, ..., W) hold the same columns: lanes 0..W-1 end with the warp's.
  for (int o = 16; o >= W; o >>= 1) {
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = f(acc[e], shfl_down_any(acc[e], static_cast<unsigned>(o)));
  }
  if (lane < W) {
#pragma unroll
    for (int e = 0; e < V; ++e) part[(lane * V + e) * warps + warp] = acc[e];
  }
  __syncthreads();
  const int t = static_cast<int>(threadIdx.x);
  auto write_column = [&](int c, A v) {
    write_result<P>(a, spec, v, c * a.col_out, c * a.col_out2, [](std::int64_t) { return std::int64_t{0}; });
  };
  if (gridDim.x == 1) {
    fold_column_groups(part, warps, C, f, spec.identity(), write_column);
    return;
  }
  fold_column_groups(part, warps, C, f, spec.identity(), [&](int c, A v) {
    publish_to_slot(slots + static_cast<std::int64_t>(blockIdx.x) * C + c, v);
  });
  if (t == 0) {
    trace_point(spec, kTraceReduced);
    is_collector = start_ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_collector) {
    if (t == 0) trace_flush(spec);
    return;
  }
  if (t == 0) trace_point(spec, kTraceCollectStart);

  // The collector: thread (c, j) = (t % C, t / C) folds column c of blocks j, j + J, ...
  const int J = ::min(static_cast<int>(blockDim.x) / C, 32);
  const int c = t % C, j = t / C;
  constexpr int kBatch = 8 / FlaggedSlot<A>::kWords;  // 8 words in flight per thread and round
  A total = spec.identity();
  if (j < J) {
    for (unsigned b0 = static_cast<unsigned>(j); b0 < gridDim.x; b0 += kBatch * J) {
      A p[kBatch];
      unsigned pending = 0;
#pragma unroll
      for (int k = 0; k < kBatch; ++k) {
        p[k] = spec.identity();
        if (b0 + k * J < gridDim.x) pending |= 1u << k;
      }
      poll_slots(pending, [&](int k) { return slots + static_cast<std::int64_t>(b0 + k * J) * C + c; }, p);
#pragma unroll
      for (int k = 0; k < kBatch; ++k) {
        total = f(total, p[k]);
        if (b0 + k * J < gridDim.x) clear_slot(slots + static_cast<std::int64_t>(b0 + k * J) * C + c);
      }
    }
    part[c * J + j] = total;  // every read of part[] above came before the last barrier
  }
  if (t == 0) {
    trace_point(spec, kTraceSeen0);
    *ticket = 0u;
  }
  __syncthreads();
  if (t == 0) trace_point(spec, kTraceAllSeen);
  fold_column_groups(part, J, C, f, spec.identity(), write_column);
  if (t == 0) {
    trace_point(spec, kTraceDone);
    trace_flush(spec);
  }
}

// ---- generic -----------------------------------------------------------------------------
// One warp per output (grid-stride): lane l folds positions l, l + 32, ... (an odometer over
// the reduced dims advanced 32 positions at a time), then a fixed shuffle tree.
template <class P>
__global__ void __launch_bounds__(tuning::kTensorThreads) generic_kernel(const __grid_constant__ typename P::Args a) {
  using T = typename P::value_type;
  using Spec = typename P::GenericSpec;  // any row length (built-in arg ops: {value, int64 index})
  using A = typename Spec::accum_type;
  const Spec spec = P::generic_spec(a);
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
      write_result<P>(a, spec, acc, off.out, off.out2, [&](std::int64_t p) { return off.in + dims_in_offset(a.red, p); });
  }
}

}  // namespace foldkit::cuda::tensor
