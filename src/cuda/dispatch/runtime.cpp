// Device facts, error checks, argument validation and workspaces for the CUDA backend.
#include "foldkit/cuda/dispatch/runtime.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/tuning/reduce_tuning.hpp"

namespace foldkit::cuda {

namespace detail {

void check_cuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  throw Error(Errc::cuda_error, std::string(what) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}

static int current_device() {
  int device = 0;
  const cudaError_t status = cudaGetDevice(&device);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError();
    throw Error(Errc::no_device, "no usable CUDA device");
  }
  check_cuda(status, "cudaGetDevice");
  return device;
}

// The SM count of each device, asked once: it is on every call's path, and a device's SM count
// never changes while the process runs.
static int sm_count_of(int device) {
  static std::atomic<int> known[kMemoDevices] = {};
  return per_device_memo(known, device, [device] {
    int sms = 0;
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    return sms;
  });
}

DeviceFacts current_device_facts() {
  const int device = current_device();
  return DeviceFacts{device, sm_count_of(device)};
}

static std::size_t workspace_bytes_for(int sm_count) {
  return kPartialsOffset + static_cast<std::size_t>(sm_count) * tuning::kMaxBlocksPerSm * tuning::kPartialSlotBytes;
}

DeviceFacts validate_reduce_args(const void* d_in, std::int64_t n, const void* d_out, Workspace ws, bool nonempty) {
  if (n < 0) throw Error(Errc::invalid_argument, "n is negative (" + std::to_string(n) + ")");
  // The kernel relies on n < 2^62 (vector_load.cuh, after_all_loads: n >> 62 is its run-time
  // zero); no memory holds that many elements, so this only refuses a corrupt n.
  if (n >= (std::int64_t{1} << 62))
    throw Error(Errc::unsupported, "n = " + std::to_string(n) + " is 2^62 or more elements");
  if (d_in == nullptr && n > 0) throw Error(Errc::invalid_argument, "input is null but n = " + std::to_string(n));
  if (d_out == nullptr) throw Error(Errc::invalid_argument, "output is null");
  if (nonempty && n == 0) throw Error(Errc::empty_input, "this reduction has no identity; the input is empty");
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "workspace is null");
  if (reinterpret_cast<std::uintptr_t>(ws.ptr) % 16 != 0)
    throw Error(Errc::invalid_argument, "workspace must be 16-byte aligned");
  const DeviceFacts facts = current_device_facts();
  const std::size_t need = workspace_bytes_for(facts.sm_count);
  if (ws.bytes < need)
    throw Error(Errc::invalid_argument, "workspace has " + std::to_string(ws.bytes) + " bytes; " +
                                            std::to_string(need) + " are needed (reduce_workspace_bytes())");
  if (n > 0) check_device_pointer(d_in, "input", facts.device);
  check_device_pointer(d_out, "output", facts.device);
  check_device_pointer(ws.ptr, "workspace", facts.device);
  return facts;
}

namespace {

// One workspace per (device, stream) for this host thread. Keyed by the stream's unique id
// (cudaStreamGetId), not only its handle: a destroyed stream's handle can be reused by a new
// stream whose work must not share a workspace with the old stream's pending work. While a
// stream is being captured into a graph cudaStreamGetId is not permitted, so a capturing
// stream is matched by handle, and must already have a workspace (from a call before capture).
struct CachedWorkspace {
  int device;
  cudaStream_t handle;
  unsigned long long stream_id;
  Workspace ws;
};

struct ThreadWorkspaces {
  std::vector<CachedWorkspace> entries;
  ~ThreadWorkspaces() {
    for (auto& e : entries) (void)cudaFree(e.ws.ptr);  // errors at process exit are harmless
  }
};

thread_local ThreadWorkspaces t_workspaces;

}  // namespace

Workspace stream_workspace(cudaStream_t stream) {
  const int device = current_device();
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check_cuda(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
  if (capture != cudaStreamCaptureStatusNone) {
    for (const auto& e : t_workspaces.entries)
      if (e.device == device && e.handle == stream) return e.ws;
    throw Error(Errc::invalid_argument,
                "the convenient form cannot allocate its workspace while the stream is being captured; make one "
                "call on this stream before capturing, or pass an explicit Workspace");
  }
  unsigned long long id = 0;
  check_cuda(cudaStreamGetId(stream, &id), "cudaStreamGetId");
  for (auto& e : t_workspaces.entries) {
    if (e.device != device) continue;
    if (e.stream_id == id) return e.ws;
    if (e.handle == stream) e.handle = nullptr;  // that handle now names another stream
  }
  Workspace ws;
  ws.bytes = reduce_workspace_bytes(device);
  check_cuda(cudaMalloc(&ws.ptr, ws.bytes), "cudaMalloc (workspace)");
  const cudaError_t zeroed = cudaMemsetAsync(ws.ptr, 0, ws.bytes, stream);
  if (zeroed != cudaSuccess) {
    (void)cudaFree(ws.ptr);
    check_cuda(zeroed, "cudaMemsetAsync (workspace)");
  }
  t_workspaces.entries.push_back(CachedWorkspace{device, stream, id, ws});
  return ws;
}

}  // namespace detail

bool device_available() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

std::size_t reduce_workspace_bytes(int device) {
  if (device < 0) device = detail::current_device();
  return detail::workspace_bytes_for(detail::sm_count_of(device));
}

void init_workspace(Workspace ws, cudaStream_t stream) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "workspace is null");
  detail::check_cuda(cudaMemsetAsync(ws.ptr, 0, ws.bytes, stream), "cudaMemsetAsync (init_workspace)");
}

}  // namespace foldkit::cuda
