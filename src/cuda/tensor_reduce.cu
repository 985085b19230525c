// foldkit::cuda::reduce over tensors (foldkit/cuda/tensor_reduce.hpp): executes the
// backend-independent plan (foldkit/detail/reduce_plan.hpp) with one generic kernel family.
//
// Kernel: one WARP per output element (warps walk the output elements grid-stride). Output
// element o is numbered row-major over the plan's canonical kept dimensions; its row (the
// reduce_numel elements it folds) is numbered row-major over the canonical reduced dimensions
// (for argmin/argmax those are in logical order, so the number is the index along the reduced
// axis, or the flat row-major index for a whole-tensor argmin/argmax, as on the CPU). Lane l
// folds positions l, l + 32, l + 64, ... left to right (an odometer over the reduced dimensions
// advanced 32 positions at a time: carries need a division only when they happen), then the 32
// lane partials combine in a fixed shuffle tree (warp_reduce: lane i with lane i + delta, lower
// lane on the left) and lane 0 finalizes and writes (arg_reduce's value: the winning input
// element itself, reloaded by its index, so its bits are the input's). No shared memory, no
// workspace, no atomics: the result's bits depend only on the plan. Consecutive lanes read
// consecutive positions, so a contiguous row is read coalesced; other families get their own
// kernels in a later slice.
//
// Instantiated for the 8 dtypes x 7 ops in this one file (56 small kernels).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/erased_dispatch.hpp"
#include "foldkit/cuda/dispatch/runtime.hpp"
#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/tensor_reduce.hpp"
#include "foldkit/cuda/warp/warp_reduce.cuh"
#include "foldkit/detail/reduce_plan.hpp"
#include "foldkit/error.hpp"
#include "foldkit/ops.hpp"

namespace foldkit::cuda {
namespace {

// The plan, flattened for the kernel (passed by value: about 450 bytes of parameters).
struct TensorReduceArgs {
  const void* in;
  void* out;   // the result (arg ops: the int64 index)
  void* out2;  // arg_reduce's values (input dtype), or null
  std::int64_t out_numel;
  std::int64_t reduce_numel;
  int kept_rank;
  int reduced_rank;  // >= 1 (a plan without reduced dimensions gets one of size 1)
  std::int64_t kept_size[kMaxRank];
  std::int64_t kept_in[kMaxRank];
  std::int64_t kept_out[kMaxRank];
  std::int64_t kept_out2[kMaxRank];
  std::int64_t red_size[kMaxRank];
  std::int64_t red_in[kMaxRank];
};

constexpr int kWarpsPerBlock = 8;
constexpr int kThreads = kWarpsPerBlock * 32;

template <ReduceOp Op, class T>
__global__ void __launch_bounds__(kThreads) tensor_reduce_warp_kernel(const TensorReduceArgs a) {
  using Tr = reduce_traits<Op, T>;
  using A = typename Tr::accum_type;
  const typename Tr::combine_type f{};
  const T* in = static_cast<const T*>(a.in);
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const std::int64_t warp0 = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) >> 5;
  const int inner = a.reduced_rank - 1;

  for (std::int64_t o = warp0; o < a.out_numel; o += warps) {  // warp-uniform loop
    // Offsets of output element o (row-major over the canonical kept dimensions).
    std::int64_t in_base = 0, out_off = 0, out2_off = 0;
    {
      std::int64_t rest = o;
      for (int d = a.kept_rank - 1; d >= 0; --d) {
        const std::int64_t i = rest % a.kept_size[d];
        rest /= a.kept_size[d];
        in_base += i * a.kept_in[d];
        out_off += i * a.kept_out[d];
        out2_off += i * a.kept_out2[d];
      }
    }
    A acc = Tr::identity();
    if (lane < a.reduce_numel) {
      // Odometer at position `lane`.
      std::int64_t idx[kMaxRank];
      std::int64_t off = 0;
      {
        std::int64_t rest = lane;
        for (int d = inner; d >= 0; --d) {
          idx[d] = rest % a.red_size[d];
          rest /= a.red_size[d];
          off += idx[d] * a.red_in[d];
        }
      }
      for (std::int64_t pos = lane;;) {
        acc = f(acc, Tr::from_element(in[in_base + off], pos));
        pos += 32;
        if (pos >= a.reduce_numel) break;
        // Advance the odometer by 32 positions.
        idx[inner] += 32;
        off += 32 * a.red_in[inner];
        for (int d = inner; d > 0 && idx[d] >= a.red_size[d]; --d) {
          const std::int64_t q = idx[d] / a.red_size[d];
          idx[d] -= q * a.red_size[d];
          off -= q * a.red_size[d] * a.red_in[d];
          idx[d - 1] += q;
          off += q * a.red_in[d - 1];
        }
      }
    }
    acc = warp_reduce(acc, f);
    if (lane == 0) {
      const auto result = Tr::finalize(acc, a.reduce_numel);
      if constexpr (Tr::kUsesIndex) {
        static_cast<std::int64_t*>(a.out)[out_off] = result.index;
        if (a.out2 != nullptr) {
          // The value is the winning input element itself, reloaded: result.value went through
          // the compare type (float for f16/bf16), which does not keep a NaN's payload bits.
          std::int64_t rest = result.index, off = 0;
          for (int d = inner; d >= 0; --d) {
            off += (rest % a.red_size[d]) * a.red_in[d];
            rest /= a.red_size[d];
          }
          static_cast<T*>(a.out2)[out2_off] = in[in_base + off];
        }
      } else {
        static_cast<typename Tr::result_type*>(a.out)[out_off] = result;
      }
    }
  }
}

// The grid: at most this many blocks (of 8 warps) per SM, enough to fill it.
constexpr int kBlocksPerSm = 8;

template <ReduceOp Op, class T>
void launch(const TensorReduceArgs& args, int sm_count, cudaStream_t stream) {
  const std::int64_t blocks_needed = (args.out_numel + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const std::int64_t cap = static_cast<std::int64_t>(sm_count > 0 ? sm_count : 1) * kBlocksPerSm;
  const unsigned grid = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(blocks_needed, cap)));
  tensor_reduce_warp_kernel<Op, T><<<grid, kThreads, 0, stream>>>(args);
  detail::check_cuda(cudaGetLastError(), "tensor reduce kernel launch");
}

