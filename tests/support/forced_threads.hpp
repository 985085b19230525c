// Forces the CPU backend's thread count (and, if asked, its scheduling jitter: random delays
// before claims, as descheduled threads would make) for a scope: src/cpu/parallel.hpp's test
// hooks. The bits of every CPU call must not depend on either.
#pragma once

#include "cpu/parallel.hpp"

namespace foldkit::test {

class ForcedThreads {
 public:
  explicit ForcedThreads(int threads, bool jitter = false) {
    cpu::detail::set_forced_threads_for_testing(threads);
    cpu::detail::set_jitter_for_testing(jitter);
  }
  ~ForcedThreads() {
    cpu::detail::set_forced_threads_for_testing(0);
    cpu::detail::set_jitter_for_testing(false);
  }
  ForcedThreads(const ForcedThreads&) = delete;
  ForcedThreads& operator=(const ForcedThreads&) = delete;
};

}  // namespace foldkit::test
