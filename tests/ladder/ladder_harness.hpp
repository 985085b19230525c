// What the ladder tests share: the sizes and launch shapes a variant is tried at, inputs whose
// every partial sum is exact, the expected outputs, and a runner that calls a variant the way
// ladder/variant.hpp's contract allows a caller to (poisoned output, workspace zeroed once and
// then reused) and reports the first thing that is wrong.
//
// Plain C++ on the CUDA runtime API: a variant's launch() is a host function, so no nvcc here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ladder/variant.hpp"
#include "support/cuda_backend.hpp"
#include "support/random_arrays.hpp"

namespace foldkit::test::ladder {

using foldkit::ladder::Algorithm;
using foldkit::ladder::Element;
using foldkit::ladder::Shape;
using foldkit::ladder::Variant;

// "Serial" is one GPU thread walking the whole input: its sizes stop at 2^16 (~tens of ms).
inline constexpr std::int64_t kSerialMaxN = std::int64_t{1} << 16;

bool is_scan(const Variant& v);
bool is_single_thread(const Variant& v);

// 0..3, 31..33, 1023..1025, primes (4099, 65521, 1000003), 2^k - 1, 2^k, 2^k + 1 for k in
// {8, 12, 16, 20, 22}; capped by FOLDKIT_TEST_MAX_N and, for Serial, by kSerialMaxN.
std::vector<std::int64_t> ladder_sizes(const Variant& v);
// Small sizes where every accepted shape is tried (elsewhere: the seed shape and a few).
bool every_shape_at(std::int64_t n);
// True under FOLDKIT_LADDER_SHAPES=sanitize: the reduced matrix of the sanitizer runs.
bool sanitize_matrix();

// Every shape accepts() takes among: block_threads 32, 64, ..., 1024 x grid_blocks
// {0, 1, 3, 7, 132, 1000} x items_per_thread of the seed shape and of the sweep list.
std::vector<Shape> accepted_shapes(const Variant& v);
// Shapes accepts() should reject: the seed shape with one field made invalid or unusual. Only
// those accepts() really rejects are used (a variant ignores fields it does not use).
std::vector<Shape> rejection_candidates(const Variant& v);
std::string describe(const Shape& s);

// One input of n elements at `offset` elements past a 256-byte aligned device allocation, with
// guard words before and after (NaN for f32, a large odd value for i32: reading one changes the
// result). x holds the values exactly (small integers and floats are exact in double).
struct Input {
  Element element = Element::f32;
  std::int64_t n = 0, offset = 0;
  std::vector<double> x;
  DeviceBuffer buffer;
  const void* ptr = nullptr;
  std::string describe() const;
};
// Non-zero integers in [-64, 64], not all equal (for n >= 2), as int32 or float.
Input make_exact_input(Element e, std::int64_t n, std::int64_t offset, CounterRng rng);
// Floats uniform in [0.5, 1.5) (f32 only).
Input make_real_input(std::int64_t n, std::int64_t offset, CounterRng rng);

// What each output element must be, within tol (0: exactly; int32 compares modulo 2^32).
struct Expected {
  std::vector<long double> value;
  std::vector<long double> tol;
};
// Exact data: exact wherever no partial sum can reach 2^24 (sum |x| of the whole input for a
// reduction, of the tile for a scan, <= 2^24); beyond that float gets 1e-6 * sum |x|.
Expected expect_exact(const Variant& v, const Input& in, const Shape& shape);
// Random floats in [0.5, 1.5): within rel_tol * (sum of the terms) of the long double result.
Expected expect_real(const Variant& v, const Input& in, const Shape& shape, double rel_tol);

// Calls one variant; owns a stream and the device buffers, sized exactly for each case so that
// compute-sanitizer sees any access past them.
class Runner {
 public:
  explicit Runner(const Variant& v);
  // Zeroes a workspace of workspace_bytes(n, shape), then calls the variant twice with it, each
  // time into a freshly poisoned output, and checks: both results against `want`, no write
  // past the output, no CUDA error, bitwise equal results if the variant is deterministic.
  // Returns "" when all is well, else a description of the first failure with the case.
  std::string check(const Input& in, const Shape& shape, const Expected& want);
  // launch() with a shape accepts() rejects must throw foldkit::Error(invalid_argument) before
  // doing anything. Returns "" when it does.
  std::string check_rejected(const Input& in, const Shape& bad);

 private:
  void* workspace(std::size_t bytes);
  void* output(std::size_t words);
  std::vector<std::uint32_t> run_once(const Input& in, const Shape& shape, void* ws, std::size_t out_words);

  const Variant& v_;
  Stream stream_;
  DeviceBuffer ws_, out_;
};

}  // namespace foldkit::test::ladder
