// What the header-only user-functor tensor reductions (foldkit/cuda/tensor_reduce_custom.cuh)
// take from the library (src/cuda/tensor_reduce.cu): the checks, the plan and the launch choice
// of reduce() for an output of the input's dtype, and the workspace check. Internal (namespace
// detail), installed because that header needs it; the planner and the family choice stay
// compiled once, in the library, whatever functors a program uses.
#pragma once

#include <cstddef>
#include <string>

#include "foldkit/cuda/device/tensor_reduce_args.hpp"
#include "foldkit/cuda/reduce.hpp"  // Workspace
#include "foldkit/dtype.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit::cuda::detail {

// A checked call: the launch (choice.launch.out_numel == 0: nothing to launch) and the
// workspace bytes it needs (0: none).
struct TensorReduceSetup {
  tensor::Choice choice;
  std::size_t ws_bytes = 0;
};

// Every check reduce() makes (views, axes, output shape and strides, overlap, memory of the
// current device), for a functor over `dtype` whose output is of that dtype too (the input's and
// the output's dtype must both be `dtype`; an empty reduced extent is allowed: the identity), then
// the plan and the kernel family and launch shape the built-in ops of that element size would
// get (a sum's, not argmin/argmax's; the accumulator is the element). Throws as reduce() does.
TensorReduceSetup prepare_tensor_reduce_custom(DType dtype, const TensorView& in, AxisList axes, bool keepdims,
                                               const TensorView& out);

// The explicit workspace's check (null, alignment, size, device memory) for a launch that needs
// `need` bytes; nothing when need == 0. Throws Error(invalid_argument / wrong_memory).
void check_tensor_reduce_workspace(Workspace ws, std::size_t need);

// describe_reduce()'s line for such a call (the plan, then the kernel launch).
std::string describe_tensor_reduce_custom(DType dtype, const TensorView& in, AxisList axes, bool keepdims,
                                          const TensorView& out);

}  // namespace foldkit::cuda::detail
