// Segmented reductions (foldkit/segmented_reduce.hpp): the CPU backend, and the CUDA kernels'
// own source run on the host (src/cuda/segmented_reduce_emulation.cuh), both against an
// independent reference (long double sums, 64-bit wrapping integer arithmetic, first-index
// scans), on random segment layouts: uniform lengths, tiny segments among a few huge ones, runs
// of empty segments, a few long segments, offsets that start after 0 and end before n, begin/end
// pairs overlapping and out of order; every op x dtype; NaNs and ties for min/max/argmin/argmax;
// misaligned inputs. CPU results must also equal foldkit::cpu::reduce over each segment bit for
// bit, for every thread count. Then n = 0, num_segments = 0 and every bad-input class, with the
// outputs checked untouched. Outputs are poisoned before every call. Seed: FOLDKIT_TEST_SEED.
//
// The emulation must be the first include (it defines the CUDA qualifiers for the host compiler).
#if __has_include(<cuda_runtime_api.h>) && __has_include(<ucontext.h>)
#include "cuda/segmented_reduce_emulation.cuh"
#define FOLDKIT_SEG_EMULATED 1
#else
#define FOLDKIT_SEG_EMULATED 0
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/segmented_reference.hpp"
#include "cpu/parallel.hpp"
#include "foldkit/error.hpp"
#include "foldkit/reduce.hpp"
#include "foldkit/segmented_reduce.hpp"
#include "support/random_arrays.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

// ---- one call and its checks -------------------------------------------------------------------

constexpr unsigned char kPoison = 0xA5;

template <ReduceOp Op, class T>
constexpr bool kIsArg = Op == ReduceOp::argmin || Op == ReduceOp::argmax;
template <ReduceOp Op, class T>
constexpr std::size_t out_size() {
  return kIsArg<Op, T> ? sizeof(I64) : sizeof(reduce_result_t<Op, T>);
}

enum class Backend { cpu, emulated_cuda, emulated_cuda_group, emulated_cuda_fused };

struct Outputs {
  std::vector<unsigned char> out, values;
  std::int32_t status = 77;
};

