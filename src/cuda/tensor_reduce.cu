// foldkit::cuda::reduce over tensors (foldkit/cuda/tensor_reduce.hpp): checks, then picks a
// kernel family and launch shape from the backend-independent plan
// (foldkit/detail/reduce_plan.hpp) and launches it (kernels:
// foldkit/cuda/device/tensor_reduce_kernels.cuh, instantiated in
// tensor_reduce_{int,int64,float,half}.cu; constants: foldkit/cuda/tuning/tensor_reduce_tuning.hpp).
// The user-functor path (foldkit/cuda/tensor_reduce_custom.cuh) gets its checks and its choice
// here too (dispatch/tensor_reduce_runtime.hpp) and launches the same kernels with its functor.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/erased_dispatch.hpp"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/dispatch/tensor_reduce_runtime.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/tensor_reduce.hpp"
#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/error.hpp"
#include "foldkit/ops.hpp"
#include "tensor_reduce_launch.cuh"

namespace foldkit::cuda {
namespace tensor {
FOLDKIT_TENSOR_REDUCE_EXTERN(std::int32_t)
FOLDKIT_TENSOR_REDUCE_EXTERN(std::uint32_t)
FOLDKIT_TENSOR_REDUCE_EXTERN(std::int64_t)
FOLDKIT_TENSOR_REDUCE_EXTERN(std::uint64_t)
FOLDKIT_TENSOR_REDUCE_EXTERN(float)
FOLDKIT_TENSOR_REDUCE_EXTERN(double)
FOLDKIT_TENSOR_REDUCE_EXTERN(half)
FOLDKIT_TENSOR_REDUCE_EXTERN(bfloat16)
}  // namespace tensor

namespace {

using foldkit::detail::PlanDim;
using foldkit::detail::ReducePlan;
using tensor::Choice;
using tensor::Dims;
using tensor::Family;
namespace tn = tuning;

constexpr std::int64_t kIntMax = 0x7fffffff;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
int ceil_log2(std::int64_t v) {
  int s = 0;
  while ((std::int64_t{1} << s) < v) ++s;
  return s;
}
std::size_t align16(std::size_t b) { return (b + 15) / 16 * 16; }

// Chunks per output (1..max_chunks) for a launch of outputs * chunks equal blocks of which
// `resident` run at once: the fewest that fill the last wave to tn::kWaveFillPercent, else the
// fullest of the few tried. (256, 2^18) f32 over dim 1 took 5 chunks, 1280 blocks at 396
// resident: 3.2 waves, the last a fifth full.
std::int64_t whole_waves_chunks(std::int64_t outputs, std::int64_t max_chunks, std::int64_t resident) {
  max_chunks = std::max<std::int64_t>(1, max_chunks);
  const std::int64_t first = std::clamp<std::int64_t>(resident / outputs, 1, max_chunks);
  const std::int64_t last = std::min(max_chunks, 8 * first + 8);
  std::int64_t best = first, best_fill = 0;
  for (std::int64_t ch = first; ch <= last; ++ch) {
    const std::int64_t blocks = outputs * ch;
    const std::int64_t fill = blocks * 100 / (ceil_div(blocks, resident) * resident);
    if (fill >= tn::kWaveFillPercent) return ch;
    if (fill > best_fill) best = ch, best_fill = fill;
  }
  return best;
}

void copy_dims(Dims& d, const PlanDim* dims, int count) {
  d.rank = count;
  for (int i = 0; i < count; ++i) {
    d.size[i] = dims[i].size;
    d.in[i] = dims[i].in_stride;
    d.out[i] = dims[i].out_stride;
    d.out2[i] = dims[i].out2_stride;
  }
}
bool strides_divisible(const Dims& d, std::int64_t v) {
  for (int i = 0; i < d.rank; ++i)
    if (d.in[i] % v != 0) return false;
  return true;
}

std::size_t accum_bytes(ReduceOp op, DType dtype) {
  return visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    std::size_t b = 0;
    erased::visit_reduce_op(op, [&](auto op_tag) { b = sizeof(reduce_accum_t<decltype(op_tag)::value, T>); });
    return b;
  });
}

// The family and launch shape for a plan, and the workspace bytes it needs (0: none).
using Chosen = detail::TensorReduceSetup;

