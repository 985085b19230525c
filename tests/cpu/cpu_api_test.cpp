// CPU backend: argument errors, the type-erased entry point's enum checks, determinism across
// thread counts, reduce_custom, and the backend's threads (src/cpu/parallel.hpp: forced thread
// counts with late and descheduled workers, concurrent callers, OpenMP regions, nesting,
// exceptions, fork, load).
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "common/reduce_checks.hpp"
#include "cpu/parallel.hpp"
#include "support/forced_threads.hpp"
#include "foldkit/reduce.hpp"
#include "foldkit/scan.hpp"
#include "support/cpu_backend.hpp"
#include "support/custom_functors.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

// A null pointer the optimiser cannot see through (a literal nullptr makes GCC warn about the
// library's loop that the validation never lets run).
template <class T> const T* opaque_null() {
  static const T* volatile p = nullptr;
  return p;
}

TEST(CpuErrors, NullInputWithElementsIsInvalidArgument) {
  const float* null = opaque_null<float>();
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::sum(null, 1); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::argmax(null, 1000); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::min(null, 5); }));
  double out = 0;
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, DType::f64, nullptr, 3, &out); }));
}

TEST(CpuErrors, NullInputWithZeroElementsIsAnEmptyInput) {  // documented: null is an error only with n > 0
  const std::int32_t* null = opaque_null<std::int32_t>();
  EXPECT_EQ(cpu::sum(null, 0), 0);
  EXPECT_EQ(cpu::prod(null, 0), 1);
  EXPECT_TRUE(throws_errc(Errc::empty_input, [&] { cpu::max(null, 0); }));
}

// The validation rule, one for every entry point (README, "Errors"): with n = 0 the n-element
// arrays (input, a scan's output) are never accessed, so any pointer will do (null: what NumPy
// and PyTorch hand out for empty arrays); every other argument is checked as for any n.
TEST(CpuErrors, ZeroLengthRuleIsTheSameForEveryEntryPoint) {
  const float* null_in = opaque_null<float>();
  float* null_out = const_cast<float*>(opaque_null<float>());
  const std::int64_t zero_offset[1] = {0};
  // Accepted with n = 0, null arrays.
  EXPECT_EQ(cpu::sum(null_in, 0), 0.0f);
  float sum = -1;  // an f32 sum is a float
  cpu::reduce(ReduceOp::sum, DType::f32, nullptr, 0, &sum);
  EXPECT_EQ(sum, 0.0f);
  EXPECT_NO_THROW(cpu::inclusive_scan<ReduceOp::sum>(null_in, 0, null_out));
  EXPECT_NO_THROW(cpu::exclusive_scan<ReduceOp::max>(null_in, 0, null_out, 1.0f));
  EXPECT_NO_THROW(cpu::inclusive_scan_blocked<ReduceOp::sum>(null_in, 0, null_out, 4));
  EXPECT_NO_THROW(cpu::exclusive_scan_blocked<ReduceOp::sum>(null_in, 0, null_out, 4, 0.0f));
  EXPECT_NO_THROW(cpu::inclusive_scan_segmented<ReduceOp::sum>(null_in, 0, null_out, zero_offset, 0));
  EXPECT_NO_THROW(cpu::exclusive_scan_segmented<ReduceOp::sum>(null_in, 0, null_out, zero_offset, 0, 0.0f));
  EXPECT_NO_THROW(cpu::inclusive_scan(ReduceOp::sum, DType::f32, nullptr, 0, nullptr));
  // Checked with n = 0 as with any n: the reduction's result, block_length, offsets, num_segments.
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::reduce(ReduceOp::sum, DType::f32, nullptr, 0, nullptr); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::inclusive_scan_blocked<ReduceOp::sum>(null_in, 0, null_out, 0); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::exclusive_scan_blocked<ReduceOp::sum>(null_in, 0, null_out, -3, 0.0f); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::inclusive_scan_segmented<ReduceOp::sum>(null_in, 0, null_out, opaque_null<std::int64_t>(), 0);
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::exclusive_scan_segmented<ReduceOp::sum>(null_in, 0, null_out, zero_offset, -1, 0.0f);
  }));
  const std::int64_t bad_offset[1] = {5};
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::inclusive_scan_segmented<ReduceOp::sum>(null_in, 0, null_out, bad_offset, 0); }));
}

