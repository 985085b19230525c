// foldkit::cuda::segmented_reduce / segmented_arg_reduce / validate_offsets
// (foldkit/cuda/segmented_reduce.hpp): argument checks, the workspace, the validation kernels and
// the launch of the main kernel (segmented_reduce_kernel.cuh, whose header comment describes the
// algorithm; its instantiations live in segmented_reduce_{int,int64,float,half}.cu).
//
// One call, offsets form: prepare_offsets_kernel (validates every offset, setting the workspace
// flag for a bad one, zeroes the look-back slots and writes the merge-path split of every tile
// boundary, in one pass over the offsets), then the main kernel on one block per tile.
// Begin/end form: prepare_begin_end_kernel (validates the pairs and writes their lengths),
// foldkit's inclusive scan of the lengths (the virtual offsets), then the main kernel.
// The group path (offsets form, every op but argmin/argmax; segmented_group_kernel.cuh, the
// default: tuning::kSegGroupDefault): prepare_group_kernel (validates, lists the long segments,
// counts the short ones), the two group kernels (one returns at once), the chunk kernel.
// detail::segmented_reduce_on_path forces a path.
// Everything is stream-ordered; nothing synchronises but validate_offsets().
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/erased_dispatch.hpp"
#include "common/segmented_prepare.hpp"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/dispatch/scan_runtime.hpp"
#include "foldkit/cuda/dispatch/segmented_runtime.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/segmented_reduce.hpp"
#include "foldkit/cuda/tuning/segmented_reduce_tuning.hpp"
#include "foldkit/error.hpp"
#include "foldkit/tensor_reduce.hpp"
#include "segmented_reduce_launch.cuh"
#include "segmented_reduce_prepare.cuh"

