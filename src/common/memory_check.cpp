// Pointer validation shared by the backends: which memory space a pointer lives in.
//
// Compiled as C++ in every build. With CUDA, a device pointer handed to the CPU backend, or a
// pageable host pointer handed to the CUDA backend, is reported as Errc::wrong_memory instead of
// crashing or reading garbage.
//
// The CPU backend must not start CUDA: a runtime call such as cudaGetDeviceCount initialises the
// runtime (the driver, tens to hundreds of ms) in a program that never meant to touch the GPU,
// and cost every CPU call a runtime query (issue #21). A process that has not loaded the driver
// library holds no device memory, so the CPU backend asks the driver only once libcuda is
// loaded, and then through the driver API, which creates no context.
#include <cstdint>
#include <cstdio>
#include <string>

#include "foldkit/config.hpp"
#include "foldkit/error.hpp"
#include "foldkit/reduce.hpp"

#if FOLDKIT_WITH_CUDA
#include <cuda.h>  // driver API types only; the functions are fetched, never linked
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>

#include "foldkit/cuda/reduce.hpp"
#endif

namespace foldkit {

#if FOLDKIT_WITH_CUDA
namespace {

using PointerAttributesFn = CUresult (*)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);

std::string ptr_text(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

// The driver's cuPointerGetAttributes if this process has loaded libcuda (by any means: our
// runtime, another library, the user), else nullptr; never loads or initialises anything.
// dlopen(RTLD_NOLOAD) would answer too, but it searches the library path when the library is
// absent (17 us a call, measured); dl_iterate_phdr's count of loaded objects costs ~7 ns, so the
// loaded objects are searched by name only after that count changed. Once found, the function
// stays cached: the handle we keep holds the library loaded.
PointerAttributesFn loaded_driver_pointer_attributes() {
  static std::atomic<PointerAttributesFn> found{nullptr};
  static std::atomic<unsigned long long> adds_searched{0};  // dlpi_adds at the last failed search
  if (PointerAttributesFn fn = found.load(std::memory_order_acquire)) return fn;

  // dl_iterate_phdr visits the main program first, whose dlpi_adds counts the loads so far.
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* d) {
        *static_cast<unsigned long long*>(d) = info->dlpi_adds;
        return 1;
      },
      &adds);
  if (adds == adds_searched.load(std::memory_order_relaxed)) return nullptr;  // nothing loaded since

  std::string path;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* d) {
        const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const char* slash = std::strrchr(name, '/');
        const char* base = slash != nullptr ? slash + 1 : name;
        if (std::strncmp(base, "libcuda.so", 10) != 0) return 0;
        *static_cast<std::string*>(d) = name;
        return 1;
      },
      &path);
  adds_searched.store(adds, std::memory_order_relaxed);
  if (path.empty()) return nullptr;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return nullptr;
  auto fn = reinterpret_cast<PointerAttributesFn>(dlsym(lib, "cuPointerGetAttributes"));
  if (fn == nullptr) {
    dlclose(lib);
    return nullptr;
  }
  found.store(fn, std::memory_order_release);  // `lib` stays open: fn stays valid
  return fn;
}

}  // namespace
#endif

namespace cpu::detail {

void check_host_input(const void* in, std::int64_t n) {
  if (n < 0) throw Error(Errc::invalid_argument, "n = " + std::to_string(n) + " is negative");
  if (in == nullptr && n > 0)
    throw Error(Errc::invalid_argument, "input is null but n = " + std::to_string(n));
#if FOLDKIT_WITH_CUDA
  // n == 0 reads nothing, so any pointer is harmless then; skip the probe.
  if (n <= 0) return;
  const PointerAttributesFn attributes = loaded_driver_pointer_attributes();
  if (attributes == nullptr) return;  // no driver loaded: no device memory in this process
  // Unlike cuPointerGetAttribute, this returns CUDA_SUCCESS with null attributes for memory the
  // driver does not know (and CUDA_ERROR_NOT_INITIALIZED before cuInit: host memory too).
  unsigned int memory_type = 0, managed = 0;
  int ordinal = -1;
  CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* data[3] = {&memory_type, &managed, &ordinal};
  if (attributes(3, attrs, data, reinterpret_cast<CUdeviceptr>(in)) != CUDA_SUCCESS) return;
  // Managed memory is readable from the host; pinned host memory is host memory.
  if (memory_type == CU_MEMORYTYPE_DEVICE && managed == 0)
    throw Error(Errc::wrong_memory, "input (" + ptr_text(in) + ", device " + std::to_string(ordinal) +
                                        ") is device memory passed to the CPU backend; use foldkit::cuda:: "
                                        "or copy it to the host");
#endif
}

}  // namespace cpu::detail

