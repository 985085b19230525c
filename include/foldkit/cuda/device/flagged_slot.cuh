// Publishing one block's partial result to another block without fences: every 4-byte word of
// the value travels with a flag in one aligned 8-byte store, which is single-copy atomic, so a
// reader that sees the flag also sees the word. A slot is all zeros when unused; the reader
// zeroes it again after collecting, so the next launch finds it clean.
#pragma once

#include <cstring>
#include <type_traits>

namespace foldkit::cuda {

template <class T>
struct FlaggedSlot {
  static constexpr int kWords = (sizeof(T) + 3) / 4;
  unsigned long long word[kWords];
};

template <class T>
__device__ __forceinline__ void publish_to_slot(FlaggedSlot<T>* slot, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  unsigned words[FlaggedSlot<T>::kWords] = {};
  memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int k = 0; k < FlaggedSlot<T>::kWords; ++k) {
    const unsigned long long w = (1ull << 32) | words[k];
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slot->word + k), "l"(w) : "memory");
  }
}

// Reads a slot once; returns true (and the value) when every word has arrived.
template <class T>
__device__ __forceinline__ bool try_collect_slot(const FlaggedSlot<T>* slot, T& value) {
  unsigned long long w[FlaggedSlot<T>::kWords];
#pragma unroll
  for (int k = 0; k < FlaggedSlot<T>::kWords; ++k)
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w[k]) : "l"(slot->word + k) : "memory");
  bool complete = true;
  unsigned words[FlaggedSlot<T>::kWords];
#pragma unroll
  for (int k = 0; k < FlaggedSlot<T>::kWords; ++k) {
    complete &= (w[k] >> 32) == 1u;
    words[k] = static_cast<unsigned>(w[k]);
  }
  if (complete) memcpy(&value, words, sizeof(T));
  return complete;
}

template <class T>
__device__ __forceinline__ void clear_slot(FlaggedSlot<T>* slot) {
#pragma unroll
  for (int k = 0; k < FlaggedSlot<T>::kWords; ++k) slot->word[k] = 0ull;
}

}  // namespace foldkit::cuda
