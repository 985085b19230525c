// foldkit::cuda::inclusive_scan / exclusive_scan over tensors (foldkit/cuda/tensor_scan.hpp):
// checks, workspace, and the choice between the core's blocked scan ("rows-contiguous" plans:
// the lines lie back to back in and out) and the tile kernel (tensor_scan_kernel.cuh, every
// other plan). Host code only; the kernels are instantiated in tensor_scan_<dtypes>.cu. The user
// functors' header (foldkit/cuda/tensor_scan_custom.cuh) gets the same checks, choice and tile
// parameters from prepare_tensor_scan_custom (dispatch/tensor_scan_runtime.hpp).
//
// The tile kernel scans a matrix of R rows (the scanned axis) x C columns (the innermost canonical
// kept dimension), repeated over the outer kept dimensions. Its geometry depends on the plan, and
// so on the output's strides; tensor_scan_workspace_bytes() sees only the input, so it returns
// the most any output could need: the largest tile state over every column dimension the kept
// dimensions can merge into, every scan op's accumulator and a user functor's (the element), both
// vector widths, and the core's blocked scan.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/erased_dispatch.hpp"
#include "cuda/tensor_scan_launch.cuh"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/dispatch/scan_runtime.hpp"
#include "foldkit/cuda/dispatch/tensor_scan_runtime.hpp"
#include "foldkit/cuda/scan.hpp"
#include "foldkit/cuda/tensor_scan.hpp"
#include "foldkit/cuda/tuning/tensor_scan_tuning.hpp"
#include "foldkit/detail/scan_plan.hpp"
#include "foldkit/error.hpp"