namespace foldkit::cuda {
namespace seg {
namespace {

constexpr int kPrepThreads = tuning::kSegPrepareThreads;

unsigned grid_for(std::int64_t threads) {
  return static_cast<unsigned>((threads + kPrepThreads - 1) / kPrepThreads);
}

std::int64_t tiles_for(std::int64_t n, std::int64_t num_segments, DType dtype) {
  const std::int64_t tile = tuning::seg_tile_items(dtype_size(dtype));
  return (n + num_segments + tile - 1) / tile;
}

// Both paths' (the library picks one per call: see use_group_path).
std::size_t offsets_workspace_bytes(std::int64_t n, std::int64_t num_segments, DType dtype) {
  return std::max(layout(tiles_for(n, num_segments, dtype), num_segments, true, 0).bytes,
                  group_layout(n, dtype_size(dtype)).bytes);
}

// The group path for the offsets form's calls (segmented_group_kernel.cuh): every op but
// argmin/argmax, while kSegGroupDefault says it is measured faster (the tuning file).
bool use_group_path(ReduceOp op) {
  return tuning::kSegGroupDefault && op != ReduceOp::argmin && op != ReduceOp::argmax;
}

// The begin/end form's grid: as many blocks as the offsets form would use for n + S items.
std::int64_t begin_end_tiles(std::int64_t n, std::int64_t num_segments, DType dtype) {
  return std::max<std::int64_t>(tuning::kSegBeginEndMinBlocks, tiles_for(n, num_segments, dtype));
}
Layout begin_end_layout(std::int64_t n, std::int64_t num_segments, DType dtype) {
  const std::size_t scan = num_segments > 0 ? scan_workspace_bytes(num_segments, DType::i64) : 0;
  return layout(begin_end_tiles(n, num_segments, dtype), num_segments, false, align16(scan));
}

template <class F>
void visit_typed(ReduceOp op, DType dtype, F&& f) {
  visit_dtype(dtype, [&](auto tag) {
    erased::visit_reduce_op(op, [&](auto op_tag) { f(op_tag, tag); });
  });
}

// Every check of a call, before anything is enqueued. Returns the device facts.
detail::DeviceFacts check_call(const foldkit::detail::SegmentedCall& c, std::int32_t* d_status) {
  foldkit::detail::check_segmented_call(c);
  const detail::DeviceFacts facts = detail::current_device_facts();
  if (c.n > 0) detail::check_device_pointer(c.in, "input", facts.device);
  if (c.by_offsets) {
    detail::check_device_pointer(c.offsets, "offsets", facts.device);
  } else if (c.num_segments > 0) {
    detail::check_device_pointer(c.begin, "begin offsets", facts.device);
    detail::check_device_pointer(c.end, "end offsets", facts.device);
  }
  if (c.num_segments > 0) {
    detail::check_device_pointer(c.out, c.two_outputs ? "indices" : "out", facts.device);
    if (c.values != nullptr) detail::check_device_pointer(c.values, "values", facts.device);
  }
  if (d_status != nullptr) detail::check_device_pointer(d_status, "status", facts.device);
  return facts;
}

void check_workspace(const char* api, Workspace ws, std::size_t need, int device) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, std::string(api) + ": workspace is null");
  if (reinterpret_cast<std::uintptr_t>(ws.ptr) % 16 != 0)
    throw Error(Errc::invalid_argument, std::string(api) + ": workspace must be 16-byte aligned");
  if (ws.bytes < need)
    throw Error(Errc::invalid_argument, std::string(api) + ": workspace has " + std::to_string(ws.bytes) +
                                            " bytes; " + std::to_string(need) +
                                            " are needed (segmented_reduce_workspace_bytes())");
  detail::check_device_pointer(ws.ptr, "workspace", device);
}

Params params_for(const foldkit::detail::SegmentedCall& c, Workspace ws, const Layout& l, std::int32_t* d_status) {
  auto* base = static_cast<unsigned char*>(ws.ptr);
  Params p{};
  p.in = c.in;
  p.n = c.n;
  p.offsets = c.by_offsets ? c.offsets : reinterpret_cast<const std::int64_t*>(base + l.voff);
  p.begin = c.begin;
  p.num_segments = c.num_segments;
  p.out = c.out;
  p.values = c.values;
  p.header = reinterpret_cast<unsigned*>(base + kSegFlagOffset);
  p.slots = reinterpret_cast<unsigned long long*>(base + l.slots);
  p.starts = reinterpret_cast<longlong2*>(base + l.starts);
  p.stops = reinterpret_cast<longlong2*>(base + l.stops);
  p.status = d_status;
  p.prefetch_tiles = 0;
  p.tiles = 0;
  p.tiles_per_block = 1;
  return p;
}

// The begin/end form's flag, ticket and slots zeroed in stream order (segmented_reduce_launch.cuh:
// a scan on the same workspace leaves flagged words there; the offsets form's validation kernel
// zeroes its slots itself).
void clear_flag_and_slots(Workspace ws, const Layout& l, cudaStream_t stream) {
  detail::check_cuda(cudaMemsetAsync(static_cast<unsigned char*>(ws.ptr) + kSegFlagOffset, 0, l.starts - kSegFlagOffset, stream),
                     "cudaMemsetAsync (segmented_reduce)");
}

// The L2 prefetch distance of an offsets-form call of `tiles` tiles (tiles ahead; 0: none).
int prefetch_tiles_for(std::int64_t tiles, ReduceOp op, DType dtype, int sm_count) {
  const std::int64_t wave = static_cast<std::int64_t>(sm_count) * tuning::seg_min_blocks(true, op, dtype_size(dtype));
  return tiles >= tuning::kSegPrefetchMinWaves * wave ? tuning::seg_prefetch_tiles(dtype_size(dtype)) : 0;
}

// The group path (num_segments > 0, not argmin/argmax; all checks done).
void enqueue_group(const foldkit::detail::SegmentedCall& c, Workspace ws, const detail::DeviceFacts& facts,
                   cudaStream_t stream, std::int32_t* d_status) {
  const GroupParams p = group_params(group_layout(c.n, dtype_size(c.dtype)), static_cast<unsigned char*>(ws.ptr), c.in, c.n,
                                     c.offsets, c.num_segments, c.out, d_status);
  visit_typed(c.op, c.dtype, [&](auto op_tag, auto tag) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    if constexpr (Op != ReduceOp::argmin && Op != ReduceOp::argmax) launch_group<Op, decltype(tag)>(p, facts.sm_count, stream);
  });
  detail::check_cuda(cudaGetLastError(), "segmented_reduce (group path) kernel launch");
}