TEST(CpuErrors, NegativeLengthIsInvalidArgument) {
  const std::vector<float> data(8, 1.0f);
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::sum(data.data(), -1); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::argmin(data.data(), -5); }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] { cpu::reduce_custom(data.data(), -1, Plus{}, 0.0f); }));
  float out = 0;
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::reduce(ReduceOp::max, DType::f32, data.data(), -1, &out); }));
}

TEST(CpuErrors, TypeErasedNullOutputIsInvalidArgument) {
  const std::vector<float> data(8, 1.0f);
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [&] { cpu::reduce(ReduceOp::sum, DType::f32, data.data(), 8, nullptr); }));
}

TEST(CpuErrors, TypeErasedInvalidEnumIsUnsupported) {
  const std::vector<float> data(8, 1.0f);
  PoisonedSlot out;
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cpu::reduce(ReduceOp::sum, static_cast<DType>(99), data.data(), 8, out.bytes);
  }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cpu::reduce(ReduceOp::sum, static_cast<DType>(-1), data.data(), 8, out.bytes);
  }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cpu::reduce(static_cast<ReduceOp>(99), DType::f32, data.data(), 8, out.bytes);
  }));
}

// Restores the OpenMP thread count a test changes.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(omp_get_max_threads()) {}
  ~ThreadCountGuard() { omp_set_num_threads(saved_); }
  int saved() const { return saved_; }

 private:
  int saved_;
};

// Documented: chunk length independent of the thread count, so the bits cannot depend on it.
template <class T> void expect_same_bits_for_any_thread_count(Rng& rng) {
  const std::int64_t n = capped({1000003}).front();
  const auto a = make_all_ops_data<T>(n, rng.uniform(0, 3), rng);
  SCOPED_TRACE(a.describe());
  const auto in = CpuBackend::upload(a);
  ThreadCountGuard guard;
  for_each_op([&](auto op) {
    constexpr ReduceOp kOp = decltype(op)::value;
    omp_set_num_threads(1);
    const auto single = reduce_on<kOp, CpuBackend>(in);
    for (int threads : {guard.saved(), 2, 3, 7}) {
      omp_set_num_threads(threads);
      EXPECT_TRUE(bits_equal(reduce_on<kOp, CpuBackend>(in), single)) << op_name(kOp) << " with " << threads << " threads";
    }
  });
}

TEST(CpuDeterminism, SameBitsForAnyThreadCount) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  expect_same_bits_for_any_thread_count<float>(rng);
  expect_same_bits_for_any_thread_count<double>(rng);
  expect_same_bits_for_any_thread_count<half>(rng);
  expect_same_bits_for_any_thread_count<bfloat16>(rng);
  expect_same_bits_for_any_thread_count<std::int64_t>(rng);
}

// Sizes around the CPU chunk length (2^15), where the parallel combine starts.
std::vector<std::int64_t> custom_sizes() { return capped({0, 1, 2, 33, 32767, 32768, 32769, 3 * 32768 + 5, 1000003}); }

TEST(CpuReduceCustom, BitwiseXor) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (std::int64_t n : custom_sizes()) {
    const CounterRng bits = rng.counter();
    std::vector<std::uint32_t> data(static_cast<std::size_t>(n + 3));
    for (auto& v : data) v = static_cast<std::uint32_t>(bits.bits(&v - data.data()));
    const std::int64_t off = rng.uniform(0, 3);
    std::uint32_t want = 0;
    for (std::int64_t i = 0; i < n; ++i) want ^= data[static_cast<std::size_t>(off + i)];
    EXPECT_EQ(cpu::reduce_custom(data.data() + off, n, BitwiseXor{}, 0u), want) << "n=" << n << " offset=" << off;
  }
}

TEST(CpuReduceCustom, MaxAbsWithPlantedExtreme) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (std::int64_t n : custom_sizes()) {
    if (n == 0) {
      EXPECT_EQ(cpu::reduce_custom(opaque_null<float>(), 0, MaxAbs{}, 0.0f), 0.0f);
      continue;
    }
    auto a = make_real_data<float>(n, rng.uniform(0, 3), rng.counter(), -1.0, 1.0);
    a[rng.uniform(0, n - 1)] = -3.5f;  // the largest magnitude, negative
    EXPECT_EQ(cpu::reduce_custom(a.data(), n, MaxAbs{}, 0.0f), 3.5f) << a.describe();
  }
}

