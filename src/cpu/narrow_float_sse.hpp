// SSE4.1 conversions between floats and the 16-bit float types, four lanes at a time, bit for
// bit as foldkit::half and foldkit::bfloat16 convert one value (dtype.hpp): round to nearest
// even, overflow to infinity, subnormals exact, NaN keeping its sign and top payload bits
// (quieted). For the CPU scans' group rescan (scan_group.hpp) and the 16-bit float reductions
// (reduce_chunk.hpp); the library is built for x86-64-v2, which has no F16C. Needs MXCSR's
// default rounding (to nearest); FTZ/DAZ change nothing here (no float denormal is an input or
// an output of the arithmetic these use).
#pragma once

#if defined(__SSE4_1__)
#include <smmintrin.h>

#include <type_traits>

#include "foldkit/dtype.hpp"

namespace foldkit::cpu::detail {

template <class T> struct NarrowFloat;

template <> struct NarrowFloat<bfloat16> {
  // Lanes 0-3 / 4-7 of eight bfloat16 as floats: the 16 bits on top of a zero half.
  static __m128 low(__m128i v) { return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), v)); }
  static __m128 high(__m128i v) { return _mm_castsi128_ps(_mm_unpackhi_epi16(_mm_setzero_si128(), v)); }
  // Four floats as bfloat16 bits in the low 16 bits of each 32-bit lane.
  static __m128i bits(__m128 f) {
    const __m128i x = _mm_castps_si128(f);
    const __m128i rounded = _mm_add_epi32(
        x, _mm_add_epi32(_mm_set1_epi32(0x7fff), _mm_and_si128(_mm_srli_epi32(x, 16), _mm_set1_epi32(1))));
    const __m128i quiet = _mm_or_si128(_mm_srli_epi32(x, 16), _mm_set1_epi32(0x40));
    const __m128i nan = _mm_castps_si128(_mm_cmpunord_ps(f, f));
    return _mm_blendv_epi8(_mm_srli_epi32(rounded, 16), quiet, nan);
  }
  static __m128i pack(__m128 lo, __m128 hi) { return _mm_packus_epi32(bits(lo), bits(hi)); }
};

template <> struct NarrowFloat<half> {
  // Half bits (low 16 of each 32-bit lane) as floats, as reduce_chunk.hpp's widen_half does one:
  // normals, infinities and NaNs rebias the exponent field; subnormals are an exact int -> float
  // conversion times 2^-24, so no float denormal is touched (right under FTZ/DAZ too).
  static __m128 from_lanes(__m128i h) {
    const __m128i magnitude = _mm_and_si128(h, _mm_set1_epi32(0x7fff));
    const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16);
    const __m128i special = _mm_cmpgt_epi32(magnitude, _mm_set1_epi32(0x7bff));  // inf, NaN
    const __m128i rebias =
        _mm_blendv_epi8(_mm_set1_epi32(0x38000000), _mm_set1_epi32(0x70000000), special);
    const __m128i normal = _mm_add_epi32(_mm_slli_epi32(magnitude, 13), rebias);
    const __m128 subnormal = _mm_mul_ps(_mm_cvtepi32_ps(magnitude), _mm_set1_ps(0x1p-24f));
    const __m128i is_subnormal = _mm_cmplt_epi32(magnitude, _mm_set1_epi32(0x400));
    const __m128i value = _mm_blendv_epi8(normal, _mm_castps_si128(subnormal), is_subnormal);
    return _mm_castsi128_ps(_mm_or_si128(value, sign));
  }
  static __m128 low(__m128i v) { return from_lanes(_mm_unpacklo_epi16(v, _mm_setzero_si128())); }
  static __m128 high(__m128i v) { return from_lanes(_mm_unpackhi_epi16(v, _mm_setzero_si128())); }
  static __m128i bits(__m128 f) {
    const __m128i x = _mm_castps_si128(f);
    const __m128i absx = _mm_and_si128(x, _mm_set1_epi32(0x7fffffff));
    const __m128i sign = _mm_and_si128(_mm_srli_epi32(x, 16), _mm_set1_epi32(0x8000));
    // Normal halves: rebias, round to nearest even on the 13 dropped bits.
    const __m128i odd = _mm_and_si128(_mm_srli_epi32(absx, 13), _mm_set1_epi32(1));
    const __m128i normal = _mm_srli_epi32(
        _mm_add_epi32(_mm_sub_epi32(absx, _mm_set1_epi32(0x38000000)), _mm_add_epi32(_mm_set1_epi32(0xfff), odd)), 13);
    // Subnormal halves (and zero): 0.5f + |f| rounds |f| to a multiple of 2^-24 in the low bits.
    const __m128 magic = _mm_castsi128_ps(_mm_set1_epi32(0x3f000000));
    const __m128i subnormal =
        _mm_sub_epi32(_mm_castps_si128(_mm_add_ps(_mm_castsi128_ps(absx), magic)), _mm_castps_si128(magic));
    const __m128i nan = _mm_or_si128(_mm_set1_epi32(0x7e00), _mm_and_si128(_mm_srli_epi32(absx, 13), _mm_set1_epi32(0x3ff)));
    __m128i r = _mm_blendv_epi8(normal, subnormal, _mm_cmplt_epi32(absx, _mm_set1_epi32(0x38800000)));
    r = _mm_blendv_epi8(r, _mm_set1_epi32(0x7c00), _mm_cmpgt_epi32(absx, _mm_set1_epi32(0x477fefff)));
    r = _mm_blendv_epi8(r, nan, _mm_cmpgt_epi32(absx, _mm_set1_epi32(0x7f800000)));
    return _mm_or_si128(r, sign);
  }
  static __m128i pack(__m128 lo, __m128 hi) { return _mm_packus_epi32(bits(lo), bits(hi)); }
};

