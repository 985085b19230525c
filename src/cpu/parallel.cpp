// The CPU backend's only source of threads: an OpenMP loop over chunk indices.
#include <omp.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>

#include "foldkit/reduce.hpp"

namespace foldkit::cpu::detail {

void parallel_for_chunks(std::int64_t chunks, void (*body)(void* ctx, std::int64_t chunk), void* ctx) {
  if (chunks <= 0) return;
  // A region costs microseconds; skip it when it cannot help. Inside an active region (a caller
  // that is itself parallel) nested teams are usually disabled anyway, so run inline.
  if (chunks == 1 || omp_get_max_threads() == 1 || omp_in_parallel()) {
    for (std::int64_t c = 0; c < chunks; ++c) body(ctx, c);
    return;
  }

  // Exceptions must not cross the region boundary (that would call std::terminate). We keep the
  // exception of the lowest failing chunk: that is exactly what the serial loop above would have
  // thrown, so the error does not depend on the thread count either. Chunks above a known
  // failure are skipped; chunks below it still run, since one of them might fail first.
  std::atomic<std::int64_t> first_failed{std::numeric_limits<std::int64_t>::max()};
  std::exception_ptr error;

#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    if (c > first_failed.load(std::memory_order_relaxed)) continue;
    try {
      body(ctx, c);
    } catch (...) {
#pragma omp critical(foldkit_parallel_for_chunks_error)
      {
        if (c < first_failed.load(std::memory_order_relaxed)) {
          error = std::current_exception();
          first_failed.store(c, std::memory_order_relaxed);
        }
      }
    }
  }

  if (error) std::rethrow_exception(error);
}

}  // namespace foldkit::cpu::detail