TEST(CpuReduceCustom, SixteenByteStruct) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (std::int64_t n : custom_sizes()) {
    const CounterRng bits = rng.counter();
    std::vector<Span> data(static_cast<std::size_t>(n));
    Span want = span_identity();
    for (std::int64_t i = 0; i < n; ++i) {
      data[static_cast<std::size_t>(i)] = span_of(static_cast<std::int32_t>(bits.bits(i)));
      want = CombineSpans{}(want, data[static_cast<std::size_t>(i)]);
    }
    const Span got = cpu::reduce_custom(data.data(), n, CombineSpans{}, span_identity());
    EXPECT_EQ(got.lo, want.lo) << "n=" << n;
    EXPECT_EQ(got.hi, want.hi) << "n=" << n;
    EXPECT_EQ(got.total, want.total) << "n=" << n;
  }
}

// Documented for the CPU backend only: left-to-right order, so F need not be commutative.
TEST(CpuReduceCustom, NonCommutativeOperatorKeepsOrder) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (std::int64_t n : custom_sizes()) {
    const CounterRng bits = rng.counter();
    std::vector<Affine> data(static_cast<std::size_t>(n));
    Affine want{1, 0};
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint64_t r = bits.bits(i);
      data[static_cast<std::size_t>(i)] = Affine{static_cast<std::uint32_t>(r) | 1u, static_cast<std::uint32_t>(r >> 32)};
      want = ThenApply{}(want, data[static_cast<std::size_t>(i)]);
    }
    const Affine got = cpu::reduce_custom(data.data(), n, ThenApply{}, Affine{1, 0});
    EXPECT_EQ(got.a, want.a) << "n=" << n;
    EXPECT_EQ(got.b, want.b) << "n=" << n;
  }
}

TEST(CpuReduceCustom, NullInputWithElementsIsInvalidArgument) {
  EXPECT_TRUE(throws_errc(Errc::invalid_argument,
                          [] { cpu::reduce_custom(opaque_null<std::uint32_t>(), 4, BitwiseXor{}, 0u); }));
}


// ---- the backend's threads (src/cpu/parallel.hpp) ----------------------------------------------
// The pool's thread count adapts to load, so on the test machine a plain call may run on any
// number of threads. These tests force the count (1, 2, 3, 7: more threads than the machine has
// cores, too) and turn on jitter: workers sleep up to 300 us before joining and after some
// claims, as descheduled threads would, so late joins, stolen ranges and waits on unfinished
// items all happen. The bits must never change.

constexpr int kThreadCounts[] = {1, 2, 3, 7};

// Float data whose sums round differently in any other combine order: values in [-1, 1) with a
// few large ones.
TestArray<float> order_sensitive_floats(std::int64_t n, Rng& rng) {
  auto a = make_real_data<float>(n, rng.uniform(0, 3), rng.counter(), -1.0, 1.0);
  for (int k = 0; k < 50; ++k) a[rng.uniform(0, n - 1)] = (k % 2 ? 1.0f : -1.0f) * 4096.0f * static_cast<float>(k + 1);
  return a;
}

// What the tests compare: a few reductions and scans of one input, as bytes.
struct Results {
  float sum = 0;
  ArgResult<float> argmax{};
  double mean = 0;
  std::vector<float> incl, excl, seg;
  bool operator==(const Results& o) const {
    return bits_equal(sum, o.sum) && bits_equal(argmax, o.argmax) && bits_equal(mean, o.mean) &&
           std::memcmp(incl.data(), o.incl.data(), incl.size() * sizeof(float)) == 0 &&
           std::memcmp(excl.data(), o.excl.data(), excl.size() * sizeof(float)) == 0 &&
           std::memcmp(seg.data(), o.seg.data(), seg.size() * sizeof(float)) == 0;
  }
};

Results compute(const TestArray<float>& a, const std::vector<std::int64_t>& offsets) {
  const std::int64_t n = a.n;
  Results r;
  r.sum = cpu::sum(a.data(), n);
  r.argmax = cpu::argmax(a.data(), n);
  r.mean = cpu::mean(a.data(), n);
  r.incl.assign(static_cast<std::size_t>(n), 0.0f);
  r.excl.assign(static_cast<std::size_t>(n), 0.0f);
  r.seg.assign(static_cast<std::size_t>(n), 0.0f);
  cpu::inclusive_scan<ReduceOp::sum>(a.data(), n, r.incl.data());
  cpu::exclusive_scan<ReduceOp::sum>(a.data(), n, r.excl.data(), 0.5f);
  cpu::inclusive_scan_segmented<ReduceOp::sum>(a.data(), n, r.seg.data(), offsets.data(),
                                               static_cast<std::int64_t>(offsets.size()) - 1);
  return r;
}

