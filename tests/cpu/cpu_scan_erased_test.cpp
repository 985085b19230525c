// The type-erased CPU scans of every form (cpu::inclusive_scan / exclusive_scan,
// *_scan_blocked, *_scan_segmented with a run-time op and dtype) give the typed forms' bits for
// every scan op x dtype; the exclusive forms' Scalar init follows foldkit/scalar.hpp's exactness
// rule (a rejected init writes nothing); and their own errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "foldkit/scalar.hpp"
#include "foldkit/scan.hpp"
#include "support/random_arrays.hpp"
#include "support/result_checks.hpp"
#include "support/test_config.hpp"

namespace foldkit::test {
namespace {

// ---- Scalar on its own --------------------------------------------------------------------------

// A pointer (the former `const void* init`), nullptr or bool is not a Scalar.
static_assert(!std::is_convertible_v<const std::int64_t*, Scalar>);
static_assert(!std::is_convertible_v<std::int32_t*, Scalar>);
static_assert(!std::is_convertible_v<const void*, Scalar>);
static_assert(!std::is_convertible_v<std::nullptr_t, Scalar>);
static_assert(!std::is_convertible_v<bool, Scalar>);
static_assert(std::is_convertible_v<half, Scalar> && std::is_convertible_v<bfloat16, Scalar>);

template <class R>
bool converts(const Scalar& s) {
  try {
    (void)s.to_exact<R>();
    return true;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument) << e.what();
    return false;
  }
}

TEST(Scalar, DtypeOfEachConstructor) {
  EXPECT_EQ(Scalar(std::int32_t{1}).dtype(), DType::i32);
  EXPECT_EQ(Scalar(std::uint32_t{1}).dtype(), DType::u32);
  EXPECT_EQ(Scalar(std::int64_t{1}).dtype(), DType::i64);
  EXPECT_EQ(Scalar(std::uint64_t{1}).dtype(), DType::u64);
  EXPECT_EQ(Scalar(1.0f).dtype(), DType::f32);
  EXPECT_EQ(Scalar(1.0).dtype(), DType::f64);
  EXPECT_EQ(Scalar(half(1.0f)).dtype(), DType::f16);
  EXPECT_EQ(Scalar(bfloat16(1.0f)).dtype(), DType::bf16);
  EXPECT_EQ(Scalar(1).dtype(), DType::i32);
  EXPECT_EQ(Scalar(1LL).dtype(), DType::i64);   // long long, distinct from int64_t on LP64
  EXPECT_EQ(Scalar(1ULL).dtype(), DType::u64);
  EXPECT_EQ(Scalar(short{1}).dtype(), DType::i32);
  EXPECT_EQ(Scalar(static_cast<unsigned short>(1)).dtype(), DType::u32);
  EXPECT_EQ(Scalar(-7LL).to_exact<std::int64_t>(), -7);
}

TEST(Scalar, ExactConversionRule) {
  // integer -> integer: range.
  EXPECT_EQ(Scalar(std::int32_t{-5}).to_exact<std::int64_t>(), -5);
  EXPECT_EQ(Scalar(std::int64_t{2147483647}).to_exact<std::int32_t>(), 2147483647);
  EXPECT_EQ(Scalar(std::int64_t{-2147483647 - 1}).to_exact<std::int32_t>(), -2147483647 - 1);
  EXPECT_FALSE(converts<std::int32_t>(Scalar(std::int64_t{2147483648})));
  EXPECT_FALSE(converts<std::int32_t>(Scalar(std::int64_t{-2147483649})));
  EXPECT_FALSE(converts<std::uint64_t>(Scalar(-1)));
  EXPECT_FALSE(converts<std::uint32_t>(Scalar(std::uint64_t{1} << 32)));
  EXPECT_FALSE(converts<std::int64_t>(Scalar(std::uint64_t{1} << 63)));
  EXPECT_EQ(Scalar(std::uint64_t{1} << 63).to_exact<std::uint64_t>(), std::uint64_t{1} << 63);
  EXPECT_EQ(Scalar(std::uint32_t{4000000000u}).to_exact<std::int64_t>(), 4000000000);
  // integer -> float: representable.
  EXPECT_EQ(Scalar(16777216).to_exact<float>(), 16777216.0f);
  EXPECT_FALSE(converts<float>(Scalar(16777217)));
  EXPECT_EQ(Scalar(16777217).to_exact<double>(), 16777217.0);
  EXPECT_FALSE(converts<double>(Scalar((std::int64_t{1} << 53) + 1)));
  EXPECT_FALSE(converts<double>(Scalar(std::numeric_limits<std::int64_t>::max())));
  EXPECT_FALSE(converts<double>(Scalar(std::numeric_limits<std::uint64_t>::max())));
  EXPECT_EQ(Scalar(std::numeric_limits<std::int64_t>::min()).to_exact<double>(), -0x1p63);
  EXPECT_EQ(Scalar(2048).to_exact<half>().bits, half(2048.0f).bits);
  EXPECT_FALSE(converts<half>(Scalar(2049)));
  EXPECT_FALSE(converts<half>(Scalar(65536)));  // beyond half's range, not rounded to inf
  // float -> integer: finite, whole, in range.
  EXPECT_EQ(Scalar(3.0).to_exact<std::int64_t>(), 3);
  EXPECT_EQ(Scalar(-0x1p63).to_exact<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(converts<std::int64_t>(Scalar(0x1p63)));
  EXPECT_FALSE(converts<std::int32_t>(Scalar(2.5)));
  EXPECT_FALSE(converts<std::uint32_t>(Scalar(-1.0f)));
  EXPECT_FALSE(converts<std::int64_t>(Scalar(std::nan(""))));
  EXPECT_FALSE(converts<std::int64_t>(Scalar(std::numeric_limits<double>::infinity())));
  // float -> float: round trip; NaN and infinities convert.
  EXPECT_FALSE(converts<float>(Scalar(0.1)));
  EXPECT_EQ(Scalar(0.5).to_exact<float>(), 0.5f);
  EXPECT_FALSE(converts<float>(Scalar(1e300)));
  EXPECT_EQ(Scalar(0.1f).to_exact<double>(), static_cast<double>(0.1f));
  EXPECT_FALSE(converts<half>(Scalar(0.1f)));
  EXPECT_EQ(Scalar(0.5).to_exact<half>().bits, half(0.5f).bits);
  EXPECT_EQ(Scalar(65504.0).to_exact<half>().bits, half(65504.0f).bits);
  EXPECT_FALSE(converts<half>(Scalar(65520.0)));
  EXPECT_FALSE(converts<bfloat16>(Scalar(1.0 + 0x1p-8)));
  EXPECT_EQ(Scalar(half(0.1f)).to_exact<half>().bits, half(0.1f).bits);
  EXPECT_EQ(Scalar(bfloat16(0.1f)).to_exact<bfloat16>().bits, bfloat16(0.1f).bits);
  EXPECT_TRUE(std::isnan(Scalar(std::nan("")).to_exact<float>()));
  EXPECT_TRUE(std::isnan(static_cast<float>(Scalar(std::nan("")).to_exact<half>())));
  EXPECT_TRUE(std::isnan(static_cast<float>(Scalar(std::nanf("")).to_exact<bfloat16>())));
  EXPECT_EQ(Scalar(-std::numeric_limits<double>::infinity()).to_exact<float>(), -std::numeric_limits<float>::infinity());
  // The message names the value and both dtypes.
  try {
    (void)Scalar(0.1).to_exact<float>("ctx");
    ADD_FAILURE() << "double 0.1 converted to f32";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ctx"), std::string::npos) << what;
    EXPECT_NE(what.find("0.1"), std::string::npos) << what;
    EXPECT_NE(what.find("f64"), std::string::npos) << what;
    EXPECT_NE(what.find("f32"), std::string::npos) << what;
  }
}

// ---- the erased scans against the typed ones ----------------------------------------------------

enum class Form { whole, blocked, segmented };
const char* form_name(Form f) { return f == Form::whole ? "whole" : f == Form::blocked ? "blocked" : "segmented"; }

// The same poison byte pattern for any R: 0xEE for the erased output, 0x11 for the typed one, so
// a call that writes nothing on either side cannot match.
template <class R>
void poison(std::vector<R>& v, unsigned char byte) {
  std::memset(static_cast<void*>(v.data()), byte, v.size() * sizeof(R));
}

// Random segment offsets for n elements: about `count` segments, some of them empty.
std::vector<std::int64_t> random_offsets(std::int64_t n, Rng& rng) {
  std::vector<std::int64_t> offsets{0};
  while (offsets.back() < n) {
    const std::int64_t r = rng.uniform(0, 9);
    const std::int64_t len = r == 0 ? 0 : r < 8 ? rng.uniform(1, 3000) : rng.uniform(3000, 80000);
    offsets.push_back(offsets.back() + len < n ? offsets.back() + len : n);
  }
  offsets.push_back(n);  // an empty last segment too
  return offsets;
}

template <ReduceOp Op, class T>
void expect_forms_match(const TestArray<T>& in, std::int64_t block_length, const std::vector<std::int64_t>& offsets) {
  using R = scan_result_t<Op, T>;
  static_assert(dtype_v<R> == scan_result_dtype(Op, dtype_v<T>));
  const std::int64_t n = in.n;
  const std::int64_t segments = static_cast<std::int64_t>(offsets.size()) - 1;
  const R init = from_double<R>(3.0);
  // The exclusive forms take the init as R, as T and as a double (each converts exactly).
  const Scalar inits[] = {Scalar(init), Scalar(from_double<T>(3.0)), Scalar(3.0)};
  std::vector<R> typed(static_cast<std::size_t>(n)), erased(static_cast<std::size_t>(n));
  for (const Form form : {Form::whole, Form::blocked, Form::segmented}) {
    for (const bool inclusive : {true, false}) {
      for (const Scalar& scalar : inits) {
        if (inclusive && &scalar != &inits[0]) continue;
        poison(typed, 0x11);
        poison(erased, 0xEE);
        const T* d = in.data();
        switch (form) {
          case Form::whole:
            if (inclusive) {
              cpu::inclusive_scan<Op>(d, n, typed.data());
              cpu::inclusive_scan(Op, dtype_v<T>, d, n, erased.data());
            } else {
              cpu::exclusive_scan<Op>(d, n, typed.data(), init);
              cpu::exclusive_scan(Op, dtype_v<T>, d, n, erased.data(), scalar);
            }
            break;
          case Form::blocked:
            if (inclusive) {
              cpu::inclusive_scan_blocked<Op>(d, n, typed.data(), block_length);
              cpu::inclusive_scan_blocked(Op, dtype_v<T>, d, n, erased.data(), block_length);
            } else {
              cpu::exclusive_scan_blocked<Op>(d, n, typed.data(), block_length, init);
              cpu::exclusive_scan_blocked(Op, dtype_v<T>, d, n, erased.data(), block_length, scalar);
            }
            break;
          case Form::segmented:
            if (inclusive) {
              cpu::inclusive_scan_segmented<Op>(d, n, typed.data(), offsets.data(), segments);
              cpu::inclusive_scan_segmented(Op, dtype_v<T>, d, n, erased.data(), offsets.data(), segments);
            } else {
              cpu::exclusive_scan_segmented<Op>(d, n, typed.data(), offsets.data(), segments, init);
              cpu::exclusive_scan_segmented(Op, dtype_v<T>, d, n, erased.data(), offsets.data(), segments, scalar);
            }
            break;
        }
        EXPECT_EQ(0, std::memcmp(typed.data(), erased.data(), typed.size() * sizeof(R)))
            << op_name(Op) << " " << in.describe() << " " << form_name(form) << (inclusive ? " inclusive" : " exclusive")
            << " block_length=" << block_length << " segments=" << segments
            << (inclusive ? "" : std::string(" init dtype ") + dtype_name(scalar.dtype()));
      }
    }
  }
}

template <class T>
void expect_dtype_matches(Rng& rng) {
  const std::int64_t n = capped({70001}).front();  // three CPU chunks of 2^15, the last partial
  const CounterRng bits = rng.counter();
  TestArray<T> in(n, rng.uniform(0, 3), T{});
  // Random values of the whole type for integers; floats in [-2, 2), so products neither all
  // vanish nor all overflow at once, and sums are inexact (the bits still must match).
  if constexpr (is_floating_v<T>) fill(in, [&](std::int64_t i) { return from_double<T>(4.0 * bits.unit(i) - 2.0); });
  else fill(in, [&](std::int64_t i) { return static_cast<T>(bits.bits(i)); });
  const std::int64_t block_length = rng.uniform(1, 5000);
  const std::vector<std::int64_t> offsets = random_offsets(n, rng);
  expect_forms_match<ReduceOp::sum>(in, block_length, offsets);
  expect_forms_match<ReduceOp::prod>(in, block_length, offsets);
  expect_forms_match<ReduceOp::min>(in, block_length, offsets);
  expect_forms_match<ReduceOp::max>(in, block_length, offsets);
}

TEST(CpuScanErasedForms, MatchTypedForEveryFormOpAndDtype) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  for (const DType t : kAllDTypes) visit_dtype(t, [&](auto tag) { expect_dtype_matches<decltype(tag)>(rng); });
}

// ---- the init rule through the scans ------------------------------------------------------------

// An i32 sum writes i64; its init may be an int32 (the old `const void*` read 8 bytes there).
TEST(CpuScanErasedForms, Int32InitForInt32Sum) {
  FOLDKIT_TRACE_SEED();
  Rng rng(test_seed());
  const CounterRng bits = rng.counter();
  const std::int64_t n = 1000;
  std::vector<std::int32_t> in(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(bits.bits(i));
  const std::int64_t offsets[] = {0, 10, 10, 500, n};
  for (const std::int32_t init : {std::int32_t{-5}, std::numeric_limits<std::int32_t>::min(),
                                  std::numeric_limits<std::int32_t>::max()}) {
    std::vector<std::int64_t> typed(static_cast<std::size_t>(n), 0x1111), erased(static_cast<std::size_t>(n), 0x2222);
    cpu::exclusive_scan<ReduceOp::sum>(in.data(), n, typed.data(), std::int64_t{init});
    cpu::exclusive_scan(ReduceOp::sum, DType::i32, in.data(), n, erased.data(), Scalar(std::int32_t{init}));
    EXPECT_EQ(erased[0], std::int64_t{init});
    EXPECT_EQ(typed, erased) << "whole, init " << init;
    cpu::exclusive_scan_blocked<ReduceOp::sum>(in.data(), n, typed.data(), 7, std::int64_t{init});
    cpu::exclusive_scan_blocked(ReduceOp::sum, DType::i32, in.data(), n, erased.data(), 7, init);
    EXPECT_EQ(erased[7], std::int64_t{init});
    EXPECT_EQ(typed, erased) << "blocked, init " << init;
    cpu::exclusive_scan_segmented<ReduceOp::sum>(in.data(), n, typed.data(), offsets, 4, std::int64_t{init});
    cpu::exclusive_scan_segmented(ReduceOp::sum, DType::i32, in.data(), n, erased.data(), offsets, 4, init);
    EXPECT_EQ(erased[10], std::int64_t{init});
    EXPECT_EQ(typed, erased) << "segmented, init " << init;
  }
}

// Runs every exclusive erased form of (op, dtype) on 64 elements with `init`, each into an output
// poisoned with 0xEE; expects Error(want) and the poison intact.
template <class T>
void expect_rejected(ReduceOp op, const Scalar& init, Errc want, const char* what) {
  const std::int64_t n = 64;
  std::vector<T> in(n, from_double<T>(1.0));
  const std::int64_t offsets[] = {0, 30, n};
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * 8), poisoned(out.size(), 0xEE);
  for (int form = 0; form < 3; ++form) {
    std::memset(out.data(), 0xEE, out.size());
    EXPECT_TRUE(throws_errc(want, [&] {
      if (form == 0) cpu::exclusive_scan(op, dtype_v<T>, in.data(), n, out.data(), init);
      if (form == 1) cpu::exclusive_scan_blocked(op, dtype_v<T>, in.data(), n, out.data(), 16, init);
      if (form == 2) cpu::exclusive_scan_segmented(op, dtype_v<T>, in.data(), n, out.data(), offsets, 2, init);
    })) << what << ", form " << form_name(static_cast<Form>(form));
    EXPECT_EQ(out, poisoned) << what << ": output written, form " << form_name(static_cast<Form>(form));
  }
}

TEST(CpuScanErasedForms, InexactInitIsRejectedBeforeAnyWrite) {
  expect_rejected<float>(ReduceOp::sum, Scalar(0.1), Errc::invalid_argument, "double 0.1 to an f32 sum");
  expect_rejected<float>(ReduceOp::max, Scalar(1e300), Errc::invalid_argument, "double 1e300 to an f32 max");
  expect_rejected<half>(ReduceOp::sum, Scalar(0.1f), Errc::invalid_argument, "float 0.1f to an f16 sum");
  expect_rejected<std::int32_t>(ReduceOp::max, Scalar(std::int64_t{1} << 40), Errc::invalid_argument,
                                "int64 2^40 to an i32 max (result i32)");
  expect_rejected<std::int32_t>(ReduceOp::min, Scalar(std::int64_t{-2147483649}), Errc::invalid_argument,
                                "int64 -2^31-1 to an i32 min");
  expect_rejected<std::uint32_t>(ReduceOp::sum, Scalar(-1), Errc::invalid_argument, "-1 to a u32 sum (result u64)");
  expect_rejected<std::int64_t>(ReduceOp::sum, Scalar(2.5), Errc::invalid_argument, "2.5 to an i64 sum");
  expect_rejected<float>(ReduceOp::argmax, Scalar(0.0f), Errc::unsupported, "argmax");
  expect_rejected<float>(ReduceOp::mean, Scalar(0.0f), Errc::unsupported, "mean");
}

TEST(CpuScanErasedForms, ExactCrossDtypeInitsAreAccepted) {
  // The largest i32 as an i64 to an i32 max; a NaN double to an f32 sum; 0.5 double to an f16 sum.
  std::vector<std::int32_t> ints(4, 1);
  std::vector<std::int32_t> int_out(4, 0);
  cpu::exclusive_scan(ReduceOp::max, DType::i32, ints.data(), 4, int_out.data(), Scalar(std::int64_t{2147483647}));
  EXPECT_EQ(int_out, (std::vector<std::int32_t>{2147483647, 2147483647, 2147483647, 2147483647}));
  std::vector<float> floats(4, 1.0f), float_out(4, 0.0f);
  cpu::exclusive_scan(ReduceOp::sum, DType::f32, floats.data(), 4, float_out.data(), Scalar(std::nan("")));
  for (float v : float_out) EXPECT_TRUE(std::isnan(v));
  std::vector<half> halves(4, half(1.0f)), half_out(4, half(0.0f));
  cpu::exclusive_scan_blocked(ReduceOp::sum, DType::f16, halves.data(), 4, half_out.data(), 2, Scalar(0.5));
  EXPECT_EQ(static_cast<float>(half_out[0]), 0.5f);
  EXPECT_EQ(static_cast<float>(half_out[1]), 1.5f);
  EXPECT_EQ(static_cast<float>(half_out[2]), 0.5f);
}

TEST(CpuScanErasedForms, Errors) {
  std::vector<float> data(8, 1.0f), out(8);
  const std::int64_t offsets[] = {0, 3, 8};
  const ReduceOp bad_ops[] = {ReduceOp::mean, ReduceOp::argmin, ReduceOp::argmax, static_cast<ReduceOp>(99)};
  for (const ReduceOp op : bad_ops) {
    const std::string what = "ReduceOp " + std::to_string(static_cast<int>(op));
    EXPECT_TRUE(throws_errc(Errc::unsupported, [&] { cpu::inclusive_scan(op, DType::f32, data.data(), 8, out.data()); })) << what;
    EXPECT_TRUE(throws_errc(Errc::unsupported,
                            [&] { cpu::inclusive_scan_blocked(op, DType::f32, data.data(), 8, out.data(), 2); }))
        << what;
    EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
      cpu::inclusive_scan_segmented(op, DType::f32, data.data(), 8, out.data(), offsets, 2);
    })) << what;
    EXPECT_TRUE(throws_errc(Errc::unsupported,
                            [&] { cpu::exclusive_scan(op, DType::f32, data.data(), 8, out.data(), 0.0f); }))
        << what;
    EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
      cpu::exclusive_scan_blocked(op, DType::f32, data.data(), 8, out.data(), 2, 0.0f);
    })) << what;
    EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
      cpu::exclusive_scan_segmented(op, DType::f32, data.data(), 8, out.data(), offsets, 2, 0.0f);
    })) << what;
  }
  const DType bad_dtype = static_cast<DType>(99);
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] { cpu::inclusive_scan(ReduceOp::sum, bad_dtype, data.data(), 8, out.data()); }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cpu::exclusive_scan_blocked(ReduceOp::sum, bad_dtype, data.data(), 8, out.data(), 2, 0.0f);
  }));
  EXPECT_TRUE(throws_errc(Errc::unsupported, [&] {
    cpu::inclusive_scan_segmented(ReduceOp::sum, bad_dtype, data.data(), 8, out.data(), offsets, 2);
  }));
  // The typed forms' argument errors come through.
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::inclusive_scan_blocked(ReduceOp::sum, DType::f32, data.data(), 8, out.data(), 0);
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::exclusive_scan_blocked(ReduceOp::max, DType::f32, data.data(), 8, out.data(), -1, 0.0f);
  }));
  const std::int64_t bad_offsets[] = {0, 5, 3, 8};
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::inclusive_scan_segmented(ReduceOp::sum, DType::f32, data.data(), 8, out.data(), bad_offsets, 3);
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::exclusive_scan_segmented(ReduceOp::min, DType::f32, data.data(), 8, out.data(), offsets, 1, 0.0f);
  }));
  EXPECT_TRUE(throws_errc(Errc::invalid_argument, [&] {
    cpu::exclusive_scan(ReduceOp::sum, DType::f32, nullptr, 8, out.data(), 0.0f);
  }));
}

}  // namespace
}  // namespace foldkit::test
