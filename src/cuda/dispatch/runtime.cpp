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
  // Only allocations report cudaErrorMemoryAllocation: a caller can free memory and retry.
  const Errc code = status == cudaErrorMemoryAllocation ? Errc::out_of_memory : Errc::cuda_error;
  throw Error(code, std::string(what) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
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

// ---- StreamWorkspaceCache (runtime.hpp) ----

namespace {
constexpr std::size_t kNone = static_cast<std::size_t>(-1);
constexpr std::size_t kMinCachedBytes = 4096;  // the smallest workspace a cache allocates
}  // namespace

Workspace StreamWorkspaceCache::acquire(cudaStream_t stream, std::size_t bytes, int device) {
  pending_ = kNone;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check_cuda(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
  if (capture != cudaStreamCaptureStatusNone) {
    // Under capture: find the entry by handle; allocate nothing and record nothing (a recorded
    // event would become a node of the graph), so its last use has no event after it.
    for (auto& e : entries_)
      if (e.device == device && e.handle_live && e.handle == stream && e.ws.bytes >= bytes) {
        e.last_use = ++clock_;
        e.event_after_last_use = false;
        return e.ws;
      }
    throw Error(Errc::invalid_argument, capture_hint_);
  }
  unsigned long long id = 0;
  check_cuda(cudaStreamGetId(stream, &id), "cudaStreamGetId");
  std::size_t found = kNone, oldest = kNone;
  int count = 0;  // this device's entries
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    if (e.device != device) continue;
    ++count;
    if (e.stream_id == id) {
      found = i;
    } else {
      if (e.handle == stream) e.handle_live = false;  // that handle now names another stream
      if (oldest == kNone || e.last_use < entries_[oldest].last_use) oldest = i;
    }
  }
  if (found != kNone && entries_[found].ws.bytes >= bytes) {  // the steady state
    Entry& e = entries_[found];
    e.last_use = ++clock_;
    e.event_after_last_use = false;  // until launched() records the event
    pending_ = found;
    pending_stream_ = stream;
    pending_record_ = count > 1;
    return e.ws;
  }
  // A new workspace: at least `bytes`, and when growing, at least twice the old size so that a
  // rising n does not reallocate on every call.
  std::size_t want = bytes < kMinCachedBytes ? kMinCachedBytes : bytes;
  if (found != kNone && want < 2 * entries_[found].ws.bytes) want = 2 * entries_[found].ws.bytes;
  if (found == kNone && count >= kEntriesPerDevice) {
    // Evict first: the pool can then hand the same memory to the new entry, in stream order.
    evict_on(oldest, stream);
    --count;
  }
  Workspace ws;
  ws.bytes = want;
  check_cuda(cudaMallocAsync(&ws.ptr, ws.bytes, stream), "cudaMallocAsync (workspace)");
  const cudaError_t zeroed = cudaMemsetAsync(ws.ptr, 0, ws.bytes, stream);
  if (zeroed != cudaSuccess) {
    (void)cudaFreeAsync(ws.ptr, stream);
    check_cuda(zeroed, "cudaMemsetAsync (workspace)");
  }
  if (found != kNone) {
    // Growing the entry of this very stream: stream order alone keeps the old one alive until
    // the work already queued on it is done.
    Entry& e = entries_[found];
    const cudaError_t freed = cudaFreeAsync(e.ws.ptr, stream);
    if (freed != cudaSuccess) {
      (void)cudaFreeAsync(ws.ptr, stream);
      check_cuda(freed, "cudaFreeAsync (workspace)");
    }
    e.ws = ws;
    e.handle = stream;
    e.handle_live = true;
    e.last_use = ++clock_;
    e.event_after_last_use = false;
    pending_ = found;
  } else {
    cudaEvent_t event = nullptr;
    const cudaError_t created = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    if (created != cudaSuccess) {
      (void)cudaFreeAsync(ws.ptr, stream);
      check_cuda(created, "cudaEventCreateWithFlags (workspace)");
    }
    entries_.push_back(Entry{device, true, stream, id, ws, event, false, ++clock_});
    ++count;
    pending_ = entries_.size() - 1;
  }
  pending_stream_ = stream;
  pending_record_ = count > 1;
  return ws;
}

void StreamWorkspaceCache::launched(cudaStream_t stream) noexcept {
  if (pending_ == kNone || pending_stream_ != stream) return;
  Entry& e = entries_[pending_];
  pending_ = kNone;
  if (!pending_record_) return;  // the device's only entry: nothing to order an eviction after
  if (cudaEventRecord(e.event, stream) == cudaSuccess) e.event_after_last_use = true;
  else (void)cudaGetLastError();  // left without an event: freed after a device sync if evicted
}

// Frees entries_[index] (current device) in stream order on `stream`, the current call's
// stream: never on the entry's own stream, which may be destroyed already.
void StreamWorkspaceCache::evict_on(std::size_t index, cudaStream_t stream) {
  const Entry e = entries_[index];
  entries_[index] = entries_.back();
  entries_.pop_back();
  pending_ = kNone;
  cudaError_t status = cudaSuccess;
  if (e.event_after_last_use) {
    status = cudaStreamWaitEvent(stream, e.event, 0);
    if (status == cudaSuccess) status = cudaFreeAsync(e.ws.ptr, stream);
  } else {
    // No event after its last use: wait for the device. cudaFree does not synchronise for
    // memory from cudaMallocAsync, hence the explicit cudaDeviceSynchronize.
    status = cudaDeviceSynchronize();
    if (status == cudaSuccess) status = cudaFree(e.ws.ptr);
  }
  (void)cudaEventDestroy(e.event);  // a recorded, pending event is released once it completes
  check_cuda(status, "freeing an evicted workspace");
}

// Frees the entries of the current device, or of every device; returns the first error.
cudaError_t StreamWorkspaceCache::free_entries(bool all_devices) {
  pending_ = kNone;
  cudaError_t first = cudaSuccess;
  auto note = [&first](cudaError_t status) {
    if (status != cudaSuccess && first == cudaSuccess) first = status;
  };
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) return cudaGetLastError();
  std::vector<Entry> keep;
  bool synced_device[64] = {};
  for (const Entry& e : entries_) {
    if (!all_devices && e.device != current) {
      keep.push_back(e);
      continue;
    }
    if (e.device != current) note(cudaSetDevice(e.device));
    if (e.event_after_last_use) {
      note(cudaEventSynchronize(e.event));
    } else if (e.device < 0 || e.device >= 64 || !synced_device[e.device]) {
      note(cudaDeviceSynchronize());
      if (e.device >= 0 && e.device < 64) synced_device[e.device] = true;
    }
    note(cudaFree(e.ws.ptr));
    note(cudaEventDestroy(e.event));
    if (e.device != current) note(cudaSetDevice(current));
  }
  entries_.swap(keep);
  if (first != cudaSuccess) (void)cudaGetLastError();
  return first;
}