// The reference every thread-count test compares with: the same calls on the caller alone.
Results compute_on_one_thread(const TestArray<float>& a, const std::vector<std::int64_t>& offsets) {
  ForcedThreads one(1, false);
  return compute(a, offsets);
}

std::vector<std::int64_t> some_offsets(std::int64_t n, Rng& rng) {
  std::vector<std::int64_t> offsets{0};
  while (offsets.back() < n) offsets.push_back(std::min(n, offsets.back() + rng.uniform(1, 200000)));
  return offsets;
}

// 3 * 2^20 + 5 floats: 97 reduction chunks, 193 scan chunks (about 4 rounds of 7 pieces).
std::int64_t thread_test_n() { return capped({3 * (std::int64_t{1} << 20) + 5}).front(); }

TEST(CpuThreads, ForcedThreadCountsGiveTheSameBits) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const auto a = order_sensitive_floats(thread_test_n(), rng);
  const auto offsets = some_offsets(a.n, rng);
  const Results want = compute_on_one_thread(a, offsets);
  for (int rep = 0; rep < 3; ++rep)
    for (int threads : kThreadCounts) {
      ForcedThreads forced(threads, true);
      EXPECT_TRUE(compute(a, offsets) == want) << threads << " threads, repetition " << rep;
    }
  // Other types and ops through the typed entry points, with the most threads.
  for_each_op([&](auto op) {
    constexpr ReduceOp kOp = decltype(op)::value;
    const auto d = make_all_ops_data<double>(thread_test_n(), rng.uniform(0, 3), rng);
    const auto in = CpuBackend::upload(d);
    ForcedThreads one(1, false);
    const auto single = reduce_on<kOp, CpuBackend>(in);
    ForcedThreads seven(7, true);
    EXPECT_TRUE(bits_equal(reduce_on<kOp, CpuBackend>(in), single)) << op_name(kOp);
  });
}

TEST(CpuThreads, ConcurrentCallersGetTheSameBits) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const auto a = order_sensitive_floats(thread_test_n(), rng);
  const auto offsets = some_offsets(a.n, rng);
  const Results want = compute_on_one_thread(a, offsets);
  // One call holds the pool at a time; the others run alone meanwhile. Adaptive and forced.
  for (int threads : {0, 3}) {
    ForcedThreads forced(threads, threads != 0);
    std::atomic<int> mismatches{0};
    std::vector<std::thread> callers;
    for (int t = 0; t < 6; ++t)
      callers.emplace_back([&] {
        for (int k = 0; k < 4; ++k)
          if (!(compute(a, offsets) == want)) ++mismatches;
      });
    for (auto& c : callers) c.join();
    EXPECT_EQ(mismatches.load(), 0) << "forced threads: " << threads;
  }
}

TEST(CpuThreads, CallsInsideAnOpenMPRegionGetTheSameBits) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const auto a = order_sensitive_floats(thread_test_n(), rng);
  const auto offsets = some_offsets(a.n, rng);
  const Results want = compute_on_one_thread(a, offsets);
  for (int threads : {0, 3}) {  // adaptive: one thread inside a region; forced: the pool too
    ForcedThreads forced(threads, threads != 0);
    std::atomic<int> mismatches{0};
#pragma omp parallel num_threads(4)
    {
      if (!(compute(a, offsets) == want)) ++mismatches;
    }
    EXPECT_EQ(mismatches.load(), 0) << "forced threads: " << threads;
  }
}

TEST(CpuThreads, NestedCallsFromChunksGetTheSameBits) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const auto a = order_sensitive_floats(std::int64_t{1} << 20, rng);
  ForcedThreads forced(4, true);
  const float want = cpu::sum(a.data(), a.n);
  struct Ctx {
    const TestArray<float>* a;
    float got[24];
  } ctx{&a, {}};
  // Every chunk (some run by pool workers, some by the caller) makes a parallel call of its own.
  cpu::detail::parallel_for_chunks(
      24, [](void* p, std::int64_t c) { auto& x = *static_cast<Ctx*>(p); x.got[c] = cpu::sum(x.a->data(), x.a->n); },
      &ctx);
  for (int c = 0; c < 24; ++c) EXPECT_TRUE(bits_equal(ctx.got[c], want)) << "chunk " << c;
}

