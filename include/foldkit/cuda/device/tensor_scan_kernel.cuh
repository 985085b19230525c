// The CUDA tensor scans' tile kernel (everything but the "rows-contiguous" plans, which are the
// core's blocked scan), written against a policy Spec (below): a matrix of R rows (the scanned axis) x C columns (the innermost kept
// dimension), repeated over the outer kept dimensions, any strides.
//
// Tiles. A block of 256 threads scans one tile of rows_per_tile x cols_per_tile elements
// (tuning/tensor_scan_tuning.hpp): the threads form TR x TC (TC along the columns); thread
// (tr, tc) owns `vec` consecutive columns of K consecutive rows. The tile is a row-major array of
// 16-byte chunks in shared memory (XOR-swizzled within groups of 8 chunks so that both the
// striped copies and the threads' own reads are free of bank conflicts):
//   1. copy in, striped (consecutive threads take consecutive chunks, i.e. consecutive columns of
//      a row, then the next row): 16-byte cp.async where a chunk is whole and aligned, else
//      element by element; positions outside the matrix hold the identity;
//   2. each thread folds its K rows per column, the threads' folds are scanned along TR (warp
//      shuffles, then one value per warp row through shared memory): every thread's prefix
//      within the tile, and the tile's aggregate per column;
//   3. warp 0 publishes the tile's aggregates, every thread writes its local scan (tile-local,
//      in the accumulator type) into shared memory, then the whole block looks back for the
//      tile's prefix (below);
//   4. store, striped: out = prefix op local (the prefix of the column: the look-back's, or init
//      for exclusive scans; none for the first row tile of an inclusive scan), coalesced, 16-byte
//      stores where a chunk is whole and aligned.
// Narrow matrices whose lines are 2 or 4 contiguous elements lying back to back (vec < 16 bytes,
// "flat" tiles): a thread owns whole rows, and a chunk holds several rows.
//
// Look-back (tiles of the same column tile along the scanned axis). A tile's index is a ticket
// drawn when its block starts (row tiles outer, column tiles inner), so a tile only waits for
// tiles whose blocks are running or done. Per tile the workspace holds two status words and,
// per column, the aggregate and the inclusive prefix, every 32-bit word of a value travelling
// with the call's flag in one 8-byte store (the core scan's tile-state convention,
// device/scan_tile_state.cuh: single-copy atomic, no fences; the same header and epochs, so a
// workspace can serve core scans and tensor scans alike). First the block loads, in one round, both
// values of every column of the newest predecessors within reach (tuning::tensor_scan_window_loads
// per thread; deep tiles); each column folds from its nearest inclusive prefix. When some column has none
// there, the stepped look-back runs: the block reads kThreads predecessors'
// status words at a time, finds the nearest one with an inclusive prefix whose newer ones all
// have aggregates (moving kThreads further back when all have aggregates only), then folds each
// column LEFT TO RIGHT: that inclusive prefix, then the newer aggregates oldest first, spinning
// on any value word whose flag has not landed yet. Whichever predecessor it stopped at, that is
// the left fold of all tile aggregates before the tile (and init), so every call gives the same
// bits. A matrix whose rows fit one tile has no look-back and no workspace.
//
// The policy (src/cuda/tensor_scan_kernel.cuh: the built-in ops, TileSpec<Op, T>;
// foldkit/cuda/tensor_scan_custom.cuh: a user functor, CustomTileSpec<T, F>) derives from
// TileShape<T, A> (the tile's constants, from the element and accumulator sizes alone) and gives:
//   T, A, O               input element, accumulator, output element
//   Args                  the kernel's one parameter: TileArgs, or a struct derived from it that
//                         also carries the functor
//   Fold, fold(args)      the combine: fold(A, A) -> A and fold.identity() (op(identity, x) == x
//                         bit for bit)
//   identity_input(fold)  the input element that loads as the identity (padding of partial tiles)
//   load(T) -> A, store(A) -> O
// Every combine has the earlier value on its left (the thread folds, the scans along TR, the
// look-back, prefix op local): F needs associativity, never commutativity.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "foldkit/cuda/device/scan_layout.hpp"
#include "foldkit/cuda/device/scan_tile_io.cuh"
#include "foldkit/cuda/device/scan_tile_state.cuh"
#include "foldkit/cuda/device/tensor_scan_trace.cuh"
#include "foldkit/cuda/device/tensor_scan_args.hpp"
#include "foldkit/cuda/tuning/tensor_scan_tuning.hpp"
#include "foldkit/cuda/warp/warp_shuffle.cuh"

