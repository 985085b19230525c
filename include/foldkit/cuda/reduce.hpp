// Full-array reductions of device memory: the CUDA backend (available when foldkit was built
// with CUDA; see foldkit/config.hpp's FOLDKIT_WITH_CUDA).
//
//   foldkit::cuda::sum(d_in, n, d_out, stream);              // stream-ordered, no host sync
//   float s = foldkit::cuda::reduce_to_host<foldkit::ReduceOp::sum>(d_in, n, stream);  // syncs
//
// Every call is one kernel launch whatever n is; the result is written to device memory in
// stream order. Results are deterministic: the same input on the same device gives the same
// bits on every call (fixed combine order, no floating-point atomics).
//
// Workspace. The cross-block combine needs a small workspace (a few tens of KB).
// - Explicit form: query reduce_workspace_bytes(), allocate it yourself, zero it once with
//   init_workspace() (or cudaMemsetAsync), then pass it to any number of calls. Each call leaves
//   it zeroed again, so it works under CUDA graph capture. One workspace must not be used by two
//   calls that may run at the same time (e.g. on two streams without ordering between them).
// - Convenient form (no Workspace argument): foldkit keeps one workspace per (host thread,
//   device, stream) and reuses it, so steady-state calls allocate nothing and take no lock.
//   The first call on a new stream allocates it (cudaMalloc) and zeroes it in stream order;
//   to capture a graph, make one call on that stream before capturing or use the explicit form.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "foldkit/dtype.hpp"
#include "foldkit/error.hpp"
#include "foldkit/ops.hpp"

namespace foldkit::cuda {

struct Workspace {
  void* ptr = nullptr;    // device memory, 16-byte aligned
  std::size_t bytes = 0;  // at least reduce_workspace_bytes(device)
};

// Bytes of workspace a reduction needs on `device` (-1: the current device). Depends only on
// the device, never on n or dtype.
std::size_t reduce_workspace_bytes(int device = -1);

// Zeroes a workspace in stream order; required once before its first use.
void init_workspace(Workspace ws, cudaStream_t stream = nullptr);

// Reduces d_in[0, n) into *d_out (device memory). Throws Error: invalid_argument (null
// pointers, n < 0, bad workspace), wrong_memory (pointers not device-accessible or on another
// device), empty_input (min/max/argmin/argmax with n == 0), cuda_error (launch failures).
template <ReduceOp Op, class T>
void reduce(const T* d_in, std::int64_t n, reduce_result_t<Op, T>* d_out, Workspace ws,
            cudaStream_t stream = nullptr);
template <ReduceOp Op, class T>
void reduce(const T* d_in, std::int64_t n, reduce_result_t<Op, T>* d_out, cudaStream_t stream = nullptr);

// Convenience: reduces and returns the result to the host. Synchronises `stream`.
template <ReduceOp Op, class T>
reduce_result_t<Op, T> reduce_to_host(const T* d_in, std::int64_t n, cudaStream_t stream = nullptr);

// Type-erased forms: d_out receives one reduce_result_t<op, dtype>. Throws Error(unsupported)
// for an op or dtype outside the enumerations.
void reduce(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out, Workspace ws,
            cudaStream_t stream = nullptr);
void reduce(ReduceOp op, DType dtype, const void* d_in, std::int64_t n, void* d_out,
            cudaStream_t stream = nullptr);

template <class T> void sum(const T* d_in, std::int64_t n, reduce_result_t<ReduceOp::sum, T>* d_out, cudaStream_t s = nullptr) { reduce<ReduceOp::sum>(d_in, n, d_out, s); }
template <class T> void prod(const T* d_in, std::int64_t n, reduce_result_t<ReduceOp::prod, T>* d_out, cudaStream_t s = nullptr) { reduce<ReduceOp::prod>(d_in, n, d_out, s); }
template <class T> void min(const T* d_in, std::int64_t n, T* d_out, cudaStream_t s = nullptr) { reduce<ReduceOp::min>(d_in, n, d_out, s); }
template <class T> void max(const T* d_in, std::int64_t n, T* d_out, cudaStream_t s = nullptr) { reduce<ReduceOp::max>(d_in, n, d_out, s); }
template <class T> void mean(const T* d_in, std::int64_t n, reduce_result_t<ReduceOp::mean, T>* d_out, cudaStream_t s = nullptr) { reduce<ReduceOp::mean>(d_in, n, d_out, s); }
template <class T> void argmin(const T* d_in, std::int64_t n, ArgResult<T>* d_out, cudaStream_t s = nullptr) { reduce<ReduceOp::argmin>(d_in, n, d_out, s); }
template <class T> void argmax(const T* d_in, std::int64_t n, ArgResult<T>* d_out, cudaStream_t s = nullptr) { reduce<ReduceOp::argmax>(d_in, n, d_out, s); }

// True when the CUDA runtime sees at least one usable GPU (never throws).
bool device_available();

// Arrays of CUDA's own 16-bit types (__half, __nv_bfloat16) are foldkit's (same layout):
// pass as_foldkit_half(p) or as_foldkit_bfloat16(p).
template <class T> const half* as_foldkit_half(const T* p) { static_assert(sizeof(T) == 2); return reinterpret_cast<const half*>(p); }
template <class T> const bfloat16* as_foldkit_bfloat16(const T* p) { static_assert(sizeof(T) == 2); return reinterpret_cast<const bfloat16*>(p); }

namespace detail {
// The workspace the convenient form uses for (this thread, current device, stream).
Workspace stream_workspace(cudaStream_t stream);
// Validation shared by every device entry point: p is usable on the current device (the
// second form takes that device from a caller that already asked for it).
void check_device_pointer(const void* p, const char* what);
void check_device_pointer(const void* p, const char* what, int device);
// The current device for check_device_pointer, or -1 when the runtime cannot say (the check
// then takes its slow path, which reports the error).
int current_device_for_checks();
}  // namespace detail

}  // namespace foldkit::cuda