// What the kernels fold, as far as the choice depends on it: the element's and the
// accumulator's bytes (vector width, workspace partials) and whether it is argmin/argmax.
struct Folded {
  std::size_t element_bytes;
  std::size_t accum_bytes;
  bool is_arg;
};
Folded folded(ReduceOp op, DType dtype) {
  return Folded{dtype_size(dtype), accum_bytes(op, dtype), op == ReduceOp::argmin || op == ReduceOp::argmax};
}

Chosen choose(const ReducePlan& p, const Folded& what, const void* in, int sm_count) {
  Chosen r;
  Choice& c = r.choice;
  tensor::Launch& l = c.launch;
  l.out_numel = p.out_numel;
  l.reduce_numel = p.reduce_numel;
  const std::int64_t V = 16 / static_cast<std::int64_t>(what.element_bytes);
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
  const std::int64_t sms = sm_count > 0 ? sm_count : 1;
  const std::int64_t full_grid = sms * tn::kTensorBlocksPerSm;
  const std::size_t abytes = what.accum_bytes;
  // argmin/argmax of 2- and 4-byte types fold a 64-bit key|index (tensor_reduce_ops.cuh,
  // TensorSpec): positions per output must fit its index bits, or the generic kernel takes it.
  const bool is_arg = what.is_arg;
  const std::int64_t packed_arg_limit = what.element_bytes == 4   ? (std::int64_t{1} << 32)
                                        : what.element_bytes == 2 ? (std::int64_t{1} << 48)
                                                                  : INT64_MAX;
  const PlanDim* inner_red = p.reduced_rank > 0 ? &p.reduced[p.reduced_rank - 1] : nullptr;
  const PlanDim* inner_kept = p.kept_rank > 0 ? &p.kept[p.kept_rank - 1] : nullptr;

  if ((inner_red == nullptr || inner_red->in_stride == 1) && (!is_arg || p.reduce_numel < packed_arg_limit)) {
    // Rows: runs of `run` contiguous elements (no reduced dim: runs of one element).
    copy_dims(l.kept, p.kept, p.kept_rank);
    copy_dims(l.red, p.reduced, p.reduced_rank > 0 ? p.reduced_rank - 1 : 0);
    l.run = inner_red != nullptr ? inner_red->size : 1;
    const bool packed = aligned && p.reduced_rank == 1 && p.kept_rank == 1 && p.kept[0].in_stride == l.run &&
                        l.run >= 2 && l.run < V && V % l.run == 0 && p.out_numel >= V / l.run;
    if (packed) {
      c.family = Family::rows_packed;
      const std::int64_t threads = ceil_div(p.out_numel / (V / l.run), tn::kRowsOutputsPerGroup);
      c.grid = static_cast<unsigned>(std::clamp<std::int64_t>(ceil_div(threads, tn::kTensorThreads), 1, full_grid));
      return r;
    }
    c.vec = aligned && l.run % V == 0 && strides_divisible(l.kept, V) && strides_divisible(l.red, V);
    const std::int64_t slots = p.reduce_numel / (c.vec ? V : 1);
    const bool adjacent = c.vec && p.reduced_rank == 1 && p.kept_rank == 1 && p.kept[0].in_stride == l.run;
    // Short rows (a power of two up to 32 * kDenseMaxVectorsPerLane vectors), or long rows of
    // whole rounds of 8 vectors per lane when there are enough of them for a warp each.
    const bool short_dense = slots <= 32 * tn::kDenseMaxVectorsPerLane && (slots & (slots - 1)) == 0;
    const bool long_dense = slots % (32 * tn::kDenseLoadsInFlight) == 0 && slots <= 32 * tn::kDenseMaxVectorsPerLaneLong &&
                            p.out_numel >= sms * tn::kDenseLongMinRowsPerSm;
    if (adjacent && (short_dense || long_dense)) {
      c.family = Family::rows_dense;
      // Lanes per row: the row's vectors up to a warp, but fewer for the rows whose shuffle
      // levels cost more than folding a vector (tuning: kDenseFewLanes).
      const bool few_lanes = (is_arg || what.element_bytes == 2) && slots >= tn::kDenseFewLanesMinVectors &&
                             slots <= tn::kDenseFewLanesMaxVectors;
      const std::int64_t lanes = few_lanes ? tn::kDenseFewLanes : std::min<std::int64_t>(slots, 32);
      l.group_shift = ceil_log2(lanes);
      l.chunks = slots / lanes;  // vectors per lane (M)
      if (!short_dense) {
        // Long rows, a warp each: every warp the same number of rows, the fewest that fit the
        // grid into one wave of kDenseLongBlocksPerSm blocks an SM (a grid-stride grid of 8 an SM,
        // of which 5 fit, ran 1.6 waves).
        const std::int64_t warps_at_once = sms * tn::kDenseLongBlocksPerSm * (tn::kTensorThreads / 32);
        const std::int64_t rows_per_warp = ceil_div(p.out_numel, warps_at_once);
        const std::int64_t warps = ceil_div(p.out_numel, rows_per_warp);
        c.grid = static_cast<unsigned>(std::clamp<std::int64_t>(ceil_div(warps, tn::kTensorThreads / 32), 1, full_grid));
        return r;
      }
      const std::int64_t threads = ceil_div(p.out_numel * slots, tn::kDenseLoadsInFlight);
      c.grid = static_cast<unsigned>(std::clamp<std::int64_t>(ceil_div(threads, tn::kTensorThreads), 1, full_grid));
      return r;
    }
    const int shift = std::min(5, ceil_log2(slots));
    const std::int64_t per_group = is_arg ? tn::kRowsArgOutputsPerGroup : tn::kRowsOutputsPerGroup;
    const std::int64_t group_lanes = ceil_div(p.out_numel, per_group) << shift;
    const bool few_outputs = group_lanes < sms * tn::kRowsGroupMinLanesPerSm;
    if (few_outputs && slots > 32 * per_group && p.out_numel <= kIntMax) {
      c.family = Family::rows_block;
      // Blocks resident at once: the minimum the kernel's __launch_bounds__ guarantee.
      const std::int64_t resident = sms * tn::rows_block_min_blocks(tensor::rows_block_contiguous(c), is_arg);
      const std::int64_t by_work = std::max<std::int64_t>(1, slots / (tn::kTensorThreads * tn::kRowsMinVectorsPerThread));
      // Many waves of one block per output: no split (the last wave's idle slots cost less than
      // the split's partials and last-block combine: (4096, 16384) f32 over dim 1 split in 2 at
      // 89.9 % of the read ceiling, the same bf16 rows unsplit at 98.5 %).
      l.chunks = p.out_numel >= tn::kRowsBlockUnsplitMinWaves * resident
                     ? 1
                     : whole_waves_chunks(p.out_numel, std::min(by_work, kIntMax / p.out_numel), resident);
      c.grid = static_cast<unsigned>(p.out_numel * l.chunks);
      if (l.chunks > 1) {
        l.partials_offset = static_cast<std::int64_t>(align16(static_cast<std::size_t>(p.out_numel) * 4));
        r.ws_bytes = static_cast<std::size_t>(l.partials_offset) + static_cast<std::size_t>(p.out_numel * l.chunks) * abytes;
      }
      return r;
    }
    c.family = Family::rows_group;
    l.group_shift = shift;
    c.grid = static_cast<unsigned>(std::clamp<std::int64_t>(ceil_div(group_lanes, tn::kTensorThreads), 1, full_grid));
    return r;
  }

  if (inner_kept != nullptr && inner_kept->in_stride == 1) {
    // Outer: columns contiguous, every reduced dim outside them.
    copy_dims(l.kept, p.kept, p.kept_rank - 1);
    copy_dims(l.red, p.reduced, p.reduced_rank);
    l.cols = inner_kept->size;
    l.col_out = inner_kept->out_stride;
    l.col_out2 = inner_kept->out2_stride;
    l.batches = p.out_numel / l.cols;
    c.vec = aligned && l.cols % V == 0 && strides_divisible(l.red, V) && strides_divisible(l.kept, V);
    const std::int64_t cvec = l.cols / (c.vec ? V : 1);
    // Rows of 1-8 whole vectors back to back, one batch: the flat read (outer-flat).
    const std::int64_t in_bytes = p.reduce_numel * l.cols * static_cast<std::int64_t>(what.element_bytes);
    if (!is_arg && c.vec && l.kept.rank == 0 && l.red.rank == 1 && l.red.in[0] == l.cols && cvec <= tn::kOuterFlatMaxVectorsPerRow &&
        (cvec & (cvec - 1)) == 0 && p.reduce_numel >= 1 && in_bytes <= tn::kOuterFlatMaxBytes) {
      c.family = Family::outer_flat;
      c.block = tn::kOuterFlatThreads;
      l.tx_shift = ceil_log2(cvec);
      const std::int64_t per_block = std::int64_t{tn::kOuterFlatThreads} * tn::outer_flat_loads_in_flight(what.element_bytes);
      c.grid = static_cast<unsigned>(
          std::clamp<std::int64_t>(ceil_div(p.reduce_numel * cvec, per_block), 1, sms * tn::kOuterFlatBlocksPerSm));
      if (c.grid > 1) {
        l.partials_offset = 16;  // the start ticket, then one flagged slot per block and column
        r.ws_bytes = static_cast<std::size_t>(l.partials_offset) +
                     static_cast<std::size_t>(c.grid) * static_cast<std::size_t>(l.cols) * flagged_slot_bytes(abytes);
      }
      return r;
    }
    // Threads across the columns: as many as the columns and kOuterMaxColumnThreads allow, but
    // fewer when the reduced dim must be split: the last block of a column tile folds the
    // splits' partials with TY = 256 / TX threads per column, so splits / TY is that fold's
    // serial depth (1056 splits folded by one thread per column took 0.4-4 ms at 2^16 x 1024).
    std::int64_t chunks = 1, base_blocks = 0;
    // The minimum resident blocks outer_kernel's __launch_bounds__ guarantee.
    const std::int64_t outer_resident = sms * tn::outer_min_blocks(is_arg);
    const int top = std::min(ceil_log2(cvec), ceil_log2(tn::kOuterMaxColumnThreads));
    // Narrower rows keep the fold-depth rule alone: (2^22, 16) argmax over dim 0 read 78 % of
    // the read ceiling with 2 column threads, 71 % with 4 (sum: 87 % and 90 %).
    const int floor_shift = cvec >= 2 * tn::kOuterMinColumnThreads ? ceil_log2(tn::kOuterMinColumnThreads) : 0;
    for (int shift = top; shift >= floor_shift; --shift) {
      const std::int64_t tx = std::int64_t{1} << shift, ty = tn::kTensorThreads / tx;
      l.tx_shift = shift;
      l.col_tiles = ceil_div(cvec, tx);
      base_blocks = l.batches * l.col_tiles;
      if (base_blocks > kIntMax) break;
      const std::int64_t by_work = std::max<std::int64_t>(1, p.reduce_numel / (ty * tn::kOuterMinRowsPerThread));
      // When the column tiles alone give every SM a block, the splits only cost (partials and
      // the last block's fold): balance blocks per SM instead of filling resident slots.
      // (256, 2^18) f32 over dim 0: 3 splits (768 blocks, 1.94 waves of 396) read 94.4 % of
      // the read ceiling, argmax there (no split: 256 blocks, ~2 per SM) 98.2 %.
      chunks = whole_waves_chunks(base_blocks, std::min(by_work, kIntMax / base_blocks),
                                  base_blocks >= sms ? sms : outer_resident);
      if (chunks == 1 || ceil_div(chunks, ty) <= tn::kOuterMaxFoldDepth) break;
    }
    // Unsplit, one reduced dim of more than one round of loads a thread: halve the column
    // threads (twice the threads a column vector, a tree one level deeper) until each thread
    // folds at most one round, down to kOuterOneRoundMinColumnThreads.
    while (!is_arg && chunks == 1 && l.red.rank == 1 && base_blocks <= kIntMax / 2 &&
           (1 << l.tx_shift) >= 2 * tn::kOuterOneRoundMinColumnThreads &&
           p.reduce_numel > (tn::kTensorThreads >> l.tx_shift) * tn::outer_loads_per_round(what.element_bytes)) {
      --l.tx_shift;
      l.col_tiles = ceil_div(cvec, std::int64_t{1} << l.tx_shift);
      base_blocks = l.batches * l.col_tiles;
    }
    if (base_blocks <= kIntMax && (!is_arg || p.reduce_numel < packed_arg_limit)) {
      const std::int64_t tx = std::int64_t{1} << l.tx_shift;
      l.chunks = chunks;
      c.family = Family::outer;
      c.grid = static_cast<unsigned>(base_blocks * l.chunks);
      if (l.chunks > 1) {
        l.partials_offset = static_cast<std::int64_t>(align16(static_cast<std::size_t>(base_blocks) * 4));
        const std::int64_t slot_sets = tensor::outer_splits_meet_in_slots(is_arg, what.element_bytes) ? 1 : l.chunks;
        r.ws_bytes = static_cast<std::size_t>(l.partials_offset) +
                     static_cast<std::size_t>(base_blocks * slot_sets * tx * (c.vec ? V : 1)) * abytes;
      }
      return r;
    }
  }

  // Generic: one warp per output.
  c.family = Family::generic;
  c.vec = false;
  l = tensor::Launch{};
  l.out_numel = p.out_numel;
  l.reduce_numel = p.reduce_numel;
  copy_dims(l.kept, p.kept, p.kept_rank);
  copy_dims(l.red, p.reduced, p.reduced_rank);
  if (l.red.rank == 0) {  // nothing reduced: rows of one element
    l.red.rank = 1;
    l.red.size[0] = 1;
    l.red.in[0] = 0;
  }
  const std::int64_t warps_per_block = tn::kTensorThreads / 32;
  c.grid = static_cast<unsigned>(std::clamp<std::int64_t>(ceil_div(p.out_numel, warps_per_block), 1, full_grid));
  return r;
}