// Runs one call on `backend` (emulated_cuda: the kernels' source on the host, with `ws` as the
// workspace) and checks every segment. with_values: segmented_arg_reduce (arg ops only).
template <ReduceOp Op, class T>
void run_and_check(Backend backend, const Segs& g, const Data<T>& d, bool with_values, std::vector<unsigned char>* ws,
                   Rng& rng, bool core_bits) {
  const I64 S = g.count();
  Outputs o;
  o.out.assign(static_cast<std::size_t>(S) * out_size<Op, T>() + 1, kPoison);
  if (with_values) o.values.assign(static_cast<std::size_t>(S) * sizeof(T) + 1, kPoison);
  void* values = with_values ? o.values.data() : nullptr;
  const T* x = d.data();
  const std::string where = std::string(backend == Backend::cpu             ? "cpu"
                                        : backend == Backend::emulated_cuda ? "emulated cuda"
                                                                            : "emulated cuda, group path") +
                            " " + op_name(Op) +
                            " " + dtype_name(dtype_v<T>) + " " + g.what + " shift=" + std::to_string(d.shift) +
                            (with_values ? " (arg_reduce)" : "");
  SCOPED_TRACE(where);
  if (backend == Backend::cpu) {
    if (g.by_offsets) {
      if (with_values)
        cpu::segmented_arg_reduce(Op, dtype_v<T>, x, g.n, g.offsets.data(), S, reinterpret_cast<I64*>(o.out.data()), values);
      else cpu::segmented_reduce(Op, dtype_v<T>, x, g.n, g.offsets.data(), S, o.out.data());
    } else {
      cpu::segmented_reduce(Op, dtype_v<T>, x, g.n, g.begin.data(), g.end.data(), S, o.out.data());
    }
  } else {
#if FOLDKIT_SEG_EMULATED
    // 1-4 resident blocks, 1-4 tiles a block (the offsets form); the group path on 1-5 blocks
    // (negative: its fused kernel).
    const int group_blocks = backend == Backend::emulated_cuda_group   ? static_cast<int>(rng.uniform(1, 5))
                             : backend == Backend::emulated_cuda_fused ? -static_cast<int>(rng.uniform(1, 5))
                                                                       : 0;
    cuda::seg::emu::run_call<Op, T>(x, g.n, g.by_offsets, g.by_offsets ? g.offsets.data() : nullptr, g.begin.data(),
                                    g.end.data(), S, o.out.data(), values, &o.status, *ws, rng.next() | 1,
                                    static_cast<int>(rng.uniform(1, 4)), static_cast<int>(rng.uniform(1, 4)), group_blocks);
    EXPECT_EQ(o.status, 0);
    // Every call leaves the whole workspace zeroed (the convenient forms share the scans' one).
    const auto dirty = std::find_if(ws->begin(), ws->end(), [](unsigned char c) { return c != 0; });
    EXPECT_TRUE(dirty == ws->end()) << "workspace byte " << (dirty - ws->begin()) << " of " << ws->size()
                                    << " left nonzero";
#else
    (void)ws;
    (void)rng;
#endif
  }
  EXPECT_EQ(o.out.back(), kPoison) << "written past the output";
  if (with_values) EXPECT_EQ(o.values.back(), kPoison) << "written past the values";
  int failures = 0;
  for (I64 s = 0; s < S && failures < 5; ++s) {
    const I64 b = g.first(s), len = g.last(s) - b;
    const unsigned char* got = o.out.data() + s * out_size<Op, T>();
    const unsigned char* got_value = with_values ? o.values.data() + s * sizeof(T) : nullptr;
    const auto r = check_segment<Op, T>(x + b, len, got, got_value, /*nan_payload_exact=*/false);
    if (!r) {
      ++failures;
      ADD_FAILURE() << "segment " << s << " [" << b << ", " << b + len << "): " << r.message();
      continue;
    }
    if (core_bits && len > 0) {  // bit for bit cpu::reduce over the segment
      const auto want = cpu::reduce<Op, T>(x + b, len);
      if constexpr (kIsArg<Op, T>) {
        I64 gi;
        std::memcpy(&gi, got, sizeof gi);
        bool same = gi == want.index;
        if (got_value != nullptr) same = same && std::memcmp(got_value, &want.value, sizeof(T)) == 0;
        if (!same) {
          ++failures;
          ADD_FAILURE() << "segment " << s << ": not cpu::reduce's {" << bits_text(want.value) << ", " << want.index
                        << "}";
        }
      } else if (std::memcmp(got, &want, sizeof want) != 0) {
        ++failures;
        ADD_FAILURE() << "segment " << s << " (len " << len << "): " << bits_text(*reinterpret_cast<const decltype(want)*>(got))
                      << " is not cpu::reduce's " << bits_text(want);
      }
    }
  }
}

template <class F>
void for_each_dtype(F&& f) {
  f(std::int32_t{});
  f(std::uint32_t{});
  f(std::int64_t{});
  f(std::uint64_t{});
  f(float{});
  f(double{});
  f(half{});
  f(bfloat16{});
}
template <class F>
void for_each_op(F&& f) {
  f(std::integral_constant<ReduceOp, ReduceOp::sum>{});
  f(std::integral_constant<ReduceOp, ReduceOp::prod>{});
  f(std::integral_constant<ReduceOp, ReduceOp::min>{});
  f(std::integral_constant<ReduceOp, ReduceOp::max>{});
  f(std::integral_constant<ReduceOp, ReduceOp::mean>{});
  f(std::integral_constant<ReduceOp, ReduceOp::argmin>{});
  f(std::integral_constant<ReduceOp, ReduceOp::argmax>{});
}

// Every op x dtype on `layouts` random layouts (kinds cycling), both forms, arg_reduce too (the
// group path: the offsets form of every op but argmin/argmax).
void every_op_and_dtype(Backend backend, int layouts, I64 budget) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  std::vector<unsigned char> ws;
  for_each_dtype([&](auto tag) {
    using T = decltype(tag);
    for_each_op([&](auto op_tag) {
      constexpr ReduceOp Op = decltype(op_tag)::value;
      for (int k = 0; k < layouts; ++k) {
        const Segs g = random_offsets(rng, rng.uniform(1, budget), static_cast<int>(rng.uniform(0, 5)));
        const Data<T> d = make_data<Op, T>(rng, g.n, rng.uniform(0, 2) == 0 ? 0.002 : 0.0);
        if (backend == Backend::emulated_cuda_group || backend == Backend::emulated_cuda_fused) {
          if constexpr (!kIsArg<Op, T>) run_and_check<Op, T>(backend, g, d, false, &ws, rng, false);
          continue;
        }
        run_and_check<Op, T>(backend, g, d, false, &ws, rng, backend == Backend::cpu);
        if constexpr (kIsArg<Op, T>) run_and_check<Op, T>(backend, g, d, true, &ws, rng, backend == Backend::cpu);
        const I64 n = rng.uniform(0, budget);
        const Segs be = random_begin_end(rng, n, rng.uniform(0, 300), rng.uniform(0, n));
        const Data<T> db = make_data<Op, T>(rng, n);
        run_and_check<Op, T>(backend, be, db, false, &ws, rng, backend == Backend::cpu);
      }
    });
  });
}

