// A program that calls only the CPU backend never starts CUDA (issue #21, item 3).
//
// In a CUDA build every foldkit::cpu:: call with n > 0 used to ask the CUDA runtime what kind of
// pointer it got (cudaGetDeviceCount, then cudaPointerGetAttributes): the first call loaded and
// initialised the driver, so a host-only program paid for CUDA. Now the CPU backend asks the
// driver only when this process has already loaded it (src/common/memory_check.cpp).
//
// Its own executable, one test: whether the driver is loaded is a property of the whole
// process, and the other test binaries start CUDA. Labelled cpu and gpu: on a machine without a
// driver it still checks the timing; on the GPU machine the old code fails it (libcuda loaded,
// and a first call of 187 ms against 0.03 for the second).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "foldkit/reduce.hpp"
#include "foldkit/scan.hpp"
#include "support/random_arrays.hpp"
#include "support/test_config.hpp"

namespace {

// The path of the CUDA driver library if this process has it mapped, else "".
std::string mapped_driver() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const std::size_t at = line.find("libcuda.so");
    if (at != std::string::npos) return line.substr(line.find('/'));
  }
  return "";
}

// With the driver loaded: whether device 0's primary context is active (asked through the
// driver, which does not create one). For the failure message only.
std::string primary_context_state() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return "driver not loaded";
  using GetState = int (*)(int, unsigned*, int*);
  auto get_state = reinterpret_cast<GetState>(dlsym(lib, "cuDevicePrimaryCtxGetState"));
  unsigned flags = 0;
  int active = 0;
  const int rc = get_state != nullptr ? get_state(0, &flags, &active) : -1;
  dlclose(lib);
  if (rc != 0) return "cuDevicePrimaryCtxGetState failed (" + std::to_string(rc) + ")";
  return active ? "device 0's primary context is ACTIVE" : "device 0's primary context is inactive";
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

TEST(CpuWithoutCuda, CpuCallsLoadNoDriverAndTheFirstCostsNoMoreThanTheSecond) {
  ASSERT_EQ(mapped_driver(), "") << "the driver was loaded before any foldkit call (test setup)";
  FOLDKIT_TRACE_SEED();
  const foldkit::test::CounterRng rng{foldkit::test::test_seed()};
  auto random_floats = [&](std::int64_t n) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(rng.unit(i) - 0.5);
    return v;
  };
  // What the first call would pay for CUDA, timed where nothing else differs between a first
  // and a second call: 2^16 f32 (256 KiB) runs on the caller alone (below the backend's
  // parallel threshold), so no thread is started.
  const std::vector<float> small = random_floats(std::int64_t{1} << 16);
  const auto small_n = static_cast<std::int64_t>(small.size());
  auto t0 = std::chrono::steady_clock::now();
  const double first_sum = foldkit::cpu::sum(small.data(), small_n);
  const double first_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  const double second_sum = foldkit::cpu::sum(small.data(), small_n);
  const double second_ms = ms_since(t0);
  EXPECT_EQ(first_sum, second_sum);
  EXPECT_LE(first_ms - second_ms, 1.0) << "first call " << first_ms << " ms, second " << second_ms << " ms";

  // Every kind of entry point, at 2^20 f32: above the parallel threshold, so the first of these
  // also starts the backend's threads (reported, not a CUDA cost: 0.6-1.0 ms for 16 threads on
  // the H100 machine's host).
  const std::vector<float> a = random_floats(std::int64_t{1} << 20);
  std::vector<float> out(a.size());
  const auto n = static_cast<std::int64_t>(a.size());
  t0 = std::chrono::steady_clock::now();
  (void)foldkit::cpu::sum(a.data(), n);
  const double threads_start_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  (void)foldkit::cpu::sum(a.data(), n);
  const double parallel_ms = ms_since(t0);
  (void)foldkit::cpu::max(a.data(), n);
  (void)foldkit::cpu::argmin(a.data(), n);
  foldkit::cpu::inclusive_scan<foldkit::ReduceOp::sum>(a.data(), n, out.data());
  (void)foldkit::cpu::reduce_custom(a.data(), n, [](float x, float y) { return x + y; }, 0.0f);

  const std::string driver = mapped_driver();
  EXPECT_EQ(driver, "") << "a CPU-backend call loaded the CUDA driver; " << primary_context_state();
  std::printf("[ foldkit  ] 2^16 f32: first call %.3f ms, second %.3f ms; 2^20 f32: first parallel call %.3f ms "
              "(starts the threads), next %.3f ms; driver %s\n",
              first_ms, second_ms, threads_start_ms, parallel_ms, driver.empty() ? "not loaded" : driver.c_str());
}

}  // namespace