const char* family_name(Family f) {
  switch (f) {
    case Family::rows_packed: return "rows-packed";
    case Family::rows_dense: return "rows-dense";
    case Family::rows_group: return "rows-group";
    case Family::rows_block: return "rows-block";
    case Family::outer: return "outer";
    case Family::outer_flat: return "outer-flat";
    case Family::generic: return "generic";
  }
  return "?";
}

std::string describe_choice(const Chosen& ch) {
  const Choice& c = ch.choice;
  const tensor::Launch& l = c.launch;
  std::string s = std::string("kernel=") + family_name(c.family) + (c.vec ? " vec16" : "") +
                  " grid=" + std::to_string(c.grid) + "x" + std::to_string(c.block);
  switch (c.family) {
    case Family::rows_packed: s += " run=" + std::to_string(l.run); break;
    case Family::rows_dense:
      s += " run=" + std::to_string(l.run) + " lanes/output=" + std::to_string(1 << l.group_shift);
      break;
    case Family::rows_group: s += " run=" + std::to_string(l.run) + " lanes/output=" + std::to_string(1 << l.group_shift); break;
    case Family::rows_block: s += " run=" + std::to_string(l.run) + " blocks/output=" + std::to_string(l.chunks); break;
    case Family::outer:
      s += " cols=" + std::to_string(l.cols) + " threads/cols=" + std::to_string(1 << l.tx_shift) +
           " splits=" + std::to_string(l.chunks);
      break;
    case Family::outer_flat:
      s += " cols=" + std::to_string(l.cols) + " vectors/row=" + std::to_string(1 << l.tx_shift) +
           " blocks=" + std::to_string(c.grid);
      break;
    case Family::generic: break;
  }
  if (ch.ws_bytes > 0) s += " workspace=" + std::to_string(ch.ws_bytes);
  return s;
}