// ---- CPU backend -------------------------------------------------------------------------------

TEST(CpuSegmentedReduce, EveryOpAndDtype) { every_op_and_dtype(Backend::cpu, 3, 40000); }

// Large layouts (segments of millions of elements among tiny ones, runs of empties) on 1, 2, 3
// and 8 threads: the same bytes every time, and cpu::reduce's bits per segment.
TEST(CpuSegmentedReduce, LongSegmentsAnyThreadCount) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const I64 budget = std::min<I64>(max_n(), I64{3} << 20);
  auto run = [&](auto op_tag, auto tag, int kind) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using T = decltype(tag);
    const Segs g = random_offsets(rng, budget, kind);
    const Data<T> d = make_data<Op, T>(rng, g.n);
    std::vector<unsigned char> first;
    for (int threads : {1, 2, 3, 8}) {
      cpu::detail::set_forced_threads_for_testing(threads);
      std::vector<unsigned char> out(static_cast<std::size_t>(g.count()) * out_size<Op, T>(), kPoison);
      cpu::segmented_reduce(Op, dtype_v<T>, d.data(), g.n, g.offsets.data(), g.count(), out.data());
      if (first.empty()) first = out;
      else EXPECT_TRUE(out == first) << threads << " threads changed the bytes (" << g.what << ")";
    }
    cpu::detail::set_forced_threads_for_testing(0);
    run_and_check<Op, T>(Backend::cpu, g, d, false, nullptr, rng, true);
  };
  using S = std::integral_constant<ReduceOp, ReduceOp::sum>;
  using AM = std::integral_constant<ReduceOp, ReduceOp::argmax>;
  using MN = std::integral_constant<ReduceOp, ReduceOp::min>;
  for (int kind : {0, 1, 2, 3}) {
    run(S{}, float{}, kind);
    run(S{}, half{}, kind);
    run(AM{}, std::int32_t{}, kind);
    run(MN{}, double{}, kind);
  }
}

TEST(CpuSegmentedReduce, BeginEndOverlappingAndOutOfOrder) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (int k = 0; k < 4; ++k) {
    const I64 n = rng.uniform(1, 300000);
    const Segs g = random_begin_end(rng, n, rng.uniform(1, 2000), rng.uniform(1, n));
    run_and_check<ReduceOp::sum, float>(Backend::cpu, g, make_data<ReduceOp::sum, float>(rng, n), false, nullptr, rng, true);
    run_and_check<ReduceOp::argmin, half>(Backend::cpu, g, make_data<ReduceOp::argmin, half>(rng, n, 0.001), false, nullptr,
                                          rng, true);
    run_and_check<ReduceOp::prod, std::int64_t>(Backend::cpu, g, make_data<ReduceOp::prod, std::int64_t>(rng, n), false,
                                                 nullptr, rng, true);
  }
}

// NaNs and ties planted densely: first NaN, first index of the extreme, the zeros' rule.
TEST(CpuSegmentedReduce, NanAndTies) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  auto run = [&](auto op_tag, auto tag) {
    constexpr ReduceOp Op = decltype(op_tag)::value;
    using T = decltype(tag);
    const Segs g = random_offsets(rng, 20000, 0);
    run_and_check<Op, T>(Backend::cpu, g, make_data<Op, T>(rng, g.n, 0.02), kIsArg<Op, T>, nullptr, rng, true);
  };
  for_each_op([&](auto op_tag) {
    run(op_tag, float{});
    run(op_tag, double{});
    run(op_tag, half{});
    run(op_tag, bfloat16{});
  });
}

