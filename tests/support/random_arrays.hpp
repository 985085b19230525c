// Test inputs: fast reproducible random data laid out with a misaligned start and guard elements.
//
// Layout of a TestArray: [offset guard elements][n data elements][kTailGuard guard elements]
// in a 256-byte aligned allocation, so data() is `offset` elements past an aligned base. Guards
// hold values that change the answer of the op under test if they are ever read (NaN for
// floats; 0 for integer products, the type's extremes for min/max), so reading one element too
// many at either end of a misaligned range makes a test fail rather than pass by luck.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "foldkit/dtype.hpp"

namespace foldkit::test {

// ---- random numbers ----------------------------------------------------------------------------

inline std::uint64_t mix64(std::uint64_t x) {  // SplitMix64's finaliser: a good 64-bit bijection
  x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27; x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Element i's random bits depend only on (key, i): generation parallelises and is reproducible
// whatever the thread count.
struct CounterRng {
  std::uint64_t key;
  std::uint64_t bits(std::uint64_t i) const { return mix64(key + (i + 1) * 0x9e3779b97f4a7c15ull); }
  double unit(std::uint64_t i) const { return static_cast<double>(bits(i) >> 11) * 0x1p-53; }  // [0, 1)
  // Uniform in [lo, hi] for any lo <= hi (the tiny modulo bias is irrelevant here).
  template <class I> I in_range(std::uint64_t i, I lo, I hi) const {
    const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
    const std::uint64_t r = span == 0 ? bits(i) : bits(i) % span;
    return static_cast<I>(static_cast<std::uint64_t>(lo) + r);
  }
};

// Sequential generator for the choices a test makes (offsets, plant positions, sub-keys).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return mix64(state_ += 0x9e3779b97f4a7c15ull); }
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {  // inclusive
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  CounterRng counter() { return CounterRng{next()}; }

 private:
  std::uint64_t state_;
};

// ---- conversions between T and the reference arithmetic --------------------------------------

template <class T> T from_double(double v) {
  if constexpr (is_16bit_float_v<T>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}
template <class T> long double to_ld(T v) {
  if constexpr (is_16bit_float_v<T>) return static_cast<float>(v);
  else return static_cast<long double>(v);
}
template <class T> T quiet_nan() {
  if constexpr (is_16bit_float_v<T>) return T(std::numeric_limits<float>::quiet_NaN());
  else return std::numeric_limits<T>::quiet_NaN();
}
template <class T> bool is_nan_value(T v) {
  if constexpr (is_floating_v<T>) { const long double x = to_ld(v); return x != x; }
  else return false;
}

// ---- the array -------------------------------------------------------------------------------

template <class T> struct AlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{256};
  AlignedAllocator() = default;
  template <class U> AlignedAllocator(const AlignedAllocator<U>&) {}
  T* allocate(std::size_t count) { return static_cast<T*>(::operator new(count * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
  template <class U> bool operator==(const AlignedAllocator<U>&) const { return true; }
  template <class U> bool operator!=(const AlignedAllocator<U>&) const { return false; }
};

// Guard elements after the data: more than one 16-byte vector of the smallest dtype.
inline constexpr std::int64_t kTailGuard = 32;

template <class T> struct TestArray {
  std::int64_t n = 0;
  std::int64_t offset = 0;
  std::vector<T, AlignedAllocator<T>> storage;

  TestArray(std::int64_t n_, std::int64_t offset_, T guard)
      : n(n_), offset(offset_), storage(static_cast<std::size_t>(offset_ + n_ + kTailGuard), guard) {}

  const T* data() const { return storage.data() + offset; }
  T* data() { return storage.data() + offset; }
  T& operator[](std::int64_t i) { return storage[static_cast<std::size_t>(offset + i)]; }
  const T& operator[](std::int64_t i) const { return storage[static_cast<std::size_t>(offset + i)]; }
  std::string describe() const {
    return std::string(dtype_name(dtype_v<T>)) + " n=" + std::to_string(n) + " offset=" + std::to_string(offset);
  }
};

// a[i] = value_at(i) for every data element, in parallel for large n.
template <class T, class F> void fill(TestArray<T>& a, F value_at) {
  T* d = a.data();
  const std::int64_t n = a.n;
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (std::int64_t i = 0; i < n; ++i) d[i] = value_at(i);
}

// ---- generators: one per kind of check ---------------------------------------------------------

// Guard for sums: NaN for floats; for integers an odd large value, which changes any sum.
template <class T> T sum_guard() {
  if constexpr (is_floating_v<T>) return quiet_nan<T>();
  else return static_cast<T>(0x5bd1e9955bd1e995ull);
}

// Data whose sum every backend must get exactly: integers of any value (sums wrap mod 2^64),
// or for floats nonzero whole numbers, so every partial sum of any subset is a whole number that
// the accumulator holds exactly and every missed or doubled element changes the result.
//   f32/f16/bf16 (float accumulator, 24 bits): |x| <= 8. Up to n = 2^21 no partial sum can
//     exceed 8 * 2^21 = 2^24, so exactness is guaranteed. Beyond that, a partial sum of m <= 2^28
//     such values has standard deviation about 5.05 * 2^14 = 82700 and would have to reach 2^24
//     (200 sigma) to round: impossible in practice for any fixed (data-independent) combine tree.
//     (16-bit floats accumulate in float, so they need no smaller range than f32.)
//   f64: |x| <= 2^20, so even the worst case 2^28 * 2^20 = 2^48 < 2^53 is exact.
template <class T> TestArray<T> make_exact_sum_data(std::int64_t n, std::int64_t offset, CounterRng rng) {
  TestArray<T> a(n, offset, sum_guard<T>());
  if constexpr (is_floating_v<T>) {
    const std::int64_t m = std::is_same_v<T, double> ? (1 << 20) : 8;
    fill(a, [&](std::int64_t i) {
      const std::int64_t v = rng.in_range<std::int64_t>(i, 1, m);
      return from_double<T>(static_cast<double>((rng.bits(~i) & 1) ? -v : v));
    });
  } else {
    fill(a, [&](std::int64_t i) { return static_cast<T>(rng.bits(i)); });
  }
  return a;
}

// Real-valued data uniform in [lo, hi), NaN guards. (Floats only.)
template <class T>
TestArray<T> make_real_data(std::int64_t n, std::int64_t offset, CounterRng rng, double lo, double hi) {
  static_assert(is_floating_v<T>);
  TestArray<T> a(n, offset, quiet_nan<T>());
  fill(a, [&](std::int64_t i) { return from_double<T>(lo + (hi - lo) * rng.unit(i)); });
  return a;
}

// Data whose product is exact and non-trivial.
//   Integers: random odd values. Odd numbers are invertible mod 2^64, so the wrapped product never
//     collapses to 0 and a missed element changes it; guards are 0, which would zero it.
//   Floats: +-1 everywhere, plus up to 40 factors of 2, 40 of 1/2 and 10 of 3/2 at random places.
//     Any sub-product is +-3^a * 2^b with a <= 10, |b| <= 50: exact in every accumulator type.
template <class T>
TestArray<T> make_exact_prod_data(std::int64_t n, std::int64_t offset, CounterRng rng, Rng& choices) {
  if constexpr (is_floating_v<T>) {
    TestArray<T> a(n, offset, quiet_nan<T>());
    fill(a, [&](std::int64_t i) { return from_double<T>((rng.bits(i) & 1) ? -1.0 : 1.0); });
    const struct { double value; int count; } factors[] = {{2.0, 40}, {0.5, 40}, {1.5, 10}};
    for (const auto& f : factors) {
      const std::int64_t count = choices.uniform(0, f.count);
      for (std::int64_t k = 0; k < count; ++k) {
        const std::int64_t pos = choices.uniform(0, n - 1);
        a[pos] = from_double<T>((choices.next() & 1) ? -f.value : f.value);
      }
    }
    return a;
  } else {
    TestArray<T> a(n, offset, T(0));
    fill(a, [&](std::int64_t i) { return static_cast<T>(rng.bits(i) | 1u); });
    return a;
  }
}

// For min/max/argmin/argmax: random data strictly inside the type's range, so that the planted
// extremes (ExtremeValues::plant_*) are strictly beyond it and the guards beyond those.
template <class T> struct ExtremeValues {
  static T data_at(const CounterRng& rng, std::int64_t i) {
    if constexpr (is_floating_v<T>) {
      return from_double<T>(-1.0 + 2.0 * rng.unit(i));
    } else {
      return rng.in_range<T>(i, static_cast<T>(std::numeric_limits<T>::lowest() + 2),
                             static_cast<T>(std::numeric_limits<T>::max() - 2));
    }
  }
  static T plant_min() {
    if constexpr (is_floating_v<T>) return from_double<T>(-2.0);
    else return static_cast<T>(std::numeric_limits<T>::lowest() + 1);
  }
  static T plant_max() {
    if constexpr (is_floating_v<T>) return from_double<T>(2.0);
    else return static_cast<T>(std::numeric_limits<T>::max() - 1);
  }
  // For floats NaN (it wins every comparison); for integers the value just past the plant.
  static T guard(bool for_max) {
    if constexpr (is_floating_v<T>) return quiet_nan<T>();
    else return for_max ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
  }
};

// Random data with `plant` written at each of `positions`; guards suit max (for_max) or min.
template <class T>
TestArray<T> make_extreme_data(std::int64_t n, std::int64_t offset, CounterRng rng, bool for_max,
                               const std::vector<std::int64_t>& positions) {
  using E = ExtremeValues<T>;
  TestArray<T> a(n, offset, E::guard(for_max));
  fill(a, [&](std::int64_t i) { return E::data_at(rng, i); });
  for (std::int64_t p : positions) a[p] = for_max ? E::plant_max() : E::plant_min();
  return a;
}

}  // namespace foldkit::test