struct Prepared {
  ReducePlan plan;
  Chosen chosen;
};

Prepared prepare(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out,
                 const TensorView* values) {
  Prepared pr;
  pr.plan = foldkit::detail::prepare_reduce(op, in, axes, keepdims, out, values);
  const detail::DeviceFacts facts = detail::current_device_facts();
  detail::check_device_view(in, "input", facts.device);
  detail::check_device_view(out, values != nullptr ? "indices" : "out", facts.device);
  if (values != nullptr) detail::check_device_view(*values, "values", facts.device);
  if (pr.plan.out_numel > 0) pr.chosen = choose(pr.plan, folded(op, in.dtype), in.data, facts.sm_count);
  return pr;
}

// The user-functor form of prepare(): sum-like (no argmin/argmax) over `dtype`, whose
// accumulator is the element itself.
Prepared prepare_custom(DType dtype, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out) {
  Prepared pr;
  pr.plan = foldkit::detail::prepare_reduce_custom(dtype, in, axes, keepdims, out);
  const detail::DeviceFacts facts = detail::current_device_facts();
  detail::check_device_view(in, "input", facts.device);
  detail::check_device_view(out, "out", facts.device);
  const std::size_t bytes = dtype_size(dtype);
  if (pr.plan.out_numel > 0) pr.chosen = choose(pr.plan, Folded{bytes, bytes, false}, in.data, facts.sm_count);
  return pr;
}

