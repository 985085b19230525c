// The CPU benchmarks' shared pieces (cpu_suite.cpp: the CPU table; axes_cpu.cpp: tensors along
// axes): what the host has, a pool of inputs larger than its last-level cache, the all-core
// streaming-read ceiling, and the wait for a quiet process before a timed call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

#include "fill_values.hpp"
#include "table.hpp"  // rotation_text

namespace fkbench {

struct HostInfo {
  std::string cpu_name = "unknown CPU";
  int threads = 1;
  std::size_t llc_bytes = 0;
  std::size_t avail_bytes = 0;
};

// "32768K", "32M" -> bytes (0 for an empty string).
std::size_t parse_cache_size(const std::string& s);

// The CPU's name, OpenMP's thread count, the last-level cache and the available memory.
HostInfo query_host();

// Copies of one input laid out back to back; each call reads the next one.
class HostPool {
 public:
  ~HostPool() { std::free(base_); }

  // Returns false when even one copy does not fit in memory.
  template <class T>
  bool prepare(std::int64_t n, const HostInfo& host, std::uint64_t seed) {
    bytes_ = static_cast<std::size_t>(n) * sizeof(T);
    stride_ = (bytes_ + 63) / 64 * 64;
    const std::size_t target = std::max<std::size_t>(std::size_t{256} << 20, 4 * host.llc_bytes);
    copies_ = std::max<std::size_t>(2, (target + bytes_ - 1) / bytes_);
    const std::size_t cap = host.avail_bytes ? host.avail_bytes / 3 : std::size_t{2} << 30;
    if (stride_ > cap) return false;
    copies_ = std::max<std::size_t>(1, std::min(copies_, cap / stride_));  // fewer copies, not none
    std::free(base_);
    base_ = static_cast<unsigned char*>(std::aligned_alloc(64, copies_ * stride_));
    if (!base_) return false;
    const std::int64_t count = static_cast<std::int64_t>(copies_ * stride_ / sizeof(T));
    T* p = reinterpret_cast<T*>(base_);
    // Filled by all threads: first touch places the pages near the threads that read them.
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) p[i] = foldkit_bench::value_from_hash<T>(foldkit_bench::hash64(seed * 0x9e3779b97f4a7c15ull + i));
    cursor_ = 0;
    return true;
  }
  const unsigned char* copy(std::size_t k) const { return base_ + (k % copies_) * stride_; }
  const unsigned char* next() { return copy(cursor_++); }
  std::size_t copies() const { return copies_; }
  std::size_t footprint() const { return copies_ * stride_; }
  // "inputs rotated over 1536 MiB (6 copies)", or "one input buffer" when memory allowed no more.
  std::string memory_text() const { return rotation_text("input", copies_, footprint()); }

 private:
  unsigned char* base_ = nullptr;
  std::size_t bytes_ = 0, stride_ = 0, copies_ = 0, cursor_ = 0;
};

// All-core streaming read, the bound for any CPU reduction of the same bytes: XOR of every
// 8-byte word into 16 independent accumulators (128 bytes per iteration, vectorised by the
// compiler). A single accumulator was measured ~10% slower than foldkit's own sum: one load a
// cycle on one dependency chain is not a ceiling.
std::uint64_t read_ceiling(const unsigned char* p, std::size_t bytes);

// Waits (at most 200 ms) until no other thread of this process is runnable, but for threads
// `ignore` names (the --busy load): the OpenMP team spins for milliseconds after a region
// (libgomp: ~300k spins), and foldkit's pool for up to 0.2 ms after a call; neither may share the
// cores with the next timed call of another implementation.
void wait_until_quiet(const std::function<bool(long tid)>& ignore = nullptr);

}  // namespace fkbench