void StreamWorkspaceCache::release() {
  check_cuda(free_entries(true), "releasing the stream workspaces");
}

StreamWorkspaceCache::~StreamWorkspaceCache() {
  (void)free_entries(true);  // at thread or process exit; errors there are harmless
}

namespace {
thread_local StreamWorkspaceCache t_reduce_cache(
    "the convenient form cannot allocate its workspace while the stream is being captured; make one call on this "
    "stream before capturing (its workspace must still be cached), or pass an explicit Workspace");
thread_local StreamWorkspaceCache t_scan_cache(
    "the convenient scan cannot allocate its workspace while the stream is being captured; make a call of at least "
    "this size on this stream before capturing (its workspace must still be cached), or pass an explicit Workspace");
}  // namespace

StreamWorkspaceCache& reduce_workspace_cache() { return t_reduce_cache; }
StreamWorkspaceCache& scan_workspace_cache() { return t_scan_cache; }

StreamWorkspaceLease stream_workspace(cudaStream_t stream) {
  const int device = current_device();
  return StreamWorkspaceLease(t_reduce_cache.acquire(stream, workspace_bytes_for(sm_count_of(device)), device), stream);
}

void check_device_view(const TensorView& v, const char* what, int device) {
  if (v.device.kind != DeviceKind::cuda)
    throw Error(Errc::wrong_memory, std::string(what) + " is a host view; the CUDA backend needs device memory");
  if (v.device.id != device)
    throw Error(Errc::wrong_memory, std::string(what) + " is a view of CUDA device " + std::to_string(v.device.id) +
                                        "; the current device is " + std::to_string(device));
  if (v.numel() > 0) check_device_pointer(v.data, what, device);
}

StreamWorkspaceLease stream_workspace(cudaStream_t stream, std::size_t min_bytes) {
  const int device = current_device();
  const std::size_t core = workspace_bytes_for(sm_count_of(device));
  return StreamWorkspaceLease(t_reduce_cache.acquire(stream, min_bytes > core ? min_bytes : core, device), stream);
}

void stream_workspace_launched(cudaStream_t stream) noexcept { t_reduce_cache.launched(stream); }

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

void release_stream_workspaces() {
  try {
    detail::reduce_workspace_cache().release();
  } catch (...) {
    detail::scan_workspace_cache().release();  // emptied too, whatever the first one reported
    throw;
  }
  detail::scan_workspace_cache().release();
}

void init_workspace(Workspace ws, cudaStream_t stream) {
  if (ws.ptr == nullptr) throw Error(Errc::invalid_argument, "workspace is null");
  detail::check_cuda(cudaMemsetAsync(ws.ptr, 0, ws.bytes, stream), "cudaMemsetAsync (init_workspace)");
}

}  // namespace foldkit::cuda