#if FOLDKIT_WITH_CUDA
namespace cuda::detail {

void check_device_pointer_slow(const void* p, const char* what);

namespace {

// Device allocations this thread has already validated, as address ranges. Every call checks
// its input, output and workspace; asking the runtime costs about 0.15 us per pointer, which
// is a visible share of a small reduction's host time. Most calls pass pointers into the same
// few allocations, so a hit in this small per-thread cache (no lock) skips the runtime. A range
// stays valid until it is freed; passing freed memory is undefined behaviour with or without
// the check.
struct KnownRange {
  std::uintptr_t begin = 0, end = 0;
  int device = -1;
};
constexpr int kKnownRanges = 8;
thread_local KnownRange t_known[kKnownRanges];
thread_local int t_next_known = 0;

PointerAttributesFn pointer_attributes_fn() {
  static const PointerAttributesFn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &f, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      f = nullptr;
    }
    return reinterpret_cast<PointerAttributesFn>(f);
  }();
  return fn;
}

// Remembers the allocation that contains p (validated device memory of `device`).
void remember_range(const void* p, int device) {
  const PointerAttributesFn fn = pointer_attributes_fn();
  if (fn == nullptr) return;
  CUdeviceptr start = 0;
  std::size_t size = 0;
  CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void* data[2] = {&start, &size};
  if (fn(2, attrs, data, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS || size == 0) return;
  KnownRange& slot = t_known[t_next_known];
  t_next_known = (t_next_known + 1) % kKnownRanges;
  slot = KnownRange{static_cast<std::uintptr_t>(start), static_cast<std::uintptr_t>(start) + size, device};
}

bool known_device_memory(const void* p, int device) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  for (const KnownRange& r : t_known)
    if (a >= r.begin && a < r.end && r.device == device) return true;
  return false;
}

}  // namespace

void check_device_pointer(const void* p, const char* what, int device) {
  if (p == nullptr) throw Error(Errc::invalid_argument, std::string(what != nullptr ? what : "pointer") + " is null");
  if (device >= 0 && known_device_memory(p, device)) return;
  check_device_pointer_slow(p, what);
  if (device >= 0) remember_range(p, device);
}

int current_device_for_checks() {
  int device = -1;
  return cudaGetDevice(&device) == cudaSuccess ? device : -1;
}

void check_device_pointer(const void* p, const char* what) { check_device_pointer(p, what, current_device_for_checks()); }

void check_device_pointer_slow(const void* p, const char* what) {
  const std::string name = what != nullptr ? what : "pointer";

  int current = -1;
  cudaError_t err = cudaGetDevice(&current);
  if (err != cudaSuccess) {
    cudaGetLastError();
    const Errc code = err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ? Errc::no_device : Errc::cuda_error;
    throw Error(code, "cudaGetDevice failed while checking " + name + ": " + cudaGetErrorString(err));
  }
  cudaPointerAttributes attr{};
  err = cudaPointerGetAttributes(&attr, p);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw Error(Errc::cuda_error,
                "cudaPointerGetAttributes failed for " + name + ": " + cudaGetErrorString(err));
  }

  switch (attr.type) {
    case cudaMemoryTypeDevice:
      if (attr.device != current)
        throw Error(Errc::wrong_memory, name + " is device memory of device " + std::to_string(attr.device) +
                                            ", but the current device is " + std::to_string(current));
      return;
    case cudaMemoryTypeManaged:
      return;
    case cudaMemoryTypeHost:
      // Page-locked host memory is usable only if it is mapped into the current device's space.
      if (attr.devicePointer == nullptr)
        throw Error(Errc::wrong_memory,
                    name + " is page-locked host memory not mapped for device " + std::to_string(current));
      return;
    case cudaMemoryTypeUnregistered:
    default:
      throw Error(Errc::wrong_memory, name + " is host memory; the CUDA backend needs device memory");
  }
}

}  // namespace cuda::detail
#endif

}  // namespace foldkit
