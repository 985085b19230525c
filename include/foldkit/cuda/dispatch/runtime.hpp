// Host-side helpers every CUDA entry point shares: error checks, device facts, argument
// validation and the workspace layout. Internal (namespace detail), but installed because the
// header-only user-functor path (reduce_custom.cuh) uses it.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "foldkit/cuda/reduce.hpp"
#include "foldkit/tensor.hpp"

namespace foldkit::cuda::detail {

// Throws Error carrying CUDA's message when status is not cudaSuccess: out_of_memory for
// cudaErrorMemoryAllocation (only allocations report it), cuda_error for anything else. Clears
// the runtime's non-sticky error first, so the next call starts clean.
void check_cuda(cudaError_t status, const char* what);

// The current device and its multiprocessor count (throws no_device when there is none).
struct DeviceFacts {
  int device;
  int sm_count;
};
DeviceFacts current_device_facts();
// The CUDA tensor entry points' memory check of a view (tensor reductions and scans): device
// memory of `device` (device.kind == cuda, device.id == device) and, for a view with elements, a
// data pointer that device can access. Throws Error(wrong_memory) naming `what` otherwise.
void check_device_view(const TensorView& v, const char* what, int device);
inline int current_sm_count() { return current_device_facts().sm_count; }

// Per-device memo of a positive value that depends on the device (a multiprocessor count, a
// kernel's occupancy, a kernel attribute that the runtime sets per device): the first call on
// a device computes it, later ones read it. Ordinals from kMemoDevices on, or -1 (unknown),
// compute it every time. Two first calls racing compute the same value twice, harmlessly.
inline constexpr int kMemoDevices = 16;
template <class Compute>
int per_device_memo(std::atomic<int> (&memo)[kMemoDevices], int device, Compute&& compute) {
  std::atomic<int>* slot = device >= 0 && device < kMemoDevices ? &memo[device] : nullptr;
  int value = slot != nullptr ? slot->load(std::memory_order_relaxed) : 0;
  if (value == 0) {
    value = compute();
    if (slot != nullptr) slot->store(value, std::memory_order_relaxed);
  }
  return value;
}

// Workspace layout: [ticket | staging for reduce_to_host | partials, one 16-byte slot per block].
inline constexpr std::size_t kTicketOffset = 0;
inline constexpr std::size_t kStagingOffset = 256;
inline constexpr std::size_t kStagingBytes = 64;
inline constexpr std::size_t kPartialsOffset = 512;

// Validates the arguments of a full-array reduction (pointers, n, workspace) and throws the
// documented Error; `nonempty` marks ops without an identity. Returns the current device and
// its multiprocessor count, for the launch plan: the device is asked once per call (cudaGetDevice
// took 0.06-0.2 us on the H100 machine's host, and a call asked five times;
// docs/perf-log/2026-11-25.md, fourth session).
DeviceFacts validate_reduce_args(const void* d_in, std::int64_t n, const void* d_out, Workspace ws, bool nonempty);

// The workspaces of the convenient forms (calls without a Workspace): one cache per host thread
// for the reductions and one for the scans (thread_local, so no lock), each holding at most
// kEntriesPerDevice workspaces per device, least recently used evicted first. An entry is keyed
// by (device, cudaStreamGetId(stream)); the handle is kept too, because a stream being captured
// into a graph can only be matched by handle (cudaStreamGetId is not permitted in capture).
//
// Steady state (a call on a stream that has an entry of the needed size): no allocation, no
// lock, and no CUDA call beyond the lookup's cudaGetDevice, cudaStreamIsCapturing and
// cudaStreamGetId, plus, only while the thread's cache holds more than one entry for the device,
// one cudaEventRecord after the launch (see launched()).
//
// A new entry is allocated and zeroed in stream order on the call's stream (cudaMallocAsync +
// cudaMemsetAsync). Evicting an entry never enqueues anything on its old stream (that stream
// may be destroyed already): the current call's stream waits for the entry's event, recorded
// after the entry's last use, and frees it there (cudaStreamWaitEvent + cudaFreeAsync), with no
// host synchronisation. An entry with no event after its last use (used while it was the only
// entry of its device, or last used under graph capture, where recording would add a node to
// the graph) is freed after a cudaDeviceSynchronize instead; for the single-stream case that
// happens at most once per change from one stream to several.
class StreamWorkspaceCache {
 public:
  // Why 8: enough for a thread that feeds a handful of streams (double or triple buffering, a
  // few priority streams) to keep every one allocation-free, while bounding the memory a thread
  // keeps per device to 8 workspaces (8 x ~136 KB for the reductions on an H100) however many
  // streams it creates and destroys. The one place this number lives.
  static constexpr int kEntriesPerDevice = 8;

  // capture_hint: the sentence of the invalid_argument Error thrown when a capturing stream has
  // no (large enough) entry.
  explicit StreamWorkspaceCache(const char* capture_hint) : capture_hint_(capture_hint) {}
  ~StreamWorkspaceCache();  // thread exit: frees every entry, errors ignored
  StreamWorkspaceCache(const StreamWorkspaceCache&) = delete;
  StreamWorkspaceCache& operator=(const StreamWorkspaceCache&) = delete;

  // The entry for (device, stream), device being the current one, with at least `bytes` bytes: found, grown (to at
  // least twice its size, stream-ordered on the same stream) or created. Throws out_of_memory
  // (nothing changed, nothing leaked) when device memory runs out; invalid_argument when the
  // stream is being captured and has no entry of that size.
  Workspace acquire(cudaStream_t stream, std::size_t bytes, int device);
  // Call right after the launch that used the workspace acquire() returned for `stream`: records
  // the entry's event there when the device's cache holds more than one entry, so that a later
  // eviction can free the entry in stream order. Without this call the entry is freed with a
  // device synchronisation when evicted (correct, slower). Never throws.
  void launched(cudaStream_t stream) noexcept;
  // Frees every entry on every device: entries whose event follows their last use once that
  // event completes, the others after a cudaDeviceSynchronize. Throws the first CUDA error
  // (after freeing everything it could; the cache is empty either way).
  void release();

 private:
  struct Entry {
    int device;
    bool handle_live;             // false once the handle names another stream
    cudaStream_t handle;
    unsigned long long stream_id;
    Workspace ws;
    cudaEvent_t event;            // created with the entry, cudaEventDisableTiming
    bool event_after_last_use;    // event was recorded after the last use: async free is safe
    unsigned long long last_use;  // LRU clock
  };
  void evict_on(std::size_t index, cudaStream_t stream);
  cudaError_t free_entries(bool all_devices);

  const char* capture_hint_;
  std::vector<Entry> entries_;
  unsigned long long clock_ = 0;
  std::size_t pending_ = static_cast<std::size_t>(-1);  // entry acquired, launch pending
  cudaStream_t pending_stream_ = nullptr;
  bool pending_record_ = false;
};

// This thread's caches: reductions, and scans (which grow with n).
StreamWorkspaceCache& reduce_workspace_cache();
StreamWorkspaceCache& scan_workspace_cache();

}  // namespace foldkit::cuda::detail
