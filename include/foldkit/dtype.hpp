// foldkit element types: the eight dtypes every algorithm supports, and the 16-bit float
// storage types that work on the host (CPU backend) and on the device alike.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__CUDACC__)
#define FOLDKIT_HD __host__ __device__ __forceinline__
#else
#define FOLDKIT_HD inline
#endif

namespace foldkit {

enum class DType : int { i32, u32, i64, u64, f32, f64, f16, bf16 };

inline constexpr DType kAllDTypes[] = {DType::i32, DType::u32, DType::i64, DType::u64,
                                       DType::f32, DType::f64, DType::f16, DType::bf16};

// IEEE binary16, stored as its bit pattern. Layout-compatible with CUDA's __half, so a
// device `__half*` may be passed where foldkit asks for `foldkit::half*`.
struct half {
  std::uint16_t bits;

  half() = default;
  FOLDKIT_HD static constexpr half from_bits(std::uint16_t b) { half h{}; h.bits = b; return h; }
  FOLDKIT_HD explicit half(float f) : bits(from_float(f)) {}
  FOLDKIT_HD explicit operator float() const { return to_float(bits); }

  // Round-to-nearest-even conversion, exact for every finite half; NaN stays NaN.
  FOLDKIT_HD static std::uint16_t from_float(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t absx = x & 0x7fffffffu;
    // NaN keeps its sign and top payload bits (quieted), on host and device alike, so a NaN
    // that came from a half converts back to the same bits.
    if (absx > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
#if defined(__CUDA_ARCH__)
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    if (absx >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow -> inf
    if (absx < 0x38800000u) {  // result is subnormal (or zero) in half
      if (absx < 0x33000000u) return static_cast<std::uint16_t>(sign);  // below half of min subnormal
      const std::uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
      const int shift = 113 - static_cast<int>(absx >> 23) + 13;  // 126-14 = 112 (+1) and 13 mantissa bits
      std::uint32_t r = mant >> shift;
      const std::uint32_t rem = mant & ((1u << shift) - 1u);
      const std::uint32_t halfway = 1u << (shift - 1);
      if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
      return static_cast<std::uint16_t>(sign | r);
    }
    std::uint32_t r = ((absx - 0x38000000u) >> 13);  // rebias exponent 127 -> 15
    const std::uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
    return static_cast<std::uint16_t>(sign | r);
#endif
  }
  FOLDKIT_HD static float to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<unsigned short>(h)));
    return f;
#else
    const std::uint32_t sign = (h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    std::uint32_t mant = h & 0x3ffu;
    std::uint32_t x;
    if (exp == 0x1fu) {
      x = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
      x = sign | ((exp + 112u) << 23) | (mant << 13);
    } else if (mant == 0) {
      x = sign;
    } else {  // subnormal half: normalise
      std::uint32_t e = 113;
      while ((mant & 0x400u) == 0) { mant <<= 1; --e; }
      x = sign | (e << 23) | ((mant & 0x3ffu) << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
#endif
  }
};

// bfloat16: the top 16 bits of a float. Layout-compatible with CUDA's __nv_bfloat16.
struct bfloat16 {
  std::uint16_t bits;

  bfloat16() = default;
  FOLDKIT_HD static constexpr bfloat16 from_bits(std::uint16_t b) { bfloat16 h{}; h.bits = b; return h; }
  FOLDKIT_HD explicit bfloat16(float f) : bits(from_float(f)) {}
  FOLDKIT_HD explicit operator float() const { return to_float(bits); }

  FOLDKIT_HD static std::uint16_t from_float(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
    const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
    return static_cast<std::uint16_t>((x + rounding) >> 16);
  }
  FOLDKIT_HD static float to_float(std::uint16_t b) {
    const std::uint32_t x = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2, "16-bit storage types");
static_assert(std::is_trivially_copyable_v<half> && std::is_trivially_copyable_v<bfloat16>);

template <class T> struct dtype_of;
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<std::uint32_t> { static constexpr DType value = DType::u32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<std::uint64_t> { static constexpr DType value = DType::u64; };
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<half> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::bf16; };
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;
// Whether T is one of the eight dtypes (has a dtype_v): for templates over user types, such as
// the tensor reduce_custom forms, to static_assert with a clear message.
template <class T, class = void> struct has_dtype : std::false_type {};
template <class T> struct has_dtype<T, std::void_t<decltype(dtype_of<T>::value)>> : std::true_type {};
template <class T> inline constexpr bool has_dtype_v = has_dtype<T>::value;

template <class T> inline constexpr bool is_16bit_float_v =
    std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
template <class T> inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_16bit_float_v<T>;

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::i32: case DType::u32: case DType::f32: return 4;
    case DType::i64: case DType::u64: case DType::f64: return 8;
    case DType::f16: case DType::bf16: return 2;
  }
  return 0;
}

constexpr const char* dtype_name(DType t) {
  switch (t) {
    case DType::i32: return "i32";
    case DType::u32: return "u32";
    case DType::i64: return "i64";
    case DType::u64: return "u64";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

// Calls f(T{}) with the C++ type of a runtime dtype; the basis of every type-erased entry point.
template <class F>
constexpr decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::i32: return f(std::int32_t{});
    case DType::u32: return f(std::uint32_t{});
    case DType::i64: return f(std::int64_t{});
    case DType::u64: return f(std::uint64_t{});
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    case DType::f16: return f(half{});
    case DType::bf16: return f(bfloat16{});
  }
  return f(float{});  // unreachable for valid enumerators; callers validate first
}

constexpr bool is_valid(DType t) {
  return static_cast<int>(t) >= 0 && static_cast<int>(t) <= static_cast<int>(DType::bf16);
}

}  // namespace foldkit