namespace foldkit::cuda {
namespace {

using foldkit::detail::PlanDim;
using foldkit::detail::ScanFamily;
using foldkit::detail::ScanPlan;


bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

using foldkit::detail::ScanMatrix;

// The vector width of flat tiles (whole narrow lines back to back in and out), or 0.
int narrow_vec(const ScanMatrix& m, std::size_t elem_bytes) {
  const std::int64_t chunk = 16 / static_cast<std::int64_t>(elem_bytes);
  if (m.cols >= 2 && m.cols < chunk && is_pow2(m.cols) && m.in_cs == 1 && m.out_cs == 1 && m.in_rs == m.cols &&
      m.out_rs == m.cols)
    return static_cast<int>(m.cols);
  return 0;
}

template <class T, class F>
void for_each_accum(F&& f) {
  f(sizeof(scan_accum_t<ReduceOp::sum, T>));
  f(sizeof(scan_accum_t<ReduceOp::prod, T>));
  f(sizeof(scan_accum_t<ReduceOp::min, T>));
  f(sizeof(scan_accum_t<ReduceOp::max, T>));
  f(sizeof(T));
}

// The documented workspace size (see the top of this file), from the input alone.
std::size_t workspace_bound(const TensorView& in, const ScanPlan& p) {
  if (p.numel == 0) return 0;
  std::size_t bytes = p.scan.in_stride == 1 ? scan_workspace_bytes(p.numel, in.dtype) : 0;
  // Every column dimension a call could get: the product of any subset of the kept sizes > 1
  // (an output's strides decide which of them merge, and which is innermost).
  std::int64_t sizes[kMaxRank];
  int count = 0;
  for (int i = 0; i < in.rank; ++i)
    if (i != p.axis && in.shape[i] > 1) sizes[count++] = in.shape[i];
  const std::size_t elem = dtype_size(in.dtype);
  visit_dtype(in.dtype, [&](auto tag) {
    using T = decltype(tag);
    // The accumulators: every scan op's, and a user functor's (the element itself).
    for_each_accum<T>([&](std::size_t accum) {
      for (unsigned subset = 0; subset < (1u << count); ++subset) {
        std::int64_t cols = 1;
        for (int k = 0; k < count; ++k)
          if ((subset >> k) & 1u) cols *= sizes[k];
        const std::int64_t outer = p.lines / cols;
        const int narrow = cols >= 2 && cols < static_cast<std::int64_t>(16 / elem) && is_pow2(cols) ? static_cast<int>(cols) : 0;
        for (int vec : {0, narrow}) {
          for (bool major : {false, true}) {
            const auto g = tuning::tensor_scan_geometry(elem, accum, p.len, cols, vec, major);
            bytes = std::max(bytes, tuning::tensor_scan_state_bytes(g, outer, accum));
          }
        }
      }
    });
  });
  return bytes;
}

// The explicit workspace: aligned device memory of at least the documented size (when the call
// needs any; one that needs none ignores it, but a non-null pointer is still checked).
void check_workspace(const Workspace& ws, std::size_t need, int device) {
  if (ws.ptr != nullptr) {
    if (reinterpret_cast<std::uintptr_t>(ws.ptr) % 16 != 0)
      throw Error(Errc::invalid_argument, "tensor scan: workspace must be 16-byte aligned");
    detail::check_device_pointer(ws.ptr, "workspace", device);
  }
  if (need > 0 && (ws.ptr == nullptr || ws.bytes < need))
    throw Error(Errc::invalid_argument, "tensor scan: workspace has " + std::to_string(ws.ptr == nullptr ? 0 : ws.bytes) +
                                            " bytes; " + std::to_string(need) +
                                            " are needed (tensor_scan_workspace_bytes())");
}

bool aligned(const void* p, std::size_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

// The tile kernel's parameter for the plan (elements of t_bytes, accumulators of a_bytes, outputs
// of o_bytes), all but init_bits and header; `state`: the look-back's workspace bytes (0: none).
tensor_scan::TileArgs tile_args(const ScanPlan& p, const TensorView& in, const TensorView& out, std::size_t t_bytes,
                                std::size_t a_bytes, std::size_t o_bytes, bool exclusive,
                                const detail::DeviceFacts& facts, std::size_t& state) {
  const ScanMatrix m = foldkit::detail::scan_matrix(p);
  const int narrow = narrow_vec(m, t_bytes);
  const auto g = tuning::tensor_scan_geometry(t_bytes, a_bytes, m.rows, m.cols, narrow, m.axis_major());
  tensor_scan::TileArgs a;
  a.in = in.data;
  a.out = out.data;
  a.rows = m.rows;
  a.cols = m.cols;
  a.in_rs = m.in_rs;
  a.out_rs = m.out_rs;
  a.in_cs = m.in_cs;
  a.out_cs = m.out_cs;
  a.outer_rank = m.outer_rank;
  bool in_outer_ok = true, out_outer_ok = true;
  const std::int64_t in_vec = 16 / static_cast<std::int64_t>(t_bytes);
  const std::int64_t out_vec = o_bytes > 16 ? 1 : 16 / static_cast<std::int64_t>(o_bytes);
  for (int d = 0; d < m.outer_rank; ++d) {
    a.outer_size[d] = m.outer[d].size;
    a.outer_in[d] = m.outer[d].in_stride;
    a.outer_out[d] = m.outer[d].out_stride;
    in_outer_ok = in_outer_ok && m.outer[d].in_stride % in_vec == 0;
    out_outer_ok = out_outer_ok && m.outer[d].out_stride % out_vec == 0;
  }
  // A chained tile's look-back keeps per-column state for at most kTensorScanChainTCLimit thread
  // columns (the geometry never makes wider chained tiles).
  if (g.row_tiles > 1 && g.tc_shift > tuning::tensor_scan_log2(tuning::kTensorScanChainTCLimit))
    throw Error(Errc::cuda_error, "tensor scan: internal error (chained tile too wide)");
  if (m.outer_count * g.row_tiles * g.col_tiles > 0x7fffffffLL)
    throw Error(Errc::unsupported, "tensor scan: too many tiles for one launch");
  // Whole chunks as 16-byte copies: unit column stride, 16-byte aligned rows and outer steps
  // (flat tiles: the lines back to back as well).
  if (narrow > 0) {
    a.in_vec = aligned(in.data, 16) && in_outer_ok;
    a.out_vec = aligned(out.data, 16) && out_outer_ok;
  } else {
    a.in_vec = m.in_cs == 1 && aligned(in.data, 16) && in_outer_ok && (m.rows == 1 || m.in_rs % in_vec == 0);
    a.out_vec = m.out_cs == 1 && aligned(out.data, 16) && out_outer_ok && (m.rows == 1 || m.out_rs % out_vec == 0);
  }
  a.exclusive = exclusive;
  // The tiles, and the L2 prefetch ahead of them in calls of several waves whose rows are 16-byte runs.
  tensor_scan::set_tile_geometry(a, g, m.outer_count, a_bytes > t_bytes, facts.sm_count);
  state = tuning::tensor_scan_state_bytes(g, m.outer_count, a_bytes);
  return a;
}

// Launches the tile kernel for the plan (op, T; seed: the exclusive init as R, or NoInit).
template <ReduceOp Op, class T, class Seed>
void run_tiles(const ScanPlan& p, const TensorView& in, const TensorView& out, Seed seed, const Workspace* ws,
               cudaStream_t stream, const detail::DeviceFacts& facts) {
  using A = scan_accum_t<Op, T>;
  using O = scan_result_t<Op, T>;
  std::size_t state = 0;
  tensor_scan::TileArgs a =
      tile_args(p, in, out, sizeof(T), sizeof(A), sizeof(O), !erased::is_inclusive_v<Seed>, facts, state);
  if constexpr (!erased::is_inclusive_v<Seed>) {
    const A init = static_cast<A>(seed);
    static_assert(sizeof(A) <= sizeof(a.init_bits));
    std::memcpy(&a.init_bits, &init, sizeof(A));
  }
  // The look-back's state.
  const bool convenient = ws == nullptr;
  if (state > 0) {
    const Workspace w = convenient ? detail::scan_stream_workspace(stream, state) : *ws;
    a.header = static_cast<ScanHeader*>(w.ptr);
  }
  tensor_scan::launch_tiles<Op, T>(a, stream, facts.device);
  if (state > 0 && convenient) detail::scan_stream_workspace_launched(stream);
}

// The checks every CUDA tensor scan makes after the plan's: device views of the current device,
// aligned data, and the explicit workspace against the documented size.
detail::DeviceFacts check_call(const ScanPlan& plan, const TensorView& in, const TensorView& out, const Workspace* ws) {
  const detail::DeviceFacts facts = detail::current_device_facts();
  detail::check_device_view(in, "input", facts.device);
  detail::check_device_view(out, "out", facts.device);
  if (!aligned(in.data, dtype_size(in.dtype)) || !aligned(out.data, dtype_size(out.dtype)))
    throw Error(Errc::invalid_argument, "tensor scan: input or output is not aligned to its element size");
  if (ws != nullptr) check_workspace(*ws, workspace_bound(in, plan), facts.device);
  return facts;
}

void run(ReduceOp op, const TensorView& in, int axis, const TensorView& out, const Scalar* init, const Workspace* ws,
         cudaStream_t stream) {
  const ScanPlan plan = foldkit::detail::prepare_scan(op, in, axis, out, init);
  const detail::DeviceFacts facts = check_call(plan, in, out, ws);
  if (plan.family == ScanFamily::empty) return;
  if (plan.family == ScanFamily::rows_contiguous) {
    // The core's blocked scan of the flat array (it takes the same Scalar init, and the same
    // workspace or the same per-stream cache).
    if (init != nullptr) {
      if (ws != nullptr) exclusive_scan_blocked(op, in.dtype, in.data, plan.numel, out.data, plan.len, *init, *ws, stream);
      else exclusive_scan_blocked(op, in.dtype, in.data, plan.numel, out.data, plan.len, *init, stream);
    } else {
      if (ws != nullptr) inclusive_scan_blocked(op, in.dtype, in.data, plan.numel, out.data, plan.len, *ws, stream);
      else inclusive_scan_blocked(op, in.dtype, in.data, plan.numel, out.data, plan.len, stream);
    }
    return;
  }
  erased::visit_scan(op, in.dtype, init, [&](auto op_tag, auto tag, auto seed) {
    run_tiles<decltype(op_tag)::value, decltype(tag)>(plan, in, out, seed, ws, stream, facts);
  });
}

}  // namespace

namespace detail {

TensorScanSetup prepare_tensor_scan_custom(DType dtype, const TensorView& in, int axis, const TensorView& out,
                                           bool exclusive, const Workspace* ws) {
  const ScanPlan plan = foldkit::detail::prepare_scan_custom(dtype, in, axis, out);
  const DeviceFacts facts = check_call(plan, in, out, ws);
  TensorScanSetup setup;
  setup.device = facts.device;
  if (plan.family == ScanFamily::empty) return setup;
  setup.empty = false;
  const std::size_t elem = dtype_size(dtype);
  if (plan.family == ScanFamily::rows_contiguous && elem >= 4) {  // the core's custom scans: 4 or 8 bytes
    setup.blocked = true;
    setup.numel = plan.numel;
    setup.len = plan.len;
    return setup;
  }
  setup.tiles = tile_args(plan, in, out, elem, elem, elem, exclusive, facts, setup.state_bytes);
  return setup;
}

}  // namespace detail

std::size_t tensor_scan_workspace_bytes(const TensorView& in, int axis) {
  validate(in, "input");
  return workspace_bound(in, foldkit::detail::plan_scan(in, axis));
}

void inclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, Workspace ws,
                    cudaStream_t stream) {
  run(op, in, axis, out, nullptr, &ws, stream);
}
void inclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, cudaStream_t stream) {
  run(op, in, axis, out, nullptr, nullptr, stream);
}
void exclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, Scalar init, Workspace ws,
                    cudaStream_t stream) {
  run(op, in, axis, out, &init, &ws, stream);
}
void exclusive_scan(ReduceOp op, const TensorView& in, int axis, const TensorView& out, Scalar init,
                    cudaStream_t stream) {
  run(op, in, axis, out, &init, nullptr, stream);
}

}  // namespace foldkit::cuda