TEST(CpuSegmentedReduce, EdgeCases) {
  std::vector<float> x = {1, 2, 3, 4, 5};
  float out[4];
  // n = 0: every segment empty, the input may be null.
  const I64 zeros[] = {0, 0, 0};
  std::memset(out, 0xA5, sizeof out);
  cpu::segmented_reduce(ReduceOp::sum, DType::f32, nullptr, 0, zeros, 2, out);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_FALSE(std::signbit(out[1]));
  cpu::segmented_reduce(ReduceOp::max, DType::f32, nullptr, 0, zeros, 2, out);
  EXPECT_EQ(out[0], -HUGE_VALF);
  // num_segments = 0: nothing written, output may be null; the one offset is still checked.
  const I64 one[] = {3};
  cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 5, one, 0, nullptr);
  const I64 bad_one[] = {6};
  EXPECT_THROW(cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 5, bad_one, 0, nullptr), Error);
  cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 5, nullptr, nullptr, 0, nullptr);  // begin/end, S = 0
  // Offsets not starting at 0 nor ending at n; empty segments; arg ops' relative indices.
  const I64 offs[] = {1, 3, 3, 4};
  cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 5, offs, 3, out);
  EXPECT_EQ(out[0], 5.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 4.0f);
  I64 idx[3];
  float vals[3];
  cpu::segmented_arg_reduce(ReduceOp::argmax, DType::f32, x.data(), 5, offs, 3, idx, vals);
  EXPECT_EQ(idx[0], 1);
  EXPECT_EQ(idx[1], -1);
  EXPECT_EQ(idx[2], 0);
  EXPECT_EQ(vals[0], 3.0f);
  EXPECT_EQ(vals[1], -HUGE_VALF);
  EXPECT_EQ(vals[2], 4.0f);
  std::int64_t iout[3];
  const std::int32_t xi[] = {5, -2, 7, 7};
  const I64 offs_i[] = {0, 2, 2, 4};
  cpu::segmented_reduce(ReduceOp::min, DType::i32, xi, 4, offs_i, 3, iout);  // i32 min -> i32
  std::int32_t mins[3];
  std::memcpy(mins, iout, sizeof mins);
  EXPECT_EQ(mins[0], -2);
  EXPECT_EQ(mins[1], std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(mins[2], 7);
  double means[3];
  cpu::segmented_reduce(ReduceOp::mean, DType::i32, xi, 4, offs_i, 3, means);
  EXPECT_EQ(means[0], 1.5);
  EXPECT_TRUE(std::isnan(means[1]));
  EXPECT_EQ(means[2], 7.0);
}

// Every bad-input class: the right Errc, and the outputs untouched.
template <class Call>
void expect_rejected(Errc code, Call&& call, const std::vector<unsigned char>& out, const char* what) {
  const std::vector<unsigned char> before = out;
  try {
    call();
    ADD_FAILURE() << what << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << what << ": " << e.what();
  }
  EXPECT_TRUE(out == before) << what << ": the output changed";
}