// The CUDA backend's own checks: views of the current device's memory.
void check_device_view(const TensorView& v, const char* what, int device) {
  if (v.device.kind != DeviceKind::cuda)
    throw Error(Errc::wrong_memory, std::string(what) + " is a host view; the CUDA backend needs device memory");
  if (v.device.id != device)
    throw Error(Errc::wrong_memory, std::string(what) + " is a view of CUDA device " + std::to_string(v.device.id) +
                                        "; the current device is " + std::to_string(device));
  // Views with elements: the pointer must be usable on this device (check_device_pointer throws
  // wrong_memory for host memory or another device's).
  if (v.numel() > 0) detail::check_device_pointer(v.data, what, device);
}

void run(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out,
         const TensorView* values, cudaStream_t stream) {
  const foldkit::detail::ReducePlan p = foldkit::detail::prepare_reduce(op, in, axes, keepdims, out, values);
  const detail::DeviceFacts facts = detail::current_device_facts();
  check_device_view(in, "input", facts.device);
  check_device_view(out, values != nullptr ? "indices" : "out", facts.device);
  if (values != nullptr) check_device_view(*values, "values", facts.device);
  if (p.out_numel == 0) return;

  TensorReduceArgs args{};
  args.in = in.data;
  args.out = out.data;
  args.out2 = values != nullptr ? values->data : nullptr;
  args.out_numel = p.out_numel;
  args.reduce_numel = p.reduce_numel;
  args.kept_rank = p.kept_rank;
  for (int d = 0; d < p.kept_rank; ++d) {
    args.kept_size[d] = p.kept[d].size;
    args.kept_in[d] = p.kept[d].in_stride;
    args.kept_out[d] = p.kept[d].out_stride;
    args.kept_out2[d] = p.kept[d].out2_stride;
  }
  if (p.reduced_rank == 0) {  // nothing reduced: every row is one element
    args.reduced_rank = 1;
    args.red_size[0] = 1;
    args.red_in[0] = 0;
  } else {
    args.reduced_rank = p.reduced_rank;
    for (int d = 0; d < p.reduced_rank; ++d) {
      args.red_size[d] = p.reduced[d].size;
      args.red_in[d] = p.reduced[d].in_stride;
    }
  }
  visit_dtype(in.dtype, [&](auto tag) {
    using T = decltype(tag);
    erased::visit_reduce_op(op, [&](auto op_tag) { launch<decltype(op_tag)::value, T>(args, facts.sm_count, stream); });
  });
}

}  // namespace

void reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& out,
            cudaStream_t stream) {
  run(op, in, axes, keepdims, out, nullptr, stream);
}

void arg_reduce(ReduceOp op, const TensorView& in, AxisList axes, bool keepdims, const TensorView& indices,
                const TensorView& values, cudaStream_t stream) {
  if (op != ReduceOp::argmin && op != ReduceOp::argmax)
    throw Error(Errc::invalid_argument, std::string("arg_reduce takes argmin or argmax, not ") +
                                            (is_valid(op) ? op_name(op) : "an unknown op"));
  run(op, in, axes, keepdims, indices, &values, stream);
}

}  // namespace foldkit::cuda
