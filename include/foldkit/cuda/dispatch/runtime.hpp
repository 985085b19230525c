// Host-side helpers every CUDA entry point shares: error checks, device facts, argument
// validation and the workspace layout. Internal (namespace detail), but installed because the
// header-only user-functor path (reduce_custom.cuh) uses it.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "foldkit/cuda/reduce.hpp"

namespace foldkit::cuda::detail {

// Throws Error(cuda_error) carrying CUDA's message when status is not cudaSuccess.
void check_cuda(cudaError_t status, const char* what);

// The current device and its multiprocessor count (throws no_device when there is none).
struct DeviceFacts {
  int device;
  int sm_count;
};
DeviceFacts current_device_facts();
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

}  // namespace foldkit::cuda::detail