TEST(CpuSegmentedReduce, BadInput) {
  std::vector<float> x(16, 1.0f);
  std::vector<unsigned char> out(64, kPoison), vals(64, kPoison);
  void* o = out.data();
  auto* idx = reinterpret_cast<I64*>(out.data());
  const I64 ok[] = {0, 4, 8};
  const I64 decreasing[] = {0, 5, 3, 8};
  const I64 decreasing_by_one[] = {0, 5, 4, 8};  // the rule's edge: offsets[i] = offsets[i + 1] + 1
  const I64 too_big[] = {0, 4, 17};
  const I64 negative[] = {-1, 4};
  auto seg = [&](const I64* offs, I64 S) { return [=] { cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 16, offs, S, o); }; };
  expect_rejected(Errc::invalid_argument, seg(decreasing, 3), out, "decreasing offsets");
  try {
    seg(decreasing, 3)();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("offsets[1] = 5"), std::string::npos) << e.what();
  }
  expect_rejected(Errc::invalid_argument, seg(decreasing_by_one, 3), out, "offsets decreasing by one");
  expect_rejected(Errc::invalid_argument, seg(too_big, 2), out, "offset > n");
  expect_rejected(Errc::invalid_argument, seg(negative, 1), out, "negative offset");
  expect_rejected(Errc::invalid_argument, seg(nullptr, 2), out, "null offsets");
  expect_rejected(Errc::invalid_argument, seg(ok, -1), out, "negative num_segments");
  expect_rejected(Errc::invalid_argument, [&] { cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), -1, ok, 2, o); },
                  out, "negative n");
  expect_rejected(Errc::invalid_argument, [&] { cpu::segmented_reduce(ReduceOp::sum, DType::f32, nullptr, 16, ok, 2, o); },
                  out, "null input");
  expect_rejected(Errc::invalid_argument, [&] { cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 16, ok, 2, nullptr); },
                  out, "null output");
  expect_rejected(Errc::invalid_argument,
                  [&] { cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 16, ok, 2, x.data() + 3); }, out,
                  "output overlapping the input");
  std::vector<I64> offs_and_out = {0, 4, 8, 0, 0};
  expect_rejected(Errc::invalid_argument,
                  [&] { cpu::segmented_reduce(ReduceOp::sum, DType::i64, x.data(), 16, offs_and_out.data(), 2, offs_and_out.data() + 2); },
                  out, "output overlapping the offsets");
  expect_rejected(Errc::invalid_argument,
                  [&] { cpu::segmented_arg_reduce(ReduceOp::argmax, DType::f32, x.data(), 16, ok, 2, idx, nullptr); }, out,
                  "null values");
  expect_rejected(Errc::invalid_argument,
                  [&] { cpu::segmented_arg_reduce(ReduceOp::argmax, DType::f32, x.data(), 16, ok, 2, idx, out.data() + 8); },
                  out, "values overlapping indices");
  expect_rejected(Errc::invalid_argument,
                  [&] { cpu::segmented_arg_reduce(ReduceOp::sum, DType::f32, x.data(), 16, ok, 2, idx, vals.data()); }, out,
                  "arg_reduce of sum");
  expect_rejected(Errc::unsupported,
                  [&] { cpu::segmented_reduce(static_cast<ReduceOp>(42), DType::f32, x.data(), 16, ok, 2, o); }, out,
                  "unknown op");
  expect_rejected(Errc::unsupported,
                  [&] { cpu::segmented_reduce(ReduceOp::sum, static_cast<DType>(42), x.data(), 16, ok, 2, o); }, out,
                  "unknown dtype");
  const I64 b_ok[] = {0, 3}, e_ok[] = {5, 16};
  const I64 b_bad[] = {0, 6}, e_bad[] = {5, 4};
  const I64 e_far[] = {5, 17};
  auto be = [&](const I64* b, const I64* e) { return [=] { cpu::segmented_reduce(ReduceOp::sum, DType::f32, x.data(), 16, b, e, 2, o); }; };
  expect_rejected(Errc::invalid_argument, be(b_bad, e_bad), out, "begin > end");
  expect_rejected(Errc::invalid_argument, be(b_ok, e_far), out, "end > n");
  expect_rejected(Errc::invalid_argument, be(nullptr, e_ok), out, "null begin");
  expect_rejected(Errc::invalid_argument, be(b_ok, nullptr), out, "null end");
}

// The test's own teeth: a corrupted result must be caught by check_segment.
TEST(CpuSegmentedReduce, CheckerCatchesWrongResults) {
  const float x[] = {1.0f, 2.0f, 4.0f};
  const float wrong = 7.5f, right = 7.0f;
  EXPECT_TRUE((check_segment<ReduceOp::sum, float>(x, 3, reinterpret_cast<const unsigned char*>(&right), nullptr)));
  EXPECT_FALSE((check_segment<ReduceOp::sum, float>(x, 3, reinterpret_cast<const unsigned char*>(&wrong), nullptr)));
  const I64 index = 1;
  EXPECT_FALSE((check_segment<ReduceOp::argmax, float>(x, 3, reinterpret_cast<const unsigned char*>(&index), nullptr)));
}

// ---- the CUDA kernels, emulated on the host ------------------------------------------------------

#if FOLDKIT_SEG_EMULATED

TEST(CudaSegmentedEmulated, EveryOpAndDtype) { every_op_and_dtype(Backend::emulated_cuda, 1, 12000); }

// Segments spanning many tiles, tiny ones, runs of empties; blocks in random orders; the same
// workspace through every call (it must come back zeroed).
TEST(CudaSegmentedEmulated, SpanningSegmentsAnyBlockOrder) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  std::vector<unsigned char> ws;
  for (int k = 0; k < 8; ++k) {
    const Segs g = random_offsets(rng, rng.uniform(1000, 70000), k);
    run_and_check<ReduceOp::sum, std::int32_t>(Backend::emulated_cuda, g, make_data<ReduceOp::sum, std::int32_t>(rng, g.n),
                                               false, &ws, rng, false);
    run_and_check<ReduceOp::sum, float>(Backend::emulated_cuda, g, make_data<ReduceOp::sum, float>(rng, g.n), false, &ws,
                                        rng, false);
    run_and_check<ReduceOp::argmax, half>(Backend::emulated_cuda, g, make_data<ReduceOp::argmax, half>(rng, g.n, 0.0005),
                                          true, &ws, rng, false);
    run_and_check<ReduceOp::mean, double>(Backend::emulated_cuda, g, make_data<ReduceOp::mean, double>(rng, g.n), false,
                                          &ws, rng, false);
  }
  for (int k = 0; k < 3; ++k) {
    const I64 n = rng.uniform(1, 60000);
    const Segs g = random_begin_end(rng, n, rng.uniform(1, 400), rng.uniform(1, n));
    run_and_check<ReduceOp::max, float>(Backend::emulated_cuda, g, make_data<ReduceOp::max, float>(rng, n, 0.0005), false,
                                        &ws, rng, false);
    run_and_check<ReduceOp::sum, std::uint64_t>(Backend::emulated_cuda, g, make_data<ReduceOp::sum, std::uint64_t>(rng, n),
                                                false, &ws, rng, false);
  }
}