// The offsets form with a checked workspace (all checks done). prefetch_tiles >= 0 overrides the
// L2 prefetch distance, tiles_per_block > 0 the tiles a block takes (detail::segmented_reduce_with_tuning).
void enqueue_offsets(const foldkit::detail::SegmentedCall& c, Workspace ws, const detail::DeviceFacts& facts,
                     cudaStream_t stream, std::int32_t* d_status, int prefetch_tiles = -1, int tiles_per_block = 0,
                     detail::SegmentedPath path = detail::SegmentedPath::library) {
  if (c.num_segments == 0) {
    if (d_status != nullptr) {
      offsets_status_kernel<<<1, 1, 0, stream>>>(c.offsets, c.n, d_status);
      detail::check_cuda(cudaGetLastError(), "segmented_reduce status kernel launch");
    }
    return;
  }
  if (path == detail::SegmentedPath::group || (path == detail::SegmentedPath::library && use_group_path(c.op)))
    return enqueue_group(c, ws, facts, stream, d_status);
  const std::size_t element = dtype_size(c.dtype);
  const std::int64_t tiles = tiles_for(c.n, c.num_segments, c.dtype);
  const Layout l = layout(tiles, c.num_segments, true, 0);
  Params p = params_for(c, ws, l, d_status);
  p.prefetch_tiles = prefetch_tiles >= 0 ? prefetch_tiles : prefetch_tiles_for(tiles, c.op, c.dtype, facts.sm_count);
  p.tiles = tiles;
  p.tiles_per_block = tiles_per_block > 0 ? tiles_per_block : tuning::kSegTilesPerBlock;
  const auto grid = static_cast<unsigned>((tiles + p.tiles_per_block - 1) / p.tiles_per_block);
  // (It zeroes the slots too: no memset before it.)
  prepare_offsets_kernel<<<prepare_offsets_blocks(c.num_segments, tiles), kPrepThreads, 0, stream>>>(
      c.offsets, c.num_segments, c.n, tiles, tuning::seg_tile_items(element), p.header,
      p.starts, p.stops, p.slots);
  detail::check_cuda(cudaGetLastError(), "segmented_reduce validation kernel launch");
  visit_typed(c.op, c.dtype, [&](auto op_tag, auto tag) {
    launch_main<decltype(op_tag)::value, decltype(tag), true>(p, grid, stream);
  });
  detail::check_cuda(cudaGetLastError(), "segmented_reduce kernel launch");
}

void enqueue_begin_end(const foldkit::detail::SegmentedCall& c, Workspace ws, cudaStream_t stream, std::int32_t* d_status) {
  if (c.num_segments == 0) {
    if (d_status != nullptr)
      detail::check_cuda(cudaMemsetAsync(d_status, 0, sizeof(std::int32_t), stream), "cudaMemsetAsync (status)");
    return;
  }
  const Layout l = begin_end_layout(c.n, c.num_segments, c.dtype);
  const std::int64_t tiles = begin_end_tiles(c.n, c.num_segments, c.dtype);
  Params p = params_for(c, ws, l, d_status);
  clear_flag_and_slots(ws, l, stream);
  auto* voff = reinterpret_cast<std::int64_t*>(static_cast<unsigned char*>(ws.ptr) + l.voff);
  const auto scan_words = static_cast<std::int64_t>((l.bytes - l.scan) / sizeof(unsigned long long));
  prepare_begin_end_kernel<<<grid_for(std::max(c.num_segments, scan_words)), kPrepThreads, 0, stream>>>(
      c.begin, c.end, c.num_segments, c.n, p.header, voff, scan_words,
      reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(ws.ptr) + l.scan));
  detail::check_cuda(cudaGetLastError(), "segmented_reduce validation kernel launch");
  // In place: voff[1 .. S] become the inclusive sums of the lengths.
  inclusive_scan<ReduceOp::sum, std::int64_t>(
      voff + 1, c.num_segments, voff + 1,
      Workspace{static_cast<unsigned char*>(ws.ptr) + l.scan, l.bytes - l.scan}, stream);
  visit_typed(c.op, c.dtype, [&](auto op_tag, auto tag) {
    launch_main<decltype(op_tag)::value, decltype(tag), false>(p, static_cast<unsigned>(tiles), stream);
  });
  detail::check_cuda(cudaGetLastError(), "segmented_reduce kernel launch");
  // The workspace is left zeroed (segmented_reduce_launch.cuh): voff is the kernel's input, and
  // the scan leaves its tile states flagged.
  detail::check_cuda(cudaMemsetAsync(voff, 0, l.bytes - l.voff, stream), "cudaMemsetAsync (segmented_reduce)");
}

// The convenient forms: this thread's cached workspace for the stream (the scans' cache: it
// grows with the call; one workspace per stream serves the scans and these calls in turn).
template <class Enqueue>
void with_stream_workspace(cudaStream_t stream, std::size_t bytes, Enqueue&& enqueue) {
  const Workspace ws = detail::scan_stream_workspace(stream, bytes);
  enqueue(ws);
  detail::scan_stream_workspace_launched(stream);
}

