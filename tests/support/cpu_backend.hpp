// The CPU side of the backend adapter. The shared test bodies (tests/common/) talk to a backend
// only through this interface:
//   kName, available()
//   upload(TestArray<T>) -> Input<T>   make the data visible to the backend (no copy on the CPU)
//   run<Op>(Input<T>)                  the typed API
//   run_erased<Op>(Input<T>)           the type-erased API, through a poisoned output slot
//   run<Op>(host vector, offset, n)    one-shot form: reduce host[offset, offset + n)
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "foldkit/reduce.hpp"
#include "support/random_arrays.hpp"

namespace foldkit::test {

// An output slot larger than any result and filled with 0xFF (NaN for every float type, -1 or
// the maximum for integers). take<R>() checks that nothing was written past the result.
struct PoisonedSlot {
  static constexpr std::size_t kBytes = 64;
  static constexpr unsigned char kPoison = 0xFF;
  unsigned char bytes[kBytes];

  PoisonedSlot() { std::memset(bytes, kPoison, kBytes); }
  template <class R> R take(const char* who) const {
    static_assert(sizeof(R) <= kBytes);
    for (std::size_t i = sizeof(R); i < kBytes; ++i)
      if (bytes[i] != kPoison)
        throw std::runtime_error(std::string(who) + " wrote past its " + std::to_string(sizeof(R)) +
                                 "-byte result (byte " + std::to_string(i) + ")");
    R r;
    std::memcpy(&r, bytes, sizeof(R));
    return r;
  }
};

struct CpuBackend {
  static constexpr const char* kName = "cpu";
  static bool available() { return true; }

  template <class T> struct Input {
    using value_type = T;
    const T* ptr;
    std::int64_t n;
  };
  template <class T> static Input<T> upload(const TestArray<T>& a) { return Input<T>{a.data(), a.n}; }

  template <ReduceOp Op, class T> static reduce_result_t<Op, T> run(const Input<T>& in) {
    return cpu::reduce<Op>(in.ptr, in.n);
  }

  template <ReduceOp Op, class T> static reduce_result_t<Op, T> run_erased(const Input<T>& in) {
    PoisonedSlot slot;
    cpu::reduce(Op, dtype_v<T>, in.ptr, in.n, slot.bytes);
    return slot.take<reduce_result_t<Op, T>>("cpu::reduce(op, dtype, ...)");
  }

  template <ReduceOp Op, class T>
  static reduce_result_t<Op, T> run(const std::vector<T>& host, std::int64_t offset, std::int64_t n) {
    return cpu::reduce<Op>(host.data() + offset, n);
  }
};

}  // namespace foldkit::test