// A scan on the same cached workspace leaves its tile states flagged with its epoch + 1 (1 after
// a zeroed start: the slots' own "published" flag) from byte 256 on, and its epoch in bytes 0-7;
// it never writes the header's bytes 8-255 (scan_layout.hpp), which every segmented call leaves
// zero. A segmented call on such a workspace gives the bytes it gives on a clean one, and leaves
// the scan's epoch as it was. (Before the fix: stale words read as published partials, and the
// flag and ticket sat on the scan's epoch.)
TEST(CudaSegmentedEmulated, WorkspaceLeftByAScan) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (int k = 0; k < 4; ++k) {
    const Segs g = random_offsets(rng, rng.uniform(20000, 70000), k % 2 == 0 ? 2 : 4);
    const Data<float> d = make_data<ReduceOp::sum, float>(rng, g.n);
    const I64 S = g.count();
    std::vector<unsigned char> clean_ws, dirty_ws(8 << 20);
    // From byte 256 of the workspace as run_call places it (its base aligned up to 16 bytes).
    const std::size_t base = (16 - reinterpret_cast<std::uintptr_t>(dirty_ws.data()) % 16) % 16;
    for (std::size_t w = base + 256; w + 8 <= dirty_ws.size(); w += 8) {
      const std::uint64_t word = (std::uint64_t{1} << 32) | (rng.next() & 0xffffffffu);
      std::memcpy(dirty_ws.data() + w, &word, 8);
    }
    const std::uint64_t epoch_word = std::uint64_t{7} << 32;  // a scan's ticket_and_epoch
    std::memcpy(dirty_ws.data(), &epoch_word, 8);
    std::vector<float> want(static_cast<std::size_t>(S)), got(static_cast<std::size_t>(S));
    std::int32_t status = -1;
    cuda::seg::emu::run_call<ReduceOp::sum, float>(d.data(), g.n, true, g.offsets.data(), nullptr, nullptr, S,
                                                   want.data(), nullptr, &status, clean_ws, rng.next() | 1, 3);
    ASSERT_EQ(status, 0);
    status = -1;
    cuda::seg::emu::run_call<ReduceOp::sum, float>(d.data(), g.n, true, g.offsets.data(), nullptr, nullptr, S,
                                                   got.data(), nullptr, &status, dirty_ws, rng.next() | 1, 3);
    EXPECT_EQ(status, 0) << g.what;
    EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0) << g.what;
    std::uint64_t epoch_after = 0;
    std::memcpy(&epoch_after, dirty_ws.data(), 8);
    EXPECT_EQ(epoch_after, epoch_word) << "the scan's epoch was changed";
    // The call's slots and splits come back zero, the scan's leftovers among them too (the
    // validation kernel zeroes every slot; the readers and the blocks clear what they used).
    const I64 tiles = (g.n + S + cuda::tuning::seg_tile_items(sizeof(float)) - 1) / cuda::tuning::seg_tile_items(sizeof(float));
    const cuda::seg::Layout l = cuda::seg::layout(tiles, S, true, 0);
    const auto from = dirty_ws.begin() + static_cast<std::ptrdiff_t>(base + l.slots);
    const auto dirty = std::find_if(from, dirty_ws.begin() + static_cast<std::ptrdiff_t>(base + l.bytes),
                                    [](unsigned char c) { return c != 0; });
    EXPECT_TRUE(dirty == dirty_ws.begin() + static_cast<std::ptrdiff_t>(base + l.bytes))
        << "byte " << (dirty - from) << " of the slots and splits left nonzero, " << g.what;
  }
}