void check_workspace(Workspace ws, std::size_t need) {
  if (need == 0) return;
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "workspace is null; this reduction needs " + std::to_string(need) + " bytes");
  if (reinterpret_cast<std::uintptr_t>(ws.ptr) % 16 != 0)
    throw Error(Errc::invalid_argument, "workspace must be 16-byte aligned");
  if (ws.bytes < need)
    throw Error(Errc::invalid_argument, "workspace has " + std::to_string(ws.bytes) + " bytes; " + std::to_string(need) +
                                            " are needed (tensor_reduce_workspace_bytes())");
  detail::check_device_pointer(ws.ptr, "workspace");
}

void launch(Prepared& pr, ReduceOp op, const TensorView& in, const TensorView& out, const TensorView* values,
            Workspace ws, cudaStream_t stream) {
  if (pr.plan.out_numel == 0) return;
  tensor::Launch& l = pr.chosen.choice.launch;
  l.in = in.data;
  l.out = out.data;
  l.out2 = values != nullptr ? values->data : nullptr;
  l.ws = ws.ptr;
  visit_dtype(in.dtype, [&](auto tag) {
    using T = decltype(tag);
    erased::visit_reduce_op(
        op, [&](auto op_tag) { tensor::launch_kernel<decltype(op_tag)::value, T>(pr.chosen.choice, stream); });
  });
  detail::check_cuda(cudaGetLastError(), "tensor reduce kernel launch");
}

