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
// Workspace. The cross-block combine needs a workspace of reduce_workspace_bytes() bytes:
// 512 + SMs x 32 (blocks per SM at most) x 16 (bytes per block's partial), about 136 KB on an
// H100 (132 SMs); it depends only on the device.
// - Explicit form: query reduce_workspace_bytes(), allocate it yourself, zero it once with
//   init_workspace() (or cudaMemsetAsync), then pass it to any number of calls. Each call leaves
//   it zeroed again, so it works under CUDA graph capture. One workspace must not be used by two
//   calls that may run at the same time (e.g. on two streams without ordering between them).
// - Convenient form (no Workspace argument): each host thread caches the workspaces of the
//   streams it used last: at most 8 per device (least recently used evicted first), for the
//   reductions, and 8 more for the convenient scans (foldkit/cuda/scan.hpp). A call on a cached
//   stream allocates nothing and takes no lock. The first call on another stream allocates its
//   workspace in stream order (cudaMallocAsync + cudaMemsetAsync) and, with 8 cached, evicts the
//   least recently used one in stream order on the new call's stream (it waits for an event
//   recorded after that workspace's last use; nothing is enqueued on the old stream, which may
//   be destroyed already). While a thread uses several streams of a device, each call records
//   that event (one cudaEventRecord); an entry last used as the thread's only stream has none
//   and is freed after a cudaDeviceSynchronize when evicted (once per change from one stream to
//   several). So a thread that creates a stream per request keeps at most 8 workspaces per
//   device. release_stream_workspaces() frees this thread's cached workspaces at once; the rest
//   are freed when the thread exits. Out of device memory for a new workspace: Error
//   out_of_memory, with nothing changed (retry once memory is free).
//   To capture a graph, make one call on that stream before capturing (a capturing stream must
//   find its cached workspace) or use the explicit form; the graph uses that cached workspace,
//   so replay it only while it stays cached (no eviction by 8 other streams of this thread on
//   that device, no release_stream_workspaces()), or use the explicit form.
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

// Frees the workspaces that the convenient forms (reductions and scans) cached for the calling
// host thread, on every device; the thread's next convenient call on a stream allocates anew.
// Waits for the thread's last convenient call on each cached stream to finish (a workspace
// without an event after its last use waits for its device: cudaDeviceSynchronize). Not to be
// called while one of those streams is being captured, nor while a graph captured from the
// convenient form is still to be replayed. Throws Error(cuda_error) if a CUDA call fails; the
// cache is emptied either way.
void release_stream_workspaces();

// Arrays of CUDA's own 16-bit types (__half, __nv_bfloat16) are foldkit's (same layout):
// pass as_foldkit_half(p) or as_foldkit_bfloat16(p), for inputs (const) and outputs (a scan of
// half writes half). Only 2-byte types convert.
template <class T> const half* as_foldkit_half(const T* p) { static_assert(sizeof(T) == 2); return reinterpret_cast<const half*>(p); }
template <class T> half* as_foldkit_half(T* p) { static_assert(sizeof(T) == 2); return reinterpret_cast<half*>(p); }
template <class T> const bfloat16* as_foldkit_bfloat16(const T* p) { static_assert(sizeof(T) == 2); return reinterpret_cast<const bfloat16*>(p); }
template <class T> bfloat16* as_foldkit_bfloat16(T* p) { static_assert(sizeof(T) == 2); return reinterpret_cast<bfloat16*>(p); }

namespace detail {
// Tells this thread's reduce workspace cache that the call that took the workspace for
// `stream` has launched (records the entry's event when needed; never throws).
void stream_workspace_launched(cudaStream_t stream) noexcept;
// What stream_workspace() returns: converts to the Workspace; destroyed at the end of the full
// expression that passed it to the call, i.e. after the launch, it calls
// stream_workspace_launched(). (reduce_to_host holds it until its copy back is enqueued.)
class StreamWorkspaceLease {
 public:
  StreamWorkspaceLease(Workspace ws, cudaStream_t stream) : ws_(ws), stream_(stream) {}
  ~StreamWorkspaceLease() { stream_workspace_launched(stream_); }
  StreamWorkspaceLease(const StreamWorkspaceLease&) = delete;
  StreamWorkspaceLease& operator=(const StreamWorkspaceLease&) = delete;
  operator Workspace() const { return ws_; }  // implicit by design: pass it where a Workspace goes

 private:
  Workspace ws_;
  cudaStream_t stream_;
};
// The workspace the convenient form uses for (this thread, current device, stream), from this
// thread's cache (see foldkit/cuda/dispatch/runtime.hpp, StreamWorkspaceCache).
StreamWorkspaceLease stream_workspace(cudaStream_t stream);
// The same cache entry, grown (in stream order, zeroed) to at least min_bytes: for callers with
// the same contract (zeroed once, every call leaves it zeroed) that need more, such as the
// tensor reductions' split launches.
StreamWorkspaceLease stream_workspace(cudaStream_t stream, std::size_t min_bytes);
// Validation shared by every device entry point: p is usable on the current device (the
// second form takes that device from a caller that already asked for it).
void check_device_pointer(const void* p, const char* what);
void check_device_pointer(const void* p, const char* what, int device);
// The current device for check_device_pointer, or -1 when the runtime cannot say (the check
// then takes its slow path, which reports the error).
int current_device_for_checks();
}  // namespace detail

}  // namespace foldkit::cuda