// The group path (segmented_group_kernel.cuh): every op but argmin/argmax x every dtype on random
// layouts (segments over seg_group_long_items() go to the chunk kernel: the budgets reach
// several chunks a segment), misaligned inputs, grids of 1-5 blocks in random orders; the
// workspace comes back zeroed after every call.
TEST(CudaSegmentedEmulated, GroupPathEveryOpAndDtype) { every_op_and_dtype(Backend::emulated_cuda_group, 2, 25000); }

// The group path's fused kernel (segmented_group_fused_kernel: chunks and steps from one counter
// of work units; foldkit-seg-group-probe's rows, not the library's yet), the same way.
TEST(CudaSegmentedEmulated, GroupPathFusedKernelEveryOpAndDtype) { every_op_and_dtype(Backend::emulated_cuda_fused, 2, 25000); }

// The group path's bits: the same input and offsets give the same bits on every call, whatever
// the grid and the blocks' order (the long segments' list order varies with them).
TEST(CudaSegmentedEmulated, GroupPathSameBitsAnyGrid) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  std::vector<unsigned char> ws;
  for (int k = 0; k < 4; ++k) {
    const Segs g = random_offsets(rng, rng.uniform(20000, 60000), k % 2 == 0 ? 1 : 3);
    const Data<float> d = make_data<ReduceOp::sum, float>(rng, g.n);
    const I64 S = g.count();
    std::vector<float> first(static_cast<std::size_t>(S)), again(static_cast<std::size_t>(S));
    std::int32_t status = -1;
    cuda::seg::emu::run_call<ReduceOp::sum, float>(d.data(), g.n, true, g.offsets.data(), nullptr, nullptr, S,
                                                   first.data(), nullptr, &status, ws, rng.next() | 1, 3, 2, 1);
    ASSERT_EQ(status, 0);
    for (int r = 0; r < 3; ++r) {
      cuda::seg::emu::run_call<ReduceOp::sum, float>(d.data(), g.n, true, g.offsets.data(), nullptr, nullptr, S,
                                                     again.data(), nullptr, &status, ws, rng.next() | 1,
                                                     static_cast<int>(rng.uniform(1, 4)), 2, static_cast<int>(rng.uniform(2, 7)));
      EXPECT_EQ(status, 0);
      EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)), 0) << g.what;
    }
  }
}

// The group path's prepare kernel checks offsets in tiles of kSegPrepareSegments, an offset's
// successor from its neighbour in the tile (the tile's last one: the next tile's first, loaded
// apart): long segments (listed in chunks) and a decrease placed on the offsets at and around
// every tile boundary, the grid striding over several tiles a block.
TEST(CudaSegmentedEmulated, GroupPathTileBoundaries) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  std::vector<unsigned char> ws;
  const I64 tile = cuda::tuning::kSegPrepareSegments;
  const I64 S = 5 * tile + 3;  // six tiles of offsets
  for (const I64 shift : {-1, 0, 1}) {  // the long segments: the ones starting at t * tile + shift
    std::vector<I64> lens(static_cast<std::size_t>(S));
    for (I64 s = 0; s < S; ++s) {
      const bool at_boundary = (s - shift) % tile == 0 && s - shift > 0;
      lens[static_cast<std::size_t>(s)] = at_boundary ? rng.uniform(5000, 40000) : rng.uniform(0, 16);
    }
    const Segs g = from_lengths(lens, rng.uniform(0, 3), rng.uniform(0, 3), "tile boundaries shift " + std::to_string(shift));
    run_and_check<ReduceOp::sum, float>(Backend::emulated_cuda_group, g, make_data<ReduceOp::sum, float>(rng, g.n), false,
                                        &ws, rng, false);
    // The same offsets, one of them a decrease of one at a boundary: status 1, nothing written.
    Segs bad = g;
    const I64 at = tile * rng.uniform(1, 5) + shift;
    bad.offsets[static_cast<std::size_t>(at)] = bad.offsets[static_cast<std::size_t>(at) + 1] + 1;
    if (bad.offsets[static_cast<std::size_t>(at)] > bad.n) bad.offsets[static_cast<std::size_t>(at)] = bad.n + 1;
    const std::vector<float> x(static_cast<std::size_t>(bad.n), 1.0f);
    std::vector<float> out(static_cast<std::size_t>(S), -123.0f);
    std::int32_t status = 5;
    cuda::seg::emu::run_call<ReduceOp::sum, float>(x.data(), bad.n, true, bad.offsets.data(), nullptr, nullptr, S,
                                                   out.data(), nullptr, &status, ws, rng.next() | 1, 3,
                                                   cuda::tuning::kSegTilesPerBlock, static_cast<int>(rng.uniform(1, 5)));
    EXPECT_EQ(status, 1) << "offset " << at;
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == -123.0f; })) << "written";
    EXPECT_TRUE(std::all_of(ws.begin(), ws.end(), [](unsigned char c) { return c == 0; })) << "workspace left dirty";
  }
}