void run(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out,
         const TensorView* values, const Workspace* ws, cudaStream_t stream) {
  Prepared pr = prepare(op, in, axes, keepdims, out, values);
  if (pr.plan.out_numel == 0) return;
  if (ws != nullptr) {
    check_workspace(*ws, pr.chosen.ws_bytes);
    launch(pr, op, in, out, values, *ws, stream);
  } else if (pr.chosen.ws_bytes == 0) {
    launch(pr, op, in, out, values, Workspace{}, stream);
  } else {
    launch(pr, op, in, out, values, detail::stream_workspace(stream, pr.chosen.ws_bytes), stream);
  }
}

void check_arg_op(ReduceOp op) {
  if (op != ReduceOp::argmin && op != ReduceOp::argmax)
    throw Error(Errc::invalid_argument, std::string("arg_reduce takes argmin or argmax, not ") +
                                            (is_valid(op) ? op_name(op) : "an unknown op"));
}

}  // namespace

std::size_t tensor_reduce_workspace_bytes(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims) {
  validate(in, "input");
  erased::check_enums(op, in.dtype);
  const bool is_arg = op == ReduceOp::argmin || op == ReduceOp::argmax;
  const ReducePlan p = foldkit::detail::plan_reduce(
      in, axes, keepdims, nullptr, is_arg ? foldkit::detail::ReducedOrder::logical : foldkit::detail::ReducedOrder::memory);
  if (p.out_numel == 0) return 0;
  return choose(p, folded(op, in.dtype), in.data, detail::current_device_facts().sm_count).ws_bytes;
}
std::size_t tensor_reduce_workspace_bytes(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims,
                                          const TensorView& out) {
  return prepare(op, in, axes, keepdims, out, nullptr).chosen.ws_bytes;
}

std::string describe_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out) {
  Prepared pr = prepare(op, in, axes, keepdims, out, nullptr);
  return foldkit::detail::describe_plan(pr.plan) + " " + describe_choice(pr.chosen);
}

void reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out,
            cudaStream_t stream) {
  run(op, in, axes, keepdims, out, nullptr, nullptr, stream);
}
void reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out, Workspace ws,
            cudaStream_t stream) {
  run(op, in, axes, keepdims, out, nullptr, &ws, stream);
}

void arg_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& indices,
                const TensorView& values, cudaStream_t stream) {
  check_arg_op(op);
  run(op, in, axes, keepdims, indices, &values, nullptr, stream);
}
void arg_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& indices,
                const TensorView& values, Workspace ws, cudaStream_t stream) {
  check_arg_op(op);
  run(op, in, axes, keepdims, indices, &values, &ws, stream);
}

namespace detail {

TensorReduceSetup prepare_tensor_reduce_custom(DType dtype, const TensorView& in, AxisList axes, bool keepdims,
                                               const TensorView& out) {
  return prepare_custom(dtype, in, axes, keepdims, out).chosen;
}

void check_tensor_reduce_workspace(Workspace ws, std::size_t need) { check_workspace(ws, need); }

std::string describe_tensor_reduce_custom(DType dtype, const TensorView& in, AxisList axes, bool keepdims,
                                          const TensorView& out) {
  Prepared pr = prepare_custom(dtype, in, axes, keepdims, out);
  return foldkit::detail::describe_plan(pr.plan) + " " + describe_choice(pr.chosen);
}

}  // namespace detail

}  // namespace foldkit::cuda