namespace foldkit::cuda::tensor_scan {

static_assert(tuning::kTensorScanHeaderBytes == kScanHeaderBytes, "tensor scans share the core scan's header");

// The tile's constants for input elements of TIn and accumulators of Acc (every policy's base).
template <class TIn, class Acc>
struct TileShape {
  static constexpr int kThreads = tuning::kTensorScanThreads;
  static constexpr int kVc = 16 / static_cast<int>(sizeof(TIn));  // elements per input chunk
  static constexpr int kVa = 16 / static_cast<int>(sizeof(Acc));  // accumulators per chunk
  static constexpr bool kWide = sizeof(Acc) > sizeof(TIn);        // local scans need their own tile
  static constexpr int kAChunksPerIn = kVc / kVa;                  // 1 or 2
  static constexpr int kWords = (static_cast<int>(sizeof(Acc)) + 3) / 4;
  // Values the look-back gathers per round, all loads in flight at once (kLookbackScratch /
  // kThreads per thread): whole predecessors, at least one chained tile's width.
  static constexpr int kLookbackScratch = tuning::kTensorScanLookbackBytes / static_cast<int>(sizeof(Acc));
};

// Dynamic shared memory of one block: the input tile, the local-scan tile (kWide only), the warp
// rows' folds (kThreads * vec accumulators), the tile's per-column values (aggregate, then
// prefix), and the look-back's scratch (the values one round of loads brings, and the running
// prefix of each column of a chained tile).
template <class Spec, int kV>
constexpr int tile_max_cols() {
  return (kV < Spec::kVc ? 1 : tuning::kTensorScanMaxTC) * kV;
}
template <class Spec, int kV>
constexpr int tile_chain_max_cols() {
  return (kV < Spec::kVc ? 1 : tuning::kTensorScanChainTCLimit) * kV;
}
template <class Spec, int kV, int kIn>
constexpr std::size_t tile_smem_bytes() {
  constexpr std::size_t in_bytes = static_cast<std::size_t>(Spec::kThreads) * kIn * 16;
  static_assert(tile_chain_max_cols<Spec, kV>() <= Spec::kLookbackScratch);
  constexpr std::size_t accums = static_cast<std::size_t>(Spec::kThreads) * kV + tile_max_cols<Spec, kV>() +
                                 Spec::kLookbackScratch + tile_chain_max_cols<Spec, kV>();
  return in_bytes * (Spec::kWide ? 3 : 1) + accums * sizeof(typename Spec::A);
}
// Values per thread of the one-round (window) look-back: as many as the warp rows' folds and the
// look-back scratch hold together (both free by then), at most tuning::tensor_scan_window_loads.
template <class Spec, int kV, int kIn>
constexpr int window_loads() {
  constexpr int held = kV + Spec::kLookbackScratch / Spec::kThreads;
  constexpr int most = tuning::tensor_scan_window_loads(kIn, Spec::kWide, Spec::kWords);
  return held < most ? held : most;
}

// The chunk layout: chunk q lives at q ^ key(q), key constant over aligned groups of 8 chunks.
struct Swizzle {
  int gshift, tshift;
  __device__ __forceinline__ int operator()(int q) const { return q ^ (((q >> gshift) << tshift) & 7); }
};

// One flagged word (relaxed, so that a poll sees newer stores).
__device__ __forceinline__ unsigned long long load_word(const unsigned long long* p) {
  unsigned long long w[1];
  load_scan_slot<unsigned>(p, w);
  return w[0];
}

// Waits for a flagged value whose words were loaded into w (each word polled again until it
// carries `flag`), then writes the value to *dst.
template <class A, int kWords>
__device__ __forceinline__ void await_slot(const unsigned long long* slot, unsigned long long (&w)[kWords],
                                           unsigned flag, A* dst) {
  unsigned words[kWords];
#pragma unroll
  for (int q = 0; q < kWords; ++q) {
    while (static_cast<unsigned>(w[q] >> 32) != flag) w[q] = load_word(slot + q);
    words[q] = static_cast<unsigned>(w[q]);
  }
  memcpy(dst, words, sizeof(A));
}

// The element offsets of tile `t` (global index): input and output origin, valid rows and columns.
struct TileOrigin {  // trivial: it lives in shared memory
  std::int64_t in, out;
  int rows, cols;
  std::int64_t row_tile;
};
__device__ __forceinline__ TileOrigin tile_origin(const TileArgs& a, unsigned t, std::int64_t rows_per_tile,
                                                  std::int64_t cols_per_tile) {
  TileOrigin o{};
  // 32-bit divisions: each divisor is a factor of the tile count, which the planner keeps below
  // 2^31 (tensor_scan.cu). A 64-bit one is a called subroutine (~70 instructions a division and
  // remainder, SASS sm_90), run by one thread while the block waits at the barrier after it.
  // A/B on the H200 (2026-11-29): cumsum f32 over dim 0, 7 shapes, 0.989-0.998x the time.
  const unsigned col_tiles = static_cast<unsigned>(a.col_tiles), row_tiles = static_cast<unsigned>(a.row_tiles);
  const unsigned ct = t % col_tiles;
  unsigned rest = t / col_tiles;
  o.row_tile = rest % row_tiles;
  rest /= row_tiles;
  for (int d = a.outer_rank - 1; d >= 0; --d) {
    const unsigned size = static_cast<unsigned>(a.outer_size[d]);
    const std::int64_t i = rest % size;
    rest /= size;
    o.in += i * a.outer_in[d];
    o.out += i * a.outer_out[d];
  }
  const std::int64_t r0 = o.row_tile * rows_per_tile, c0 = static_cast<std::int64_t>(ct) * cols_per_tile;
  o.in += r0 * a.in_rs + c0 * a.in_cs;
  o.out += r0 * a.out_rs + c0 * a.out_cs;
  o.rows = static_cast<int>(a.rows - r0 < rows_per_tile ? a.rows - r0 : rows_per_tile);
  o.cols = static_cast<int>(a.cols - c0 < cols_per_tile ? a.cols - c0 : cols_per_tile);
  return o;
}

// kIn: 16-byte input chunks per thread (the tile's depth: tuning::kTensorScan*Chunks).
template <class Spec, int kV, int kIn>
__global__ void __launch_bounds__(Spec::kThreads, tuning::tensor_scan_min_blocks(kIn, Spec::kWide))
    tile_scan_kernel(const typename Spec::Args a) {
  using T = typename Spec::T;
  using A = typename Spec::A;
  using O = typename Spec::O;
  constexpr int kThreads = Spec::kThreads;
  constexpr int kVc = Spec::kVc;
  constexpr int kVa = Spec::kVa;
  constexpr bool kNarrow = kV < kVc;   // flat tiles: a chunk holds kSub whole rows
  constexpr int kSub = kVc / kV;       // rows per input chunk (1 unless narrow)
  constexpr int kK = kIn * kSub;       // rows per thread
  constexpr int kLog2In = tuning::tensor_scan_log2(kIn);
  static_assert(kIn == 16 || kIn == 8 || kIn == 4);
  static_assert(kVc % kV == 0 && (!kNarrow || kV >= 2));
  const typename Spec::Fold f = Spec::fold(a);

  extern __shared__ uint4 smem[];
  uint4* const in_tile = smem;
  uint4* const a_tile = Spec::kWide ? smem + kThreads * kIn : smem;
  A* const vals = reinterpret_cast<A*>(smem + kThreads * kIn * (Spec::kWide ? 3 : 1));
  A* const running = vals + tile_max_cols<Spec, kV>();
  A* const wt = running + tile_chain_max_cols<Spec, kV>();
  A* const scratch = wt + kThreads * kV;  // the window look-back uses wt (dead by then) and scratch
  __shared__ unsigned s_tile, s_flag;
  __shared__ TileOrigin s_org[2];  // this tile's, and the prefetched one's

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5;
  const int tc_shift = kNarrow ? 0 : a.tc_shift;
  const int tcs = 1 << tc_shift;  // TC
  const int tr = tid >> tc_shift, tc = tid & (tcs - 1);
  const std::int64_t rows_per_tile = static_cast<std::int64_t>(kThreads >> tc_shift) * kK;
  const int width = tcs * kV;  // columns per tile
  const bool chained = a.row_tiles > 1;

  if (tid == 0) {
    trace_point(f, kTileTraceStart);
    unsigned index = blockIdx.x, flag = 0;
    if (chained) {
      const unsigned long long drawn = atomicAdd(&a.header->ticket_and_epoch, 1ull);
      index = static_cast<unsigned>(drawn);
      flag = static_cast<unsigned>(drawn >> 32) + 1u;
      // The call's last ticket: every block has drawn; close the call (next epoch, ticket 0).
      if (index == a.num_tiles - 1) a.header->ticket_and_epoch = static_cast<unsigned long long>(flag) << 32;
    }
    s_tile = index;
    s_flag = flag;
    // The tile's origin (64-bit divisions: once per block), and the prefetched tile's.
    s_org[0] = tile_origin(a, index, rows_per_tile, width);
    if (a.prefetch_tiles > 0 && index + static_cast<unsigned>(a.prefetch_tiles) < a.num_tiles)
      s_org[1] = tile_origin(a, index + static_cast<unsigned>(a.prefetch_tiles), rows_per_tile, width);
    trace_point(f, kTileTraceDrawn);
  }
  __syncthreads();
  const unsigned t = s_tile;
  const unsigned flag = s_flag;
  const TileOrigin org = s_org[0];
  const T* const gin = static_cast<const T*>(a.in) + org.in;
  O* const gout = static_cast<O*>(a.out) + org.out;
  const int rows_valid = org.rows, cols_valid = org.cols;
  // Tile states (chained tiles): two status words, then each column's aggregate and inclusive
  // prefix, as flagged words.
  const std::size_t tile_words = 2 + 2 * static_cast<std::size_t>(width) * Spec::kWords;
  unsigned long long* const states =
      chained ? reinterpret_cast<unsigned long long*>(reinterpret_cast<char*>(a.header) + kScanHeaderBytes) : nullptr;

  // The first wave's lag (tuning::kTensorScanFirstWaveLagEighths): tile t waits until tile
  // t - lag has landed (published its aggregates or, a chain's first tile, its inclusive
  // prefix). Only tiles that publish are waited for (a chain's last tile does not), and they drew
  // earlier tickets, so the wait ends.
  if (a.first_wave_lag > 0 && t >= a.first_wave_lag && t < a.first_wave) {
    const unsigned w = t - a.first_wave_lag;
    const unsigned w_row_tile = (w / static_cast<unsigned>(a.col_tiles)) % static_cast<unsigned>(a.row_tiles);  // (as in tile_origin)
    if (tid == 0 && w_row_tile + 1 < a.row_tiles) {
      const unsigned long long* st = states + static_cast<std::size_t>(w) * tile_words;
      while (static_cast<unsigned>(load_word(st) >> 32) != flag && static_cast<unsigned>(load_word(st + 1) >> 32) != flag) {
      }
    }
    __syncthreads();
  }

  if (a.prefetch_tiles > 0 && t + static_cast<unsigned>(a.prefetch_tiles) < a.num_tiles && tid < 64) {
    // The input of the tile drawn prefetch_tiles tickets later, into L2 (a hint; only whole,
    // 16-byte aligned chunks inside the range are fetched, nothing outside the tile's elements):
    // one range when its rows lie back to back, else one per row of at least 128 bytes.
    const TileOrigin p = s_org[1];
    const T* b = static_cast<const T*>(a.in) + p.in;
    if (a.in_rs == p.cols) {
      if (tid == 0) tile_io::prefetch_l2(b, b + (p.rows - 1) * a.in_rs + p.cols);
    } else if (p.cols * static_cast<int>(sizeof(T)) >= 128) {
      for (int r = tid; r < p.rows; r += 64) tile_io::prefetch_l2(b + r * a.in_rs, b + r * a.in_rs + p.cols);
    }
  }

  // The swizzles: `group` chunks per thread row (kIn per thread, TC threads per row).
  const int group_log2 = kLog2In + (kNarrow ? 0 : tc_shift);
  const Swizzle swz{group_log2 > 3 ? group_log2 : 3, group_log2 >= 3 && !kNarrow ? tc_shift : 0};
  const Swizzle swz_a{group_log2 + 1 > 3 ? group_log2 + 1 : 3, group_log2 + 1 >= 3 && !kNarrow ? tc_shift : 0};

  // Chunk q's first element: row and column within the tile.
  auto chunk_row = [&](int q) { return kNarrow ? q * kSub : q >> tc_shift; };
  auto chunk_col = [&](int q) { return kNarrow ? 0 : (q & (tcs - 1)) * kV; };
  // This thread's j-th chunk (blocked: its K rows of its vec columns).
  auto own_chunk = [&](int j) { return kNarrow ? tid * kIn + j : ((tr * kIn + j) << tc_shift) + tc; };

  // 1. Copy in. A whole tile of whole chunks (every tile but the matrix's edges): chunk i of a
  // thread lies a fixed number of rows after its chunk i - 1, one pointer step (the general
  // loop below recomputed each chunk's row, column and bounds: ~28 instructions a chunk, SASS
  // sm_90, f32 deep tiles). Deep tiles only: in the shallow ones (64 registers) it spilled 8-12
  // bytes in the i32 / u32 min and max, in the wide-accumulator ones 40 (ptxas sm_90). H200 A/B,
  // 2 rounds (2026-11-29): cumsum f32 over dim 0 2.4-4.4 % faster on all five shapes timed, e.g.
  // (2^22, 16) 168.3 -> 161.0 us (76.7 -> 80.4 % of the copy ceiling).
  constexpr bool kWholeTilePath = kIn >= tuning::kTensorScanDeepChunks;
  const bool whole_tile = kWholeTilePath && a.in_vec && rows_valid == rows_per_tile && cols_valid == width;
  if (whole_tile) {
    const std::int64_t step = static_cast<std::int64_t>(kNarrow ? kThreads * kSub : kThreads >> tc_shift) * a.in_rs;
    const T* src = gin + chunk_row(tid) * a.in_rs + chunk_col(tid);
#pragma unroll
    for (int i = 0; i < kIn; ++i, src += step) tile_io::copy_async<16>(in_tile + swz(i * kThreads + tid), src);
  } else {
#pragma unroll
    for (int i = 0; i < kIn; ++i) {
      const int q = i * kThreads + tid;
      uint4* dst = in_tile + swz(q);
      const int row = chunk_row(q), col = chunk_col(q);
      const bool whole = kNarrow ? (a.in_vec && row + kSub <= rows_valid)
                                 : (a.in_vec && row < rows_valid && col + kVc <= cols_valid);
      if (whole) {
        tile_io::copy_async<16>(dst, gin + row * a.in_rs + col);
      } else {
        T* d = reinterpret_cast<T*>(dst);
#pragma unroll
        for (int e = 0; e < kVc; ++e) {
          const int er = kNarrow ? row + e / kV : row;
          const int ec = kNarrow ? e % kV : col + e;
          if (er < rows_valid && ec < cols_valid) {
            const T* src = gin + er * a.in_rs + ec * a.in_cs;
            if constexpr (sizeof(T) >= 4) tile_io::copy_async<sizeof(T)>(d + e, src);
            else d[e] = *src;
          } else {
            d[e] = Spec::identity_input(f);
          }
        }
      }
    }
  }
  if (tid == 0) trace_point(f, kTileTraceIssued);
  tile_io::wait_all_copies();
  __syncthreads();
  if (tid == 0) trace_point(f, kTileTraceLoaded);

  // 2. Each thread's fold per column, then the scan of the folds along TR.
  A incl[kV];
#pragma unroll
  for (int j = 0; j < kIn; ++j) {
    const uint4 raw = in_tile[swz(own_chunk(j))];
    T x[kVc];
    memcpy(x, &raw, 16);
#pragma unroll
    for (int s = 0; s < kSub; ++s)
#pragma unroll
      for (int v = 0; v < kV; ++v) {
        const A val = Spec::load(x[s * kV + v]);
        incl[v] = (j == 0 && s == 0) ? val : f(incl[v], val);
      }
  }
  const bool warp_rows = tcs < 32;  // several thread rows per warp: scanned with shuffles
  A wexcl[kV];
#pragma unroll
  for (int v = 0; v < kV; ++v) wexcl[v] = incl[v];
  if (warp_rows) {
    for (int off = tcs; off < 32; off <<= 1) {
#pragma unroll
      for (int v = 0; v < kV; ++v) {
        const A y = shfl_up_any(incl[v], static_cast<unsigned>(off));
        if (lane >= off) incl[v] = f(y, incl[v]);
      }
    }
#pragma unroll
    for (int v = 0; v < kV; ++v) wexcl[v] = shfl_up_any(incl[v], static_cast<unsigned>(tcs));
  }
  const int wr = warp_rows ? warp : tr;  // this thread's warp row
  const int warp_row_count = warp_rows ? kThreads / 32 : (kThreads >> tc_shift);
  if (!warp_rows || lane >= 32 - tcs) {
#pragma unroll
    for (int v = 0; v < kV; ++v) wt[wr * width + tc * kV + v] = incl[v];
  }
  __syncthreads();
  // This thread's exclusive prefix within the tile: the warp rows before it, then its warp's
  // thread rows before it; the identity when there is none (op(identity, x) == x bit for bit).
  A run[kV];
#pragma unroll
  for (int v = 0; v < kV; ++v) run[v] = f.identity();
  for (int w = 0; w < wr; ++w)
#pragma unroll
    for (int v = 0; v < kV; ++v) run[v] = f(run[v], wt[w * width + tc * kV + v]);
  if (warp_rows && lane >= tcs)
#pragma unroll
    for (int v = 0; v < kV; ++v) run[v] = f(run[v], wexcl[v]);

  // 3. The tile's aggregates, the local scans and the look-back.
  const bool has_tile_prefix = org.row_tile > 0 || a.exclusive;
  A init;
  memcpy(&init, &a.init_bits, sizeof(A));
  auto local_scan = [&] {
#pragma unroll
    for (int j = 0; j < kIn; ++j) {
      const int q = own_chunk(j);
      const uint4 raw = in_tile[swz(q)];
      T x[kVc];
      memcpy(x, &raw, 16);
      A y[kVc];
#pragma unroll
      for (int s = 0; s < kSub; ++s)
#pragma unroll
        for (int v = 0; v < kV; ++v) {
          const A val = Spec::load(x[s * kV + v]);
          if (a.exclusive) {
            y[s * kV + v] = run[v];
            run[v] = f(run[v], val);
          } else {
            run[v] = f(run[v], val);
            y[s * kV + v] = run[v];
          }
        }
#pragma unroll
      for (int h = 0; h < Spec::kAChunksPerIn; ++h) {
        uint4 w;
        memcpy(&w, y + h * kVa, 16);
        if constexpr (Spec::kWide) a_tile[swz_a(q * Spec::kAChunksPerIn + h)] = w;
        else a_tile[swz(q)] = w;
      }
    }
  };
  // 3a. Warp 0: the tile's aggregates, and their publication (a chain's first tile publishes its
  // inclusive prefix at once).
  const std::int64_t rt = org.row_tile;
  const bool has_successor = rt + 1 < a.row_tiles;
  unsigned long long* const mine = chained ? states + static_cast<std::size_t>(t) * tile_words : nullptr;
  auto agg_of = [&](unsigned long long* st, int c) { return st + 2 + static_cast<std::size_t>(c) * Spec::kWords; };
  auto inc_of = [&](unsigned long long* st, int c) {
    return st + 2 + static_cast<std::size_t>(width + c) * Spec::kWords;
  };
  if (warp == 0) {
    for (int c = lane; c < width; c += 32) {
      A s = wt[c];
      for (int w = 1; w < warp_row_count; ++w) s = f(s, wt[w * width + c]);
      vals[c] = s;
    }
    if (chained && rt == 0) {
      for (int c = lane; c < width; c += 32) {
        publish_scan_slot(inc_of(mine, c), a.exclusive ? f(init, vals[c]) : vals[c], flag);
        if (a.exclusive) vals[c] = init;
      }
      __syncwarp();
      if (lane == 0) publish_scan_slot(mine + 1, 0u, flag);
    } else if (chained && has_successor) {
      for (int c = lane; c < width; c += 32) publish_scan_slot(agg_of(mine, c), vals[c], flag);
      __syncwarp();
      if (lane == 0) publish_scan_slot(mine + 0, 0u, flag);
    } else if (!chained && a.exclusive) {
      for (int c = lane; c < width; c += 32) vals[c] = init;
    }
    if (lane == 0) trace_point(f, kTileTracePublished);
  }
  // 3b. Every thread: its local scan (tile-local, in the accumulator type) into shared memory.
  __shared__ int s_stop[tile_chain_max_cols<Spec, kV>()];  // the window look-back's stop per column
  if constexpr (window_loads<Spec, kV, kIn>() > 0)
    if (chained && rt > 0 && tid < width) s_stop[tid] = 0x7fffffff;
  local_scan();
  __syncthreads();

  // 3c. The look-back, by the whole block (a chained tile after the first). Measured on the H100
  // (2026-11-26, 471912b) with one warp folding 256 values a round: tall narrow matrices ran at
  // 4.6-60 % of the copy ceiling, because a look-back's cost grew with the distance to the
  // nearest inclusive prefix, and that distance with the look-backs' cost.
  //   - Find the nearest predecessor with an inclusive prefix whose newer ones all have
  //     aggregates: each thread reads one predecessor's two status words (kThreads a round), the
  //     warps' ballots meet in shared memory, and every thread takes the same decision.
  //   - Fold per column LEFT TO RIGHT from that inclusive prefix through the newer aggregates,
  //     oldest first, in rounds: all threads load a round's values (kLookbackScratch, every load
  //     of the round in flight at once; a value word whose flag has not landed yet is polled
  //     again) into `scratch`, then one thread per column folds the round in order.
  // Whichever predecessor the search stopped at, that is the left fold of all tile aggregates
  // before the tile (and init), so every call gives the same bits.
  if (chained && rt > 0) {
    const std::size_t chain_step = static_cast<std::size_t>(a.col_tiles) * tile_words;
    const int width_log2 = tc_shift + tuning::tensor_scan_log2(kV);
    // The window: one round of loads of the newest predecessors' values, both kinds at once
    // (every value word carries the call's flag, so the values are their own status). Column c
    // stops at its nearest predecessor with an inclusive prefix, and folds that prefix, then the
    // newer aggregates oldest first (polled until they land: every tile but a chain's first
    // publishes its aggregates before it looks back, so they all come). Per column it is the same
    // left fold as below, so the two paths give the same bits. When some column has no inclusive
    // prefix in the window, the stepped look-back below runs instead.
    //   (2^22, 16) in 64 KiB tiles on the H100 (2026-11-27): the stepped look-back spent 5 us
    //   finding its predecessor and 5 more folding at a distance of 130 tiles.
    bool windowed = false;
    if constexpr (window_loads<Spec, kV, kIn>() > 0) {
      constexpr int kWin = window_loads<Spec, kV, kIn>();
      constexpr int kWords = Spec::kWords;
      const std::int64_t reach = static_cast<std::int64_t>(kWin * kThreads) >> width_log2;
      const int window = static_cast<int>(rt < reach ? rt : reach);  // predecessors rt-1 .. rt-window
      const int total = window << width_log2;
      unsigned long long wi[kWin][kWords], wa[kWin][kWords];
      // body(k, i, j, c) for each value this thread holds: its k-th load, window position i, of
      // predecessor rt - 1 - j, column c.
      auto each_held = [&](auto&& body) {
#pragma unroll
        for (int k = 0; k < kWin; ++k) {
          const int i = k * kThreads + tid;
          if (i < total) body(k, i, i >> width_log2, i & (width - 1));
        }
      };
      auto state_of = [&](int j) { return mine - static_cast<std::size_t>(j + 1) * chain_step; };
      each_held([&](int k, int, int j, int c) {
        load_scan_slot<A>(inc_of(state_of(j), c), wi[k]);
        load_scan_slot<A>(agg_of(state_of(j), c), wa[k]);
      });
      each_held([&](int k, int i, int j, int c) {
        A v{};
        if (decode_scan_slot<A>(wi[k], flag, v)) atomicMin(&s_stop[c], j);
        // (the chain's first tile publishes no aggregate)
        if (rt - 1 - j > 0) await_slot<A>(agg_of(state_of(j), c), wa[k], flag, wt + i);
      });
      __syncthreads();
      each_held([&](int k, int, int j, int c) {
        A v{};
        if (s_stop[c] == j && decode_scan_slot<A>(wi[k], flag, v)) running[c] = v;
      });
      windowed = __syncthreads_and(tid >= width || s_stop[tid] < window) != 0;
      if (windowed) {
        if (tid == 0) {
          trace_note(f, kTileNoteDistance, s_stop[0] + 1);
          trace_point(f, kTileTraceFound);
        }
        for (int c = tid; c < width; c += kThreads) {
          A p = running[c];
#pragma unroll 8
          for (int j = s_stop[c] - 1; j >= 0; --j) p = f(p, wt[(j << width_log2) + c]);
          running[c] = p;
        }
      }
    }
    if (!windowed) {  // the stepped look-back
      __shared__ unsigned s_inclusive[kThreads / 32], s_any[kThreads / 32];
      std::int64_t newest = rt - 1, stop = 0;
      while (true) {
        const std::int64_t pr = newest - tid;
        bool inclusive = false, any = false;
        if (pr >= 0) {
          const unsigned long long* st = mine - static_cast<std::size_t>(rt - pr) * chain_step;
          const unsigned long long wa = load_word(st), wi = load_word(st + 1);
          inclusive = static_cast<unsigned>(wi >> 32) == flag;
          any = inclusive || static_cast<unsigned>(wa >> 32) == flag;
        }
        const unsigned inclusive_mask = __ballot_sync(0xffffffffu, inclusive);
        const unsigned any_mask = __ballot_sync(0xffffffffu, any);
        if (lane == 0) {
          s_inclusive[warp] = inclusive_mask;
          s_any[warp] = any_mask;
        }
        __syncthreads();
        int found = -1;      // distance (from `newest`) of the stop, if the round decides it
        bool all_any = true;  // every predecessor of the round has at least an aggregate
#pragma unroll 1
        for (int w = 0; w < kThreads / 32 && found < 0; ++w) {
          const unsigned im = s_inclusive[w], am = s_any[w];
          if (im != 0) {
            const int s = __ffs(im) - 1;
            const unsigned newer = (1u << s) - 1u;
            if (all_any && (am & newer) == newer) found = w * 32 + s;
            else all_any = false;
            break;
          }
          if (am != 0xffffffffu) all_any = false;
        }
        __syncthreads();  // the masks are read before the next round writes them
        if (tid == 0) trace_note(f, kTileNoteStatusRounds, 1);  // (summed by the tracer)
        if (found >= 0) {
          stop = newest - found;
          break;
        }
        if (all_any) newest -= kThreads;
      }
      if (tid == 0) {
        trace_note(f, kTileNoteDistance, rt - stop);
        trace_point(f, kTileTraceFound);
      }
      constexpr int kScratch = Spec::kLookbackScratch;
      constexpr int kLoads = kScratch / kThreads;
      constexpr int kWords = Spec::kWords;
      static_assert(kLoads * kThreads == kScratch);
      const int per_round = kScratch >> width_log2;  // >= 1 (static_assert on tile_chain_max_cols)
      for (std::int64_t first = stop; first < rt; first += per_round) {
        const int count = static_cast<int>(rt - first < per_round ? rt - first : per_round);
        const int total = count << width_log2;
        unsigned long long w[kLoads][kWords];
        unsigned long long* word[kLoads];
#pragma unroll
        for (int k = 0; k < kLoads; ++k) {
          const int i = k * kThreads + tid;
          word[k] = nullptr;
          if (i < total) {
            const std::int64_t p = first + (i >> width_log2);
            const int c = i & (width - 1);
            unsigned long long* st = mine - static_cast<std::size_t>(rt - p) * chain_step;
            word[k] = p == stop ? inc_of(st, c) : agg_of(st, c);
            load_scan_slot<A>(word[k], w[k]);
          }
        }
#pragma unroll
        for (int k = 0; k < kLoads; ++k) {
          if (word[k] != nullptr) await_slot<A>(word[k], w[k], flag, scratch + k * kThreads + tid);
        }
        __syncthreads();
        for (int c = tid; c < width; c += kThreads) {
          A p = first == stop ? scratch[c] : running[c];
          // Unrolled so that the shared loads run ahead of the chain of combines (narrow tiles
          // fold hundreds of predecessors per column).
#pragma unroll 8
          for (int j = first == stop ? 1 : 0; j < count; ++j) p = f(p, scratch[(j << width_log2) + c]);
          running[c] = p;
        }
        __syncthreads();
      }
    }
    for (int c = tid; c < width; c += kThreads) {
      const A p = running[c];
      if (has_successor) publish_scan_slot(inc_of(mine, c), f(p, vals[c]), flag);
      vals[c] = p;
    }
    // The status word may land before other threads' values: a reader polls each value word.
    if (has_successor && tid == 0) publish_scan_slot(mine + 1, 0u, flag);
    __syncthreads();
    if (tid == 0) trace_point(f, kTileTracePrefix);
  }

  // 4. Store, striped: out = prefix op local.
  constexpr int kStoreBytes = kVa * static_cast<int>(sizeof(O));  // 16, or 8 for 16-bit outputs
  // A whole tile of a deep, non-widening kernel (as in 1.): chunk i of a thread lies a fixed number
  // of rows after its chunk i - 1, and its columns are the thread's own in every chunk (kThreads is
  // a multiple of TC), so the tile's prefixes are read from shared memory once, not per chunk
  // (generic stores may alias shared memory: the compiler reloads them after each store).
  // A/B on the H200 (2026-11-29), cumsum f32 over dim 0: (2^24, 4) 0.966x the time, (2^20, 64)
  // 0.974x, (65536, 1024) 0.992x; (2^22, 16) 1.006x and (4096, 16384) 0.999x.
  constexpr bool kWholeStorePath = kWholeTilePath && !Spec::kWide;
  if constexpr (kWholeStorePath) {
    static_assert(kVa == kVc && kStoreBytes == 16);
    if (a.out_vec && rows_valid == rows_per_tile && cols_valid == width) {
      A prefix[kVa];
#pragma unroll
      for (int k = 0; k < kVa; ++k) prefix[k] = vals[kNarrow ? k % kV : chunk_col(tid) + k];
      const std::int64_t step = static_cast<std::int64_t>(kNarrow ? kThreads * kSub : kThreads >> tc_shift) * a.out_rs;
      O* dst = gout + chunk_row(tid) * a.out_rs + chunk_col(tid);
#pragma unroll
      for (int i = 0; i < kIn; ++i, dst += step) {
        const uint4 raw = a_tile[swz(i * kThreads + tid)];
        A y[kVa];
        memcpy(y, &raw, 16);
        O o[kVa];
#pragma unroll
        for (int k = 0; k < kVa; ++k) o[k] = Spec::store(has_tile_prefix ? f(prefix[k], y[k]) : y[k]);
        uint4 w;
        memcpy(&w, o, 16);
        *reinterpret_cast<uint4*>(dst) = w;
      }
      if (tid == 0) {
        trace_point(f, kTileTraceStored);
        trace_flush(f, t);
      }
      return;
    }
  }
  // Fully unrolled, the widening kernels' store pass spilled (ptxas, sm_90: the 32-bit integer sums).
#pragma unroll(Spec::kWide ? 4 : 8)
  for (int i = 0; i < kIn * Spec::kAChunksPerIn; ++i) {
    const int qa = i * kThreads + tid;
    const int q = qa / Spec::kAChunksPerIn, h = qa % Spec::kAChunksPerIn;
    const uint4 raw = Spec::kWide ? a_tile[swz_a(qa)] : a_tile[swz(q)];
    A y[kVa];
    memcpy(y, &raw, 16);
    const int row0 = chunk_row(q), col0 = chunk_col(q);
    O o[kVa];
#pragma unroll
    for (int k = 0; k < kVa; ++k) {
      const int e = h * kVa + k;
      const int col = kNarrow ? e % kV : col0 + e;
      o[k] = Spec::store(has_tile_prefix ? f(vals[col], y[k]) : y[k]);
    }
    const int first = h * kVa;  // the chunk's first element within the input chunk
    const int frow = kNarrow ? row0 + first / kV : row0;
    const int fcol = kNarrow ? first % kV : col0 + first;
    const bool whole = kNarrow ? (a.out_vec && row0 + (first + kVa - 1) / kV < rows_valid)
                               : (a.out_vec && row0 < rows_valid && fcol + kVa <= cols_valid);
    if (whole) {
      O* dst = gout + frow * a.out_rs + fcol;
      if constexpr (kStoreBytes == 16) {
        uint4 w;
        memcpy(&w, o, 16);
        *reinterpret_cast<uint4*>(dst) = w;
      } else {
        static_assert(kStoreBytes == 8);
        uint2 w;
        memcpy(&w, o, 8);
        *reinterpret_cast<uint2*>(dst) = w;
      }
    } else {
#pragma unroll
      for (int k = 0; k < kVa; ++k) {
        const int e = first + k;
        const int er = kNarrow ? row0 + e / kV : row0;
        const int ec = kNarrow ? e % kV : col0 + e;
        if (er < rows_valid && ec < cols_valid) gout[er * a.out_rs + ec * a.out_cs] = o[k];
      }
    }
  }
  if (tid == 0) {
    trace_point(f, kTileTraceStored);
    trace_flush(f, t);
  }
}

}  // namespace foldkit::cuda::tensor_scan