// Invalid offsets: status 1, nothing written, and the next call (valid) works on the same workspace.
TEST(CudaSegmentedEmulated, InvalidOffsetsWriteNothing) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  std::vector<unsigned char> ws;
  const std::vector<float> x(50000, 1.0f);
  for (int k = 0; k < 8; ++k) {
    Segs g = random_offsets(rng, 40000, 0);
    const I64 S = g.count();
    const I64 at = rng.uniform(0, S);
    switch (k % 4) {
      case 0: g.offsets[static_cast<std::size_t>(at)] = g.n + 1; break;
      case 1: g.offsets[static_cast<std::size_t>(at)] = -3; break;
      case 2:
        if (S > 0) std::swap(g.offsets[0], g.offsets[static_cast<std::size_t>(S)]);
        else g.offsets[0] = -1;
        break;
      default: break_by_one(g, rng); break;  // a decrease by exactly one, the rule's edge
    }
    for (const int group_blocks : {0, 3}) {  // the merge path, the group path
      std::vector<float> out(static_cast<std::size_t>(S), -123.0f);
      std::int32_t status = 5;
      cuda::seg::emu::run_call<ReduceOp::sum, float>(x.data(), g.n, true, g.offsets.data(), nullptr, nullptr, S,
                                                     out.data(), nullptr, &status, ws, rng.next() | 1, 3,
                                                     cuda::tuning::kSegTilesPerBlock, group_blocks);
      EXPECT_EQ(status, 1) << "group blocks " << group_blocks;
      EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == -123.0f; })) << "written";
      EXPECT_TRUE(std::all_of(ws.begin(), ws.end(), [](unsigned char c) { return c == 0; })) << "workspace left dirty";
      const Segs ok = random_offsets(rng, 40000, 1);
      run_and_check<ReduceOp::sum, float>(group_blocks > 0 ? Backend::emulated_cuda_group : Backend::emulated_cuda, ok,
                                          make_data<ReduceOp::sum, float>(rng, ok.n), false, &ws, rng, false);
    }
  }
  // Offsets whose even blocks (the validation kernel's: kSegPrepareSegments offsets) climb
  // 0 -> n, each odd one dropping back to 0 inside (a bad pair): every even block, valid on its
  // own, owns every tile boundary. The validation kernel's budget stops all but the first
  // (status 1, nothing written, the budget word left zero) instead of writing (blocks x tiles)
  // splits. (The bound itself shows in time only.)
  {
    const I64 per = cuda::tuning::kSegPrepareSegments;
    const I64 n = 8188 * 300, S = per * 5;
    std::vector<I64> off(static_cast<std::size_t>(S + 1), 0);
    for (I64 s = 0; s <= S; ++s) {
      const I64 r = s % per;
      if ((s / per) % 2 == 0) off[static_cast<std::size_t>(s)] = r * n / (per - 1);
      else off[static_cast<std::size_t>(s)] = r == 0 ? n : 0;
    }
    const std::vector<float> big(static_cast<std::size_t>(n), 1.0f);
    std::vector<float> out(static_cast<std::size_t>(S), -123.0f);
    std::int32_t status = 5;
    cuda::seg::emu::run_call<ReduceOp::sum, float>(big.data(), n, true, off.data(), nullptr, nullptr, S, out.data(),
                                                   nullptr, &status, ws, rng.next() | 1);
    EXPECT_EQ(status, 1);
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == -123.0f; })) << "written";
    EXPECT_TRUE(std::all_of(ws.begin(), ws.end(), [](unsigned char c) { return c == 0; })) << "workspace left dirty";
  }
  // Begin/end: a bad pair.
  std::vector<I64> b = {0, 10, 5}, e = {3, 9, 7};
  std::vector<float> out(3, -123.0f);
  std::int32_t status = 5;
  cuda::seg::emu::run_call<ReduceOp::sum, float>(x.data(), 100, false, nullptr, b.data(), e.data(), 3, out.data(),
                                                 nullptr, &status, ws, 3);
  EXPECT_EQ(status, 1);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == -123.0f; })) << "written";
}

#endif  // FOLDKIT_SEG_EMULATED

}  // namespace
}  // namespace foldkit::test
