// The CUDA side of the backend adapter (interface: see cpu_backend.hpp), plus the small CUDA
// helpers the GPU tests share. Plain C++ on the CUDA runtime API; no nvcc needed.
//
// upload() copies the whole TestArray, guards included, to a fresh cudaMalloc allocation (256-byte
// aligned), so the device pointer is `offset` elements past an aligned base exactly as on the
// host. run() poisons the device output slot (0xFF bytes) before every call, so a result that
// was never written cannot pass, and checks that nothing was written past the result.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "foldkit/cuda/reduce.hpp"
#include "foldkit/cuda/scan.hpp"
#include "support/cpu_backend.hpp"
#include "support/random_arrays.hpp"

namespace foldkit::test {

inline void cuda_check(cudaError_t status, const char* expr, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " +
                           cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}
// Every CUDA runtime call in the tests goes through this; a failure throws, and gtest reports
// the exception as a test failure with the call and its error.
#define FOLDKIT_CUDA_CHECK(expr) ::foldkit::test::cuda_check((expr), #expr, __FILE__, __LINE__)

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) { FOLDKIT_CUDA_CHECK(cudaMalloc(&ptr_, bytes)); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(o.bytes_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);  // never throw from a destructor
  }
  void* get() const { return ptr_; }
  template <class T> T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// The current CUDA device's ordinal.
inline int current_device() {
  int device = 0;
  FOLDKIT_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

// Host bytes to a fresh device allocation (at least one byte), and `bytes` of one back.
inline DeviceBuffer upload_bytes(const std::vector<unsigned char>& host) {
  DeviceBuffer d(host.empty() ? 1 : host.size());
  if (!host.empty()) FOLDKIT_CUDA_CHECK(cudaMemcpy(d.get(), host.data(), host.size(), cudaMemcpyHostToDevice));
  return d;
}
inline std::vector<unsigned char> download_bytes(const DeviceBuffer& d, std::size_t bytes) {
  std::vector<unsigned char> host(bytes);
  if (bytes > 0) FOLDKIT_CUDA_CHECK(cudaMemcpy(host.data(), d.get(), bytes, cudaMemcpyDeviceToHost));
  return host;
}

// One explicit scan workspace for the whole test process, grown (and zeroed, once) when a call
// needs more: later calls reuse it without zeroing, as documented (foldkit/cuda/scan.hpp).
inline cuda::Workspace shared_workspace(std::size_t bytes) {
  static DeviceBuffer buffer;
  static std::size_t size = 0;
  if (bytes > size) {
    buffer = DeviceBuffer(bytes);
    size = bytes;
    cuda::init_scan_workspace(cuda::Workspace{buffer.get(), size});
  }
  return cuda::Workspace{size > 0 ? buffer.get() : nullptr, size};
}

// A device copy of host data; ptr points at the first element to reduce.
template <class T> struct DeviceArray {
  using value_type = T;
  DeviceBuffer buffer;
  const T* ptr = nullptr;
  std::int64_t n = 0;
};
template <class T>
DeviceArray<T> to_device(const T* host, std::size_t count, std::int64_t offset, std::int64_t n) {
  DeviceArray<T> d;
  d.buffer = DeviceBuffer(count * sizeof(T) > 0 ? count * sizeof(T) : 1);
  if (count > 0) FOLDKIT_CUDA_CHECK(cudaMemcpy(d.buffer.get(), host, count * sizeof(T), cudaMemcpyHostToDevice));
  // A pageable cudaMemcpy may return before its DMA lands; work on non-blocking streams is not
  // ordered after it, so wait here.
  if (count > 0) FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());
  d.ptr = d.buffer.template as<T>() + offset;
  d.n = n;
  return d;
}
template <class T> DeviceArray<T> to_device(const TestArray<T>& a) {
  return to_device(a.storage.data(), a.storage.size(), a.offset, a.n);
}

// A device result slot of PoisonedSlot::kBytes, poisoned on request, read back with take<R>().
class DeviceSlot {
 public:
  DeviceSlot() : buffer_(PoisonedSlot::kBytes) {}
  void poison(cudaStream_t stream = nullptr) {
    FOLDKIT_CUDA_CHECK(cudaMemsetAsync(buffer_.get(), PoisonedSlot::kPoison, PoisonedSlot::kBytes, stream));
  }
  template <class R> R* get() const { return buffer_.as<R>(); }
  // Waits for `stream`, copies back and checks for writes past the result.
  template <class R> R take(const char* who, cudaStream_t stream = nullptr) const {
    PoisonedSlot host;
    FOLDKIT_CUDA_CHECK(
        cudaMemcpyAsync(host.bytes, buffer_.get(), PoisonedSlot::kBytes, cudaMemcpyDeviceToHost, stream));
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    FOLDKIT_CUDA_CHECK(cudaGetLastError());
    return host.take<R>(who);
  }

 private:
  DeviceBuffer buffer_;
};

struct CudaBackend {
  static constexpr const char* kName = "cuda";
  static bool available() { return cuda::device_available(); }

  template <class T> using Input = DeviceArray<T>;
  template <class T> static Input<T> upload(const TestArray<T>& a) { return to_device(a); }

  template <ReduceOp Op, class T> static reduce_result_t<Op, T> run(const Input<T>& in) {
    using R = reduce_result_t<Op, T>;
    DeviceSlot& out = slot();
    out.poison();
    cuda::reduce<Op>(in.ptr, in.n, out.get<R>());
    return out.take<R>("cuda::reduce<Op>");
  }

  template <ReduceOp Op, class T> static reduce_result_t<Op, T> run_erased(const Input<T>& in) {
    using R = reduce_result_t<Op, T>;
    DeviceSlot& out = slot();
    out.poison();
    cuda::reduce(Op, dtype_v<T>, in.ptr, in.n, out.get<void>());
    return out.take<R>("cuda::reduce(op, dtype, ...)");
  }

  template <ReduceOp Op, class T>
  static reduce_result_t<Op, T> run(const std::vector<T>& host, std::int64_t offset, std::int64_t n) {
    return run<Op>(to_device(host.data(), host.size(), offset, n));
  }

 private:
  static DeviceSlot& slot() {  // one per host thread, reused: saves a cudaMalloc per call
    thread_local DeviceSlot s;
    return s;
  }
};

// Fixture for GPU-only tests: SKIPPED (not passed) where no GPU is usable.
class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::device_available()) GTEST_SKIP() << "no usable CUDA device";
  }
};

// A stream created for one test and destroyed with it.
class Stream {
 public:
  Stream() { FOLDKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { (void)cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// An explicit workspace of reduce_workspace_bytes(), zeroed once as documented.
class OwnedWorkspace {
 public:
  explicit OwnedWorkspace(cudaStream_t stream = nullptr) : buffer_(cuda::reduce_workspace_bytes()) {
    cuda::init_workspace(get(), stream);
  }
  cuda::Workspace get() const { return cuda::Workspace{buffer_.get(), buffer_.bytes()}; }

 private:
  DeviceBuffer buffer_;
};

}  // namespace foldkit::test
