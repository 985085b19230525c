// Output written in whole 64-byte lines, with streaming (non-temporal) stores where the output
// is large: the CPU scans (scan_chunk.hpp) and the tensor reductions' short rows
// (tensor_reduce_cpu.cpp, BuiltinFold::write_rows).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>  // _mm_stream_si128, _mm_sfence
#endif

namespace foldkit::cpu::detail {

// Outputs at least this large are written with streaming (non-temporal) stores, whole 64-byte
// lines at a time. A plain store first reads the line from DRAM (read for ownership), so a scan
// would move 3 bytes for every 2 that the copy ceiling moves (on the 16-core host memcpy moves
// 94 GB/s, as much as the read-only ceiling: it does not pay that read); streaming stores skip
// it, and keep the output from evicting the pieces waiting in L2.
// They only pay when the output would be gone from the last-level cache before anyone reads it:
// 64 MiB is about a 16-core share of the largest current server L3s.
inline constexpr std::int64_t kStreamingStoreMinBytes = std::int64_t{64} << 20;

// 64 bytes: a cache line, and a whole number of elements of every result type (2, 4 or 8 bytes).
inline constexpr std::int64_t kLineBytes = 64;

// Elements from p to the next line boundary (p is aligned to its element size).
template <class R> std::int64_t elements_to_line(const R* p) {
  const auto used = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) % kLineBytes);
  return (kLineBytes - used) % kLineBytes / static_cast<std::int64_t>(sizeof(R));
}

// Writes one line of output from `line`; `stream` (dst is then 64-byte aligned): with
// non-temporal stores, which send the line to memory without reading it first.
template <class R> inline void store_line(R* dst, const R* line, bool stream) {
#if defined(__SSE2__)
  if (stream) {
    const auto* src = reinterpret_cast<const __m128i*>(line);
    auto* to = reinterpret_cast<__m128i*>(dst);
    for (int q = 0; q < 4; ++q) _mm_stream_si128(to + q, _mm_loadu_si128(src + q));
    return;
  }
#endif
  std::memcpy(dst, line, kLineBytes);
}

// Streaming stores are weakly ordered: each thread that made them calls this before others may
// read the output.
inline void streaming_store_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

inline constexpr bool kHaveStreamingStores =
#if defined(__SSE2__)
    true;
#else
    false;
#endif

}  // namespace foldkit::cpu::detail
