// Publishing one block's partial result to another block without fences: every 4-byte word of
// the value travels with a flag in one aligned 8-byte store, which is single-copy atomic, so a
// reader that sees the flag also sees the word. A slot is all zeros when unused; the reader
// zeroes it again after collecting, so the next launch finds it clean.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace foldkit::cuda {

// Bytes of the slot of a value of `value_bytes` (for hosts sizing a workspace at run time).
constexpr std::size_t flagged_slot_bytes(std::size_t value_bytes) { return (value_bytes + 3) / 4 * 8; }

template <class T>
struct FlaggedSlot {
  static constexpr int kWords = (sizeof(T) + 3) / 4;
  unsigned long long word[kWords];
};
static_assert(sizeof(FlaggedSlot<float>) == flagged_slot_bytes(4) && sizeof(FlaggedSlot<double>) == flagged_slot_bytes(8) &&
              sizeof(FlaggedSlot<unsigned short>) == flagged_slot_bytes(2));

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

// One read of a slot's words (load_slot), then whether they are all there and the value they
// carry (unpack_slot). A poll loop issues load_slot for every slot it waits on before it unpacks
// any: were the next load issued only after the last one was examined (a poll loop that tests
// "still pending?" before each load does that), each slot would cost a round trip to L2.
template <class T>
struct SlotWords {
  unsigned long long w[FlaggedSlot<T>::kWords];
};

template <class T>
__device__ __forceinline__ void load_slot(const FlaggedSlot<T>* slot, SlotWords<T>& words) {
#pragma unroll
  for (int k = 0; k < FlaggedSlot<T>::kWords; ++k)
    // volatile: every poll reads memory again. No "memory" clobber: it would keep a poll loop's
    // words in local memory (its buffer's address reaches the asm) instead of registers.
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(words.w[k]) : "l"(slot->word + k));
}

template <class T>
__device__ __forceinline__ bool unpack_slot(const SlotWords<T>& words, T& value) {
  bool complete = true;
  unsigned low[FlaggedSlot<T>::kWords];
#pragma unroll
  for (int k = 0; k < FlaggedSlot<T>::kWords; ++k) {
    complete &= (words.w[k] >> 32) == 1u;
    low[k] = static_cast<unsigned>(words.w[k]);
  }
  if (complete) memcpy(&value, low, sizeof(T));
  return complete;
}

// Waits until every slot k of `mask` (slot_at(k): its address, k < kBatch) is published and
// leaves its value in values[k] (the others untouched). Each round issues the loads of every
// slot still pending before it examines any.
template <int kBatch, class T, class SlotAt>
__device__ __forceinline__ void poll_slots(unsigned mask, SlotAt slot_at, T (&values)[kBatch]) {
  unsigned pending = mask;
  while (pending != 0) {
    const unsigned round = pending;  // the loads' predicates must not wait on this round's results
    SlotWords<T> w[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
      if ((round >> k) & 1u) load_slot(slot_at(k), w[k]);
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
      if ((round >> k) & 1u)
        if (unpack_slot(w[k], values[k])) pending &= ~(1u << k);
  }
}

template <class T>
__device__ __forceinline__ void clear_slot(FlaggedSlot<T>* slot) {
#pragma unroll
  for (int k = 0; k < FlaggedSlot<T>::kWords; ++k) slot->word[k] = 0ull;
}

}  // namespace foldkit::cuda