// parallel_for_chunks throws the exception of the lowest failing chunk, as the serial loop
// would, and runs every chunk below it. Chunks take ~10 us, so that the workers take part.
TEST(CpuThreads, TheLowestFailingChunksExceptionPropagates) {
  struct Ctx {
    std::atomic<bool> ran[300];
    std::thread::id who[300];
  };
  for (int threads : kThreadCounts) {
    ForcedThreads forced(threads, true);
    int most_threads_seen = 0;
    for (int rep = 0; rep < 10; ++rep) {
      Ctx ctx{};
      std::string what;
      try {
        cpu::detail::parallel_for_chunks(
            300,
            [](void* p, std::int64_t c) {
              auto& x = *static_cast<Ctx*>(p);
              x.who[c] = std::this_thread::get_id();
              const auto t0 = std::chrono::steady_clock::now();
              while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(10)) {
              }
              x.ran[c].store(true);
              if (c == 77 || c == 150 || c == 299) throw std::runtime_error(std::to_string(c));
            },
            &ctx);
      } catch (const std::runtime_error& e) {
        what = e.what();
      }
      EXPECT_EQ(what, "77") << threads << " threads";
      std::vector<std::thread::id> ids;
      for (int c = 0; c < 300; ++c) {
        if (c <= 77) {
          EXPECT_TRUE(ctx.ran[c].load()) << "chunk " << c << ", " << threads << " threads";
        }
        if (ctx.ran[c].load() && std::find(ids.begin(), ids.end(), ctx.who[c]) == ids.end()) ids.push_back(ctx.who[c]);
      }
      most_threads_seen = std::max(most_threads_seen, static_cast<int>(ids.size()));
    }
    EXPECT_EQ(most_threads_seen > 1, threads > 1) << threads << " threads: the workers never took part";
  }
}

TEST(CpuThreads, ThePoolDoesNotGrowWithCalls) {
  Rng rng(test_seed());
  const auto a = order_sensitive_floats(std::int64_t{1} << 21, rng);
  {
    ForcedThreads seven(7, false);
    (void)cpu::sum(a.data(), a.n);
  }
  const int workers = cpu::detail::pool_workers_for_testing();
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_GE(workers, 6);
  EXPECT_LE(workers, std::max(6, std::max(cores, omp_get_max_threads()) - 1));
  // Forced counts only: the default count follows the machine's load, and under a parallel
  // ctest on 16 cores it rose from 7 to 16 threads between calls (the pool then rightly grew).
  for (int threads : {2, 7, 3}) {
    ForcedThreads forced(threads, false);
    for (int k = 0; k < 50; ++k) (void)cpu::sum(a.data(), a.n);
  }
  EXPECT_EQ(cpu::detail::pool_workers_for_testing(), workers);
}

#if defined(__linux__)
// A forked child has none of the parent's pool threads: it must start its own, not wait for them.
TEST(CpuThreads, AForkedChildGetsTheSameBits) {
  Rng rng(test_seed());
  const auto a = order_sensitive_floats(std::int64_t{1} << 21, rng);
  ForcedThreads forced(3, false);
  const float want = cpu::sum(a.data(), a.n);  // the parent's pool is up
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);  // a hang fails the test instead of stalling it
    const float got = cpu::sum(a.data(), a.n);
    _exit(std::memcmp(&got, &want, sizeof got) == 0 && cpu::detail::pool_workers_for_testing() == 2 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

// The adaptive count: with two busy threads per core beside it, a call runs on one thread.
TEST(CpuThreads, ABusyMachineGetsOneThread) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (int k = 0; k < 2 * cores; ++k)
    load.emplace_back([&] {
      volatile double x = 1;
      while (!stop.load(std::memory_order_relaxed)) x = x * 1.0000001 + 1e-9;
    });
  int threads = 0;
  for (int k = 0; k < 4; ++k) {  // readings are kept 2 ms; the smaller of the last two counts
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    threads = cpu::detail::pick_threads(1000);
  }
  stop.store(true);
  for (auto& t : load) t.join();
  EXPECT_EQ(threads, 1);
}
#endif

}  // namespace
}  // namespace foldkit::test