foldkit::detail::SegmentedCall offsets_call(const char* api, ReduceOp op, DType dtype, const void* d_in, std::int64_t n,
                                   const std::int64_t* d_offsets, std::int64_t num_segments, void* d_out,
                                   bool two_outputs, void* d_values) {
  return foldkit::detail::SegmentedCall{api, op, dtype, d_in, n, true, d_offsets, nullptr, nullptr, num_segments, d_out,
                               two_outputs, d_values};
}

// The offsets form with an explicit workspace: every check, then the launch (prefetch_tiles as
// enqueue_offsets).
void offsets_with_workspace(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, const std::int64_t* d_offsets,
                            std::int64_t num_segments, void* d_out, Workspace ws, cudaStream_t stream,
                            std::int32_t* d_status, int prefetch_tiles, int tiles_per_block = 0,
                            detail::SegmentedPath path = detail::SegmentedPath::library) {
  const auto c = offsets_call("segmented_reduce", op, dtype, d_in, n, d_offsets, num_segments, d_out, false, nullptr);
  const detail::DeviceFacts facts = check_call(c, d_status);
  check_workspace(c.api, ws, offsets_workspace_bytes(n, num_segments, dtype), facts.device);
  enqueue_offsets(c, ws, facts, stream, d_status, prefetch_tiles, tiles_per_block, path);
}

}  // namespace
}  // namespace seg

std::size_t segmented_reduce_workspace_bytes(std::int64_t n, std::int64_t num_segments, ReduceOp op, DType dtype) {
  erased::check_enums(op, dtype);
  if (n < 0) throw Error(Errc::invalid_argument, "segmented_reduce_workspace_bytes: n is negative");
  if (num_segments < 0) throw Error(Errc::invalid_argument, "segmented_reduce_workspace_bytes: num_segments is negative");
  return seg::offsets_workspace_bytes(n, num_segments, dtype);
}

void segmented_reduce(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, const std::int64_t* d_offsets,
                      std::int64_t num_segments, void* d_out, Workspace ws, cudaStream_t stream,
                      std::int32_t* d_status) {
  seg::offsets_with_workspace(op, dtype, d_in, n, d_offsets, num_segments, d_out, ws, stream, d_status, -1);
}

void segmented_reduce(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, const std::int64_t* d_offsets,
                      std::int64_t num_segments, void* d_out, cudaStream_t stream, std::int32_t* d_status) {
  const auto c = seg::offsets_call("segmented_reduce", op, dtype, d_in, n, d_offsets, num_segments, d_out, false,
                                   nullptr);
  const detail::DeviceFacts facts = seg::check_call(c, d_status);
  if (num_segments == 0) return seg::enqueue_offsets(c, Workspace{}, facts, stream, d_status);
  seg::with_stream_workspace(stream, seg::offsets_workspace_bytes(n, num_segments, dtype),
                             [&](Workspace ws) { seg::enqueue_offsets(c, ws, facts, stream, d_status); });
}

void segmented_reduce(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, const std::int64_t* d_begin,
                      const std::int64_t* d_end, std::int64_t num_segments, void* d_out, cudaStream_t stream,
                      std::int32_t* d_status) {
  const foldkit::detail::SegmentedCall c{"segmented_reduce", op, dtype, d_in, n, false, nullptr, d_begin, d_end,
                                num_segments, d_out, false, nullptr};
  seg::check_call(c, d_status);
  if (num_segments == 0) return seg::enqueue_begin_end(c, Workspace{}, stream, d_status);
  seg::with_stream_workspace(stream, seg::begin_end_layout(n, num_segments, dtype).bytes,
                             [&](Workspace ws) { seg::enqueue_begin_end(c, ws, stream, d_status); });
}

void segmented_arg_reduce(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, const std::int64_t* d_offsets,
                          std::int64_t num_segments, std::int64_t* d_indices, void* d_values, cudaStream_t stream,
                          std::int32_t* d_status) {
  const auto c = seg::offsets_call("segmented_arg_reduce", op, dtype, d_in, n, d_offsets, num_segments, d_indices,
                                   true, d_values);
  const detail::DeviceFacts facts = seg::check_call(c, d_status);
  if (num_segments == 0) return seg::enqueue_offsets(c, Workspace{}, facts, stream, d_status);
  seg::with_stream_workspace(stream, seg::offsets_workspace_bytes(n, num_segments, dtype),
                             [&](Workspace ws) { seg::enqueue_offsets(c, ws, facts, stream, d_status); });
}

