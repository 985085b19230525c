// The CPU benchmarks' shared pieces (cpu_host.hpp).
#include "cpu_host.hpp"

#include <dirent.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

namespace fkbench {

std::size_t parse_cache_size(const std::string& s) {
  if (s.empty()) return 0;
  std::size_t v = std::strtoull(s.c_str(), nullptr, 10);
  if (s.find('K') != std::string::npos) v <<= 10;
  if (s.find('M') != std::string::npos) v <<= 20;
  return v;
}

HostInfo query_host() {
  HostInfo h;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      h.cpu_name = line.substr(line.find(':') + 2);
      break;
    }
  }
  h.threads = omp_get_max_threads();
  // Take the larger of the two answers: some VMs report the host's whole L3 in one and a slice
  // in the other, and rotating over too much only costs memory.
  std::string s;
  std::ifstream("/sys/devices/system/cpu/cpu0/cache/index3/size") >> s;
  h.llc_bytes = parse_cache_size(s);
#ifdef _SC_LEVEL3_CACHE_SIZE
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) h.llc_bytes = std::max(h.llc_bytes, static_cast<std::size_t>(l3));
#endif
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) h.avail_bytes = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
  return h;
}

std::uint64_t read_ceiling(const unsigned char* p, std::size_t bytes) {
  constexpr int kLanes = 16;
  const std::int64_t blocks = static_cast<std::int64_t>(bytes / (8 * kLanes));
  const std::uint64_t* w = reinterpret_cast<const std::uint64_t*>(p);  // p is 64-byte aligned
  std::uint64_t acc = 0;
#pragma omp parallel reduction(^ : acc)
  {
    std::uint64_t lane[kLanes] = {};
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::uint64_t* q = w + b * kLanes;
      for (int j = 0; j < kLanes; ++j) lane[j] ^= q[j];
    }
    for (int j = 0; j < kLanes; ++j) acc ^= lane[j];
  }
  for (std::size_t i = static_cast<std::size_t>(blocks) * 8 * kLanes; i < bytes; ++i) acc ^= p[i];
  return acc;
}

void wait_until_quiet(const std::function<bool(long tid)>& ignore) {
  const long self = static_cast<long>(syscall(SYS_gettid));
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(200)) {
    bool quiet = true;
    if (DIR* dir = opendir("/proc/self/task")) {
      while (dirent* e = readdir(dir)) {
        const long tid = std::strtol(e->d_name, nullptr, 10);
        if (tid <= 0 || tid == self || (ignore && ignore(tid))) continue;
        std::ifstream stat("/proc/self/task/" + std::string(e->d_name) + "/stat");
        std::string line;
        std::getline(stat, line);
        const std::size_t paren = line.rfind(')');
        if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'R') {
          quiet = false;
          break;
        }
      }
      closedir(dir);
    }
    if (quiet) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace fkbench