// The same conversions for half by the F16C instructions (x86-64-v3), one instruction for four
// lanes instead of NarrowFloat<half>'s dozen. Inline assembly, so that the library (built for
// x86-64-v2) needs no F16C to compile; run only where the CPU has it (cpu_has_f16c). The bits
// equal NarrowFloat<half>'s (CpuNarrowFloatF16C checks every 16-bit pattern and 2^20 floats;
// vcvtps2ph with immediate 0 rounds to nearest even whatever MXCSR says), but for one thing:
// widening quiets a signaling NaN. The scans combine every widened value in float arithmetic,
// which quiets it on either path, so their outputs are the same bits (CpuScanGroup).
struct HalfF16C {
  static __m128 low(__m128i v) {
    __m128 r;
    asm("vcvtph2ps %1, %0" : "=x"(r) : "x"(v));
    return r;
  }
  static __m128 high(__m128i v) { return low(_mm_unpackhi_epi64(v, v)); }
  // Four floats as half bits, packed in the low 64 bits.
  static __m128i packed(__m128 f) {
    __m128i r;
    asm("vcvtps2ph $0, %1, %0" : "=x"(r) : "x"(f));
    return r;
  }
  static __m128i bits(__m128 f) { return _mm_cvtepu16_epi32(packed(f)); }
  static __m128i pack(__m128 lo, __m128 hi) { return _mm_unpacklo_epi64(packed(lo), packed(hi)); }
};

// True where the CPU has F16C and the OS keeps the AVX state its VEX encoding needs. Asked
// once per process; a CPU does not change under a running program.
inline bool cpu_has_f16c() {
  static const bool has = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return has;
}

// A converter type as a value, for the generic lambdas with_narrow_converter calls.
template <class N> struct ConverterTag {
  using type = N;
};

// Calls f(ConverterTag<N>{}) with the conversions for T this CPU runs best: HalfF16C for half
// where the CPU has F16C, else NarrowFloat<T>.
template <class T, class F> decltype(auto) with_narrow_converter(F&& f) {
  if constexpr (std::is_same_v<T, half>) {
    if (cpu_has_f16c()) return f(ConverterTag<HalfF16C>{});
  }
  return f(ConverterTag<NarrowFloat<T>>{});
}

}  // namespace foldkit::cpu::detail

#endif
