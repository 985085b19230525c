// The seeds' kernel ladder: every kernel the seed documents (../shared/seeds/, see
// docs/ladder.md) teach, as a named variant that is correct for any n, any input alignment and
// every launch shape it accepts. The ladder is for reading, testing and benchmarking; it is not
// part of the installed library, and its rungs keep the seeds' algorithms (including their
// float atomics and fixed-shape trees) — only the seeds' bugs are fixed, each fix commented.
//
// Contract of every variant's launch():
// - in: device memory, n elements of the variant's element type, ANY alignment (a rung that
//   loads vectors handles the unaligned head and the tail itself). n may be 0.
// - out: device memory. reduce_sum: one element, the sum of in[0, n) (0 for n == 0).
//   blocked_inclusive_scan: n elements; out[i] = in[t] + ... + in[i] where t is the first index of
//   i's tile, tiles being tile_elements(shape) consecutive elements from index 0 (seed 004's
//   "blocked prefix sum"). int32 arithmetic wraps modulo 2^32 (done in unsigned, never UB).
// - workspace: device memory of workspace_bytes(n, shape) bytes, 256-byte aligned, zeroed once
//   by the caller after allocation. A variant that keeps counters there (single-pass tickets,
//   atomic accumulators) leaves them zeroed again when its launch completes, so the same
//   workspace serves the next call without a memset; distinct workspaces never interact (the
//   seeds' global static counter is gone).
// - Stream-ordered on `stream`, no host synchronisation; throws foldkit::Error
//   (Errc::invalid_argument) for a shape it does not accept (accepts(shape) false), and
//   Errc::cuda_error when a launch fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace foldkit::ladder {

enum class Algorithm { reduce_sum, blocked_inclusive_scan };
enum class Element { i32, f32 };

inline const char* element_name(Element e) { return e == Element::i32 ? "i32" : "f32"; }
inline std::size_t element_bytes(Element) { return 4; }

// A launch configuration. What each field means is the variant's to say (in `shape_help`);
// fields a variant does not use are ignored by it and by accepts().
struct Shape {
  int block_threads = 256;    // threads per block
  int grid_blocks = 0;        // blocks; 0 = the variant derives the grid from n (and says how)
  int items_per_thread = 1;   // elements (or vectors) per thread per step: reduce6's / seed 004's
                              // batch / coarsening factor; 1 where the rung has none
};

struct Variant {
  std::string seed;    // "000", "002", "003" or "004": the seed document it comes from
  std::string name;    // the seed's own name: "TwoPassInterleaved", "reduce3", "kernel_2", ...
  std::string change;  // one line: what this rung changes over the previous one, and why
  std::string shape_help;  // one line: which Shape fields it uses and what it derives itself
  Algorithm algorithm = Algorithm::reduce_sum;
  Element element = Element::f32;
  int rung = 0;              // position in its seed's ladder, from 0 (the first rung)
  Shape seed_shape;          // the configuration the seed used (or its closest valid one)
  std::vector<Shape> sweep;  // the shapes `foldkit-bench ladder --sweep` tries (all accepted)
  bool deterministic = true; // false for rungs with float atomics (order of adds varies)
  bool (*accepts)(const Shape& shape) = nullptr;
  std::size_t (*workspace_bytes)(std::size_t n, const Shape& shape) = nullptr;
  // Scans only: elements per independently scanned tile for this shape.
  std::size_t (*tile_elements)(const Shape& shape) = nullptr;
  void (*launch)(const void* in, std::size_t n, void* out, void* workspace, const Shape& shape,
                 cudaStream_t stream) = nullptr;

  std::string full_name() const { return "seed" + seed + "/" + name + "/" + element_name(element); }
};

// Every variant, in seed order, each seed's rungs in ladder order, i32 before f32.
const std::vector<Variant>& all_variants();

// Each seed's variants; defined in ladder/seedNNN/.
std::vector<Variant> seed000_variants();
std::vector<Variant> seed002_variants();
std::vector<Variant> seed003_variants();
std::vector<Variant> seed004_variants();

}  // namespace foldkit::ladder
