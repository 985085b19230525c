// The ladder test harness (see ladder_harness.hpp).
#include "ladder_harness.hpp"

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <set>
#include <stdexcept>
#include <sstream>
#include <tuple>

#include "foldkit/error.hpp"
#include "support/test_config.hpp"

namespace foldkit::test::ladder {
namespace {

constexpr std::uint32_t kF32Guard = 0x7fc00000u;  // quiet NaN
constexpr std::uint32_t kI32Guard = 0x5bd1e995u;  // odd and large: changes any sum it enters
constexpr std::size_t kOutGuardWords = 64;        // poisoned words after the output
constexpr std::uint32_t kPoisonWord = 0xFFFFFFFFu;  // cudaMemset 0xFF: NaN as f32, -1 as i32
constexpr long double kExactLimit = 16777216.0L;    // 2^24: float holds every integer up to it

std::uint32_t to_word(Element e, double v) {
  if (e == Element::i32) return static_cast<std::uint32_t>(static_cast<std::int32_t>(v));
  const float f = static_cast<float>(v);
  std::uint32_t w;
  std::memcpy(&w, &f, 4);
  return w;
}

std::string show_word(Element e, std::uint32_t w) {
  char buf[48];
  if (e == Element::i32) {
    std::snprintf(buf, sizeof buf, "%d", static_cast<int>(static_cast<std::int32_t>(w)));
  } else {
    float f;
    std::memcpy(&f, &w, 4);
    std::snprintf(buf, sizeof buf, "%.9g (0x%08x)", static_cast<double>(f), w);
  }
  return buf;
}

// True when word w is an acceptable output for (want, tol).
bool matches(Element e, std::uint32_t w, long double want, long double tol) {
  if (e == Element::i32) {
    // int32 wraps modulo 2^32 (the contract); want is an exact integer.
    const auto exact = static_cast<std::int64_t>(want);
    return w == static_cast<std::uint32_t>(static_cast<std::uint64_t>(exact));
  }
  float f;
  std::memcpy(&f, &w, 4);
  if (!std::isfinite(f)) return false;  // the poison (NaN) or a guard element that was read
  if (tol == 0) return static_cast<long double>(f) == want;  // -0 == +0 is fine
  return std::fabs(static_cast<long double>(f) - want) <= tol;
}

std::size_t round_up_256(std::size_t b) { return (std::max<std::size_t>(b, 1) + 255) / 256 * 256; }

Input upload(Element e, std::int64_t n, std::int64_t offset, std::vector<double> x) {
  Input in;
  in.element = e;
  in.n = n;
  in.offset = offset;
  in.x = std::move(x);
  const std::uint32_t guard = e == Element::f32 ? kF32Guard : kI32Guard;
  std::vector<std::uint32_t> words(static_cast<std::size_t>(offset + n + kTailGuard), guard);
  for (std::int64_t i = 0; i < n; ++i) words[static_cast<std::size_t>(offset + i)] = to_word(e, in.x[i]);
  in.buffer = DeviceBuffer(words.size() * 4);  // cudaMalloc: 256-byte aligned
  FOLDKIT_CUDA_CHECK(cudaMemcpy(in.buffer.get(), words.data(), words.size() * 4, cudaMemcpyHostToDevice));
  FOLDKIT_CUDA_CHECK(cudaDeviceSynchronize());  // pageable copy: make sure it landed (see to_device)
  in.ptr = static_cast<const char*>(in.buffer.get()) + offset * 4;
  return in;
}

// Per output element: value = the ladder's answer, scale = sum |x| of what it depends on
// (the whole input for a reduction; the tile for a scan, so any order of adds within a tile is
// covered).
void reference(const Variant& v, const Input& in, const Shape& shape, std::vector<long double>& value,
               std::vector<long double>& scale) {
  const std::int64_t n = in.n;
  if (!is_scan(v)) {
    long double s = 0, a = 0;
    for (double xi : in.x) {
      s += xi;
      a += std::fabs(xi);
    }
    value.assign(1, s);
    scale.assign(1, a);
    return;
  }
  const std::int64_t tile = static_cast<std::int64_t>(v.tile_elements(shape));
  if (tile <= 0) throw std::runtime_error(v.full_name() + ": tile_elements(" + describe(shape) + ") is 0");
  value.resize(static_cast<std::size_t>(n));
  scale.resize(static_cast<std::size_t>(n));
  for (std::int64_t t = 0; t < n; t += tile) {
    const std::int64_t end = std::min(n, t + tile);
    long double s = 0, a = 0;
    for (std::int64_t i = t; i < end; ++i) {
      s += in.x[i];
      a += std::fabs(in.x[i]);
      value[i] = s;
    }
    for (std::int64_t i = t; i < end; ++i) scale[i] = a;
  }
}

}  // namespace

bool is_scan(const Variant& v) { return v.algorithm == Algorithm::blocked_inclusive_scan; }
bool is_single_thread(const Variant& v) { return v.name == "Serial"; }

std::vector<std::int64_t> ladder_sizes(const Variant& v) {
  if (sanitize_matrix()) return {33, 1025};
  std::vector<std::int64_t> s = {0, 1, 2, 3, 31, 32, 33, 1023, 1024, 1025, 4099, 65521, 1000003};
  for (int k : {8, 12, 16, 20, 22}) {
    const std::int64_t p = std::int64_t{1} << k;
    s.insert(s.end(), {p - 1, p, p + 1});
  }
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  const std::int64_t cap = is_single_thread(v) ? std::min(max_n(), kSerialMaxN) : max_n();
  std::vector<std::int64_t> kept;
  for (std::int64_t n : s)
    if (n <= cap) kept.push_back(n);
  return kept;
}

bool every_shape_at(std::int64_t n) {
  return n == 0 || n == 1 || n == 2 || n == 3 || n == 31 || n == 33 || n == 1023 || n == 1025 || n == 4099;
}

// FOLDKIT_LADDER_SHAPES selects a smaller matrix for the sanitizer runs (racecheck is ~100x
// slower per shared-memory access; a race depends on the block size, not on n or the grid):
//   pow2      power-of-two block sizes only (the odd multiples of 32 run the same code);
//   sanitize  power-of-two blocks, derived grid only, n in {33, 1025} at one odd offset.
std::string ladder_shapes_mode() {
  const char* e = std::getenv("FOLDKIT_LADDER_SHAPES");
  return e != nullptr ? std::string(e) : std::string();
}
bool pow2_blocks_only() { return ladder_shapes_mode() == "pow2" || sanitize_matrix(); }
bool sanitize_matrix() { return ladder_shapes_mode() == "sanitize"; }

std::vector<Shape> accepted_shapes(const Variant& v) {
  std::set<int> ipts = {v.seed_shape.items_per_thread};
  for (const Shape& s : v.sweep) ipts.insert(s.items_per_thread);
  const bool pow2 = pow2_blocks_only();
  std::vector<Shape> out;
  for (int ipt : ipts)
    for (int threads = 32; threads <= 1024; threads += pow2 ? threads : 32)
      for (int grid : {0, 1, 3, 7, 132, 1000}) {
        if (sanitize_matrix() && grid != 0) continue;
        const Shape s{threads, grid, ipt};
        if (v.accepts(s)) out.push_back(s);
      }
  return out;
}

std::vector<Shape> rejection_candidates(const Variant& v) {
  const Shape b = v.seed_shape;
  return {Shape{0, b.grid_blocks, b.items_per_thread},    Shape{-32, b.grid_blocks, b.items_per_thread},
          Shape{33, b.grid_blocks, b.items_per_thread},   Shape{48, b.grid_blocks, b.items_per_thread},
          Shape{2048, b.grid_blocks, b.items_per_thread}, Shape{b.block_threads, -1, b.items_per_thread},
          Shape{b.block_threads, b.grid_blocks, 0},       Shape{b.block_threads, b.grid_blocks, -1},
          Shape{b.block_threads, b.grid_blocks, 3},       Shape{b.block_threads, b.grid_blocks, 1000}};
}

std::string describe(const Shape& s) {
  std::ostringstream o;
  o << "{block_threads=" << s.block_threads << " grid_blocks=" << s.grid_blocks
    << " items_per_thread=" << s.items_per_thread << "}";
  return o.str();
}

std::string Input::describe() const {
  return std::string(foldkit::ladder::element_name(element)) + " n=" + std::to_string(n) +
         " offset=" + std::to_string(offset);
}

Input make_exact_input(Element e, std::int64_t n, std::int64_t offset, CounterRng rng) {
  std::vector<double> x(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t m = rng.in_range<std::int64_t>(static_cast<std::uint64_t>(i), 1, 64);
    x[i] = static_cast<double>((rng.bits(~static_cast<std::uint64_t>(i)) & 1) ? -m : m);
  }
  // Never all equal: a rung that reads one element n times must not pass by luck.
  if (n >= 2 && std::all_of(x.begin(), x.end(), [&](double xi) { return xi == x[0]; })) x[n - 1] = -x[0];
  return upload(e, n, offset, std::move(x));
}

Input make_real_input(std::int64_t n, std::int64_t offset, CounterRng rng) {
  std::vector<double> x(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    x[i] = static_cast<double>(static_cast<float>(0.5 + rng.unit(static_cast<std::uint64_t>(i))));
  return upload(Element::f32, n, offset, std::move(x));
}

Expected expect_exact(const Variant& v, const Input& in, const Shape& shape) {
  Expected e;
  reference(v, in, shape, e.value, e.tol);
  for (long double& t : e.tol) t = (in.element == Element::i32 || t <= kExactLimit) ? 0.0L : 1e-6L * t;
  return e;
}

Expected expect_real(const Variant& v, const Input& in, const Shape& shape, double rel_tol) {
  Expected e;
  reference(v, in, shape, e.value, e.tol);
  for (long double& t : e.tol) t *= rel_tol;
  return e;
}

// ---------------------------------------------------------------------------------------------
// Runner
// ---------------------------------------------------------------------------------------------
Runner::Runner(const Variant& v) : v_(v) {}

void* Runner::workspace(std::size_t bytes) {
  if (ws_.bytes() != bytes) {
    ws_ = DeviceBuffer();  // free first: the sizes can be large
    ws_ = DeviceBuffer(bytes);
  }
  return ws_.get();
}

void* Runner::output(std::size_t words) {
  if (out_.bytes() != words * 4) {
    out_ = DeviceBuffer();
    out_ = DeviceBuffer(words * 4);
  }
  return out_.get();
}

std::vector<std::uint32_t> Runner::run_once(const Input& in, const Shape& shape, void* ws, std::size_t out_words) {
  void* out = output(out_words + kOutGuardWords);
  FOLDKIT_CUDA_CHECK(cudaMemsetAsync(out, 0xFF, (out_words + kOutGuardWords) * 4, stream_));
  v_.launch(in.ptr, static_cast<std::size_t>(in.n), out, ws, shape, stream_);
  FOLDKIT_CUDA_CHECK(cudaGetLastError());
  std::vector<std::uint32_t> host(out_words + kOutGuardWords);
  FOLDKIT_CUDA_CHECK(cudaMemcpyAsync(host.data(), out, host.size() * 4, cudaMemcpyDeviceToHost, stream_));
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // a kernel fault surfaces here
  FOLDKIT_CUDA_CHECK(cudaGetLastError());
  return host;
}

std::string Runner::check(const Input& in, const Shape& shape, const Expected& want) {
  const std::string where = v_.full_name() + " " + in.describe() + " shape=" + describe(shape) +
                            (is_scan(v_) ? " tile=" + std::to_string(v_.tile_elements(shape)) : "");
  const std::size_t out_words = is_scan(v_) ? static_cast<std::size_t>(in.n) : 1;
  std::vector<std::uint32_t> got[2];
  try {
    const std::size_t ws_bytes = round_up_256(v_.workspace_bytes(static_cast<std::size_t>(in.n), shape));
    void* ws = workspace(ws_bytes);
    FOLDKIT_CUDA_CHECK(cudaMemsetAsync(ws, 0, ws_bytes, stream_));  // zeroed once for both calls
    for (int call = 0; call < 2; ++call) got[call] = run_once(in, shape, ws, out_words);
  } catch (const std::exception& e) {
    return where + ": threw: " + e.what();
  }
  for (int call = 0; call < 2; ++call) {
    const char* which = call == 0 ? "first call" : "second call (same workspace)";
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < out_words; ++i)
      if (!matches(in.element, got[call][i], want.value[i], want.tol[i]) && bad++ == 0) first = i;
    if (bad > 0) {
      std::ostringstream o;
      o << where << ": " << which << ": " << bad << " of " << out_words << " outputs wrong; first out[" << first
        << "] = " << show_word(in.element, got[call][first]) << ", expected "
        << static_cast<double>(want.value[first]);
      if (want.tol[first] > 0) o << " +- " << static_cast<double>(want.tol[first]);
      return o.str();
    }
    for (std::size_t i = out_words; i < got[call].size(); ++i)
      if (got[call][i] != kPoisonWord)
        return where + ": " + which + ": wrote past the output (word " + std::to_string(i) + ")";
  }
  if (v_.deterministic && std::memcmp(got[0].data(), got[1].data(), out_words * 4) != 0)
    return where + ": deterministic variant, but two calls gave different bits";
  return "";
}

std::string Runner::check_rejected(const Input& in, const Shape& bad) {
  const std::string where = v_.full_name() + " shape=" + describe(bad) + " (accepts() is false)";
  // Buffers big enough for the seed shape: launch must throw before using them anyway.
  void* ws = workspace(round_up_256(v_.workspace_bytes(static_cast<std::size_t>(in.n), v_.seed_shape)));
  void* out = output(static_cast<std::size_t>(in.n) + kOutGuardWords);
  try {
    v_.launch(in.ptr, static_cast<std::size_t>(in.n), out, ws, bad, stream_);
  } catch (const foldkit::Error& e) {
    if (e.code() != foldkit::Errc::invalid_argument)
      return where + ": threw foldkit::Error with code " + foldkit::errc_name(e.code()) + ", not invalid_argument";
    FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    FOLDKIT_CUDA_CHECK(cudaGetLastError());
    return "";
  } catch (const std::exception& e) {
    return where + ": threw something other than foldkit::Error: " + e.what();
  }
  FOLDKIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return where + ": launch did not throw";
}

}  // namespace foldkit::test::ladder