namespace detail {

void segmented_reduce_with_tuning(ReduceOp op, DType dtype, const void* d_in, std::int64_t n,
                                  const std::int64_t* d_offsets, std::int64_t num_segments, void* d_out, Workspace ws,
                                  cudaStream_t stream, int prefetch_tiles, int tiles_per_block) {
  if (prefetch_tiles < -1) throw Error(Errc::invalid_argument, "segmented_reduce_with_tuning: prefetch_tiles < -1");
  if (tiles_per_block < 0) throw Error(Errc::invalid_argument, "segmented_reduce_with_tuning: tiles_per_block < 0");
  seg::offsets_with_workspace(op, dtype, d_in, n, d_offsets, num_segments, d_out, ws, stream, nullptr, prefetch_tiles,
                              tiles_per_block);
}

void segmented_reduce_on_path(SegmentedPath path, ReduceOp op, DType dtype, const void* d_in, std::int64_t n,
                              const std::int64_t* d_offsets, std::int64_t num_segments, void* d_out, Workspace ws,
                              cudaStream_t stream, std::int32_t* d_status) {
  if (path == SegmentedPath::group && (op == ReduceOp::argmin || op == ReduceOp::argmax))
    throw Error(Errc::invalid_argument, "segmented_reduce_on_path: the group path has no argmin/argmax");
  seg::offsets_with_workspace(op, dtype, d_in, n, d_offsets, num_segments, d_out, ws, stream, d_status, -1, 0, path);
}

SegmentedPath segmented_reduce_path(ReduceOp op) {
  erased::check_enums(op, DType::f32);
  return seg::use_group_path(op) ? SegmentedPath::group : SegmentedPath::merge;
}

const char* segmented_path_name(SegmentedPath path) {
  switch (path) {
    case SegmentedPath::library: return "library";
    case SegmentedPath::merge: return "merge path";
    case SegmentedPath::group: return "group path";
  }
  return "?";
}

int segmented_reduce_prefetch_tiles(std::int64_t n, std::int64_t num_segments, ReduceOp op, DType dtype) {
  erased::check_enums(op, dtype);
  return seg::prefetch_tiles_for(seg::tiles_for(n, num_segments, dtype), op, dtype, current_device_facts().sm_count);
}

}  // namespace detail

void validate_offsets(const std::int64_t* d_offsets, std::int64_t num_segments, std::int64_t n, cudaStream_t stream) {
  const char* api = "validate_offsets";
  if (n < 0) throw Error(Errc::invalid_argument, std::string(api) + ": n = " + std::to_string(n) + " is negative");
  if (num_segments < 0)
    throw Error(Errc::invalid_argument,
                std::string(api) + ": num_segments = " + std::to_string(num_segments) + " is negative");
  if (d_offsets == nullptr) throw Error(Errc::invalid_argument, std::string(api) + ": offsets is null");
  const detail::DeviceFacts facts = detail::current_device_facts();
  detail::check_device_pointer(d_offsets, "offsets", facts.device);

  unsigned long long* d_first = nullptr;
  detail::check_cuda(cudaMallocAsync(reinterpret_cast<void**>(&d_first), sizeof(unsigned long long), stream),
                     "cudaMallocAsync (validate_offsets)");
  unsigned long long first = ~0ull;
  std::int64_t pair[2] = {0, 0};
  cudaError_t status = cudaMemsetAsync(d_first, 0xff, sizeof(unsigned long long), stream);
  if (status == cudaSuccess) {
    seg::first_bad_offset_kernel<<<seg::grid_for(num_segments + 1), seg::kPrepThreads, 0, stream>>>(
        d_offsets, num_segments, n, d_first);
    status = cudaGetLastError();
  }
  if (status == cudaSuccess)
    status = cudaMemcpyAsync(&first, d_first, sizeof first, cudaMemcpyDeviceToHost, stream);
  const cudaError_t freed = cudaFreeAsync(d_first, stream);
  if (status == cudaSuccess) status = freed;
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  detail::check_cuda(status, "validate_offsets");
  if (first == ~0ull) return;
  const auto i = static_cast<std::int64_t>(first);
  const std::int64_t count = i < num_segments ? 2 : 1;
  detail::check_cuda(cudaMemcpyAsync(pair, d_offsets + i, static_cast<std::size_t>(count) * sizeof(std::int64_t),
                                     cudaMemcpyDeviceToHost, stream),
                     "validate_offsets (copy)");
  detail::check_cuda(cudaStreamSynchronize(stream), "validate_offsets (synchronize)");
  throw Error(Errc::invalid_argument,
              std::string(api) + ": " + foldkit::detail::bad_offset_message(i, pair[0], pair[1], num_segments, n));
}

}  // namespace foldkit::cuda
