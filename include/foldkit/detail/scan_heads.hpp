// Where the segments of a CPU scan start ("heads": a scan restarts from its seed there), for
// the built-in scans (src/cpu/scan_chunk.hpp) and the header-only user-operator scans
// (foldkit/scan.hpp). Internal (namespace detail), but installed with the public headers.
#pragma once

#include <algorithm>
#include <cstdint>

namespace foldkit::cpu::detail {

// Each policy gives last_head(b, e): the last head in [b, e), or -1; and a cursor whose
// next(p, e) is the first head in [p, e), or e. Cursors only move forward.

struct WholeArray {  // one segment: a head at 0
  std::int64_t last_head(std::int64_t b, std::int64_t) const { return b == 0 ? 0 : -1; }
  struct Cursor {
    std::int64_t next(std::int64_t p, std::int64_t e) const { return p == 0 ? 0 : e; }
  };
  Cursor cursor(std::int64_t) const { return {}; }
};

struct Blocks {  // a head every `length` elements (length >= 1)
  std::int64_t length;
  std::int64_t last_head(std::int64_t b, std::int64_t e) const {
    const std::int64_t h = (e - 1) - (e - 1) % length;
    return h >= b ? h : -1;
  }
  struct Cursor {
    std::int64_t length;
    std::int64_t next(std::int64_t p, std::int64_t e) const {
      const std::int64_t r = p % length;
      if (r == 0) return p;
      const std::int64_t gap = length - r;  // never overflows, unlike rounding p up
      return gap >= e - p ? e : p + gap;
    }
  };
  Cursor cursor(std::int64_t) const { return Cursor{length}; }
};

// Segment s starts at offsets[s], s < count (validated: offsets[0] == 0, non-decreasing,
// offsets[count] == n). Empty segments repeat a start; restarting twice there is harmless.
struct Segments {
  const std::int64_t* offsets;
  std::int64_t count;
  std::int64_t last_head(std::int64_t b, std::int64_t e) const {
    // The last start <= e - 1; offsets[0] == 0 <= e - 1, so there is one.
    const std::int64_t* it = std::upper_bound(offsets, offsets + count, e - 1);
    const std::int64_t h = *(it - 1);
    return h >= b ? h : -1;
  }
  struct Cursor {
    const std::int64_t* offsets;
    std::int64_t count;
    std::int64_t s;  // no start below offsets[s] is >= the positions still to come
    std::int64_t next(std::int64_t p, std::int64_t e) {
      while (s < count && offsets[s] < p) ++s;  // amortised: each segment is passed once
      return s < count && offsets[s] < e ? offsets[s] : e;
    }
  };
  Cursor cursor(std::int64_t b) const {
    return Cursor{offsets, count, std::lower_bound(offsets, offsets + count, b) - offsets};
  }
};

}  // namespace foldkit::cpu::detail
