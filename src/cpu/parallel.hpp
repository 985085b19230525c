// The CPU backend's threads (internal to src/cpu; the tests use the hooks at the end).
//
// A small pool of its own, in place of OpenMP teams, because on a busy machine a fork/join loses
// whole scheduler time slices: a team's region ends only when every member has checked in, even
// one the scheduler has not run yet, and its spin-waiting members burn the time slices the busy
// machine's other threads need. Here:
//   - the caller takes part: it claims items (WorkItems) like the workers, and the call ends
//     when every item is finished, not when every worker has woken; a worker that wakes after
//     the last claim finds nothing to do and touches nothing of the call's; the items of a
//     thread that has not come are taken over by the others;
//   - workers wait passively: a short spin after a call only when the machine looked idle, then
//     a futex sleep; a call wakes only as many as it will use;
//   - the thread count adapts to load: 1 + the cores that neither the caller nor other runnable
//     threads occupy (the 4th field of /proc/loadavg, re-read at most every 2 ms, less our own
//     spinning workers), capped by omp_get_max_threads() (OMP_NUM_THREADS still limits foldkit);
//     one thread inside an active OpenMP region, in a pool worker, or while another call holds
//     the pool (concurrent callers do not queue: each runs alone); $FOLDKIT_CPU_THREADS=N fixes
//     the count at N instead. A process's own OpenMP team spinning after a region (libgomp's
//     default, ~300k spins: ~7 ms on the 2-core test VM) reads as load too: set
//     OMP_WAIT_POLICY=passive there, or FOLDKIT_CPU_THREADS;
//   - a call below the callers' work thresholds runs on the caller alone (reduce_cpu.cpp,
//     scan_chunk.hpp).
// Items are a caller's fixed units (chunks, pieces): which thread runs an item never changes what
// it computes, so results are bitwise independent of the thread count and of the timing.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace foldkit::cpu::detail {

// A word that threads wait on for progress: wait(seen) returns once value() != seen (or
// spuriously: callers re-check their condition). Spins up to spin_ns, then sleeps (futex).
class Progress {
 public:
  std::uint32_t value() const { return word_.load(std::memory_order_acquire); }
  // Bumps the word; wakes up to `wake` sleepers (none asleep: no system call).
  void advance(int wake = 0x7fffffff);
  void wait(std::uint32_t seen, std::int64_t spin_ns);

 private:
  std::atomic<std::uint32_t> word_{0};
  std::atomic<std::uint32_t> sleepers_{0};
};

// The items of one parallel call, claimed by whichever threads take part, each finished (finish)
// by the thread that claimed it once it is done with it. Two orders:
//   in order  (lanes == 1): claims hand out 0, 1, 2, ... (the scan's rounds rely on it);
//   in ranges (lanes > 1):  item range k of `lanes` equal contiguous ranges goes to the k-th
//             thread to claim, front to back (OpenMP's static layout: a thread streams through
//             contiguous memory, measured 16 % faster at 2^24 f32 than interleaved items); a
//             thread whose range is empty takes the upper half of the first non-empty range
//             after its own, so a thread that comes late or never leaves its range to the others.
class WorkItems {
 public:
  explicit WorkItems(std::int64_t items, int lanes = 1);
  WorkItems(const WorkItems&) = delete;
  WorkItems& operator=(const WorkItems&) = delete;

  // A participant's own state (its range); one per participant and call.
  class Claimer {
    friend class WorkItems;
    int lane_ = -1;
  };

  std::int64_t items() const { return items_; }
  // An unclaimed item, or -1 when all are claimed.
  std::int64_t claim(Claimer& me);
  // In order only: whether claim() might still return an item below `limit`.
  bool unclaimed_below(std::int64_t limit) const { return next_.load(std::memory_order_relaxed) < limit; }
  // `count` claimed items are done (release: what they wrote is visible to the caller).
  void finish(std::int64_t count = 1);
  // Returns once every item is finished (spinning, then sleeping).
  void wait_all_finished();

 private:
  std::int64_t claim_in_ranges(Claimer& me);

  const std::int64_t items_;
  const int lanes_;
  std::atomic<std::int64_t> next_{0};  // in order: the next item
  // In ranges: lane k is [front, back) packed as back << 32 | front.
  std::unique_ptr<std::atomic<std::uint64_t>[]> lane_;
  std::atomic<int> joined_{0};
  std::atomic<std::int64_t> done_{0};
  Progress finished_;  // advanced once, by the finish that completes the items
};

// A participant of a call: claims items from `work` (with its own Claimer) until claim() returns
// -1, and finishes each.
// It may read and write the call's state (ctx) only between claiming an item and finishing it:
// after its last finish the caller may already have returned. It must not throw.
using Participant = void (*)(void* ctx, WorkItems& work);

// The pool for one call: threads() is how many threads the call may plan for (1 when it asked
// for one, when another call holds the pool, or inside a pool thread). run() runs
// participate(ctx, work) on the calling thread and on up to threads() - 1 pool workers, over
// `items` items claimed in order (in_order) or in ranges, and returns once every item is
// finished; once per lease.
class ThreadLease {
 public:
  explicit ThreadLease(int threads);
  ~ThreadLease();
  ThreadLease(const ThreadLease&) = delete;
  ThreadLease& operator=(const ThreadLease&) = delete;
  int threads() const { return threads_; }
  void run(std::int64_t items, bool in_order, Participant participate, void* ctx);

 private:
  int threads_ = 1;
  bool held_ = false;
};

// The threads a call of `items` items should use now (1: run it on the caller alone): the load
// rule above. `items` bounds it (more threads than items cannot help).
int pick_threads(std::int64_t items);

// How long a thread waiting for other threads' items spins before it sleeps (ns): a few items'
// worth when the machine looked idle at the last reading, 0 when it looked busy.
std::int64_t wait_spin_ns();

// ---- test hooks --------------------------------------------------------------------------------
// Forces pick_threads to min(threads, items) whatever the load or OpenMP say (0: adaptive again).
void set_forced_threads_for_testing(int threads);
// Jitter: pool workers sleep a pseudo-random 0-300 us before joining a call and, now and then,
// after claiming an item, as a descheduled thread would; exercises late joins and late finishes.
void set_jitter_for_testing(bool on);
// Threads the pool has started (never shrinks; 0 before the first parallel call).
int pool_workers_for_testing();
// How this thread's last parallel call ran: the threads it planned for (1: the caller alone) and
// whether on an OpenMP team (else the pool). For the benchmark's "threads" column.
struct CallShape {
  int threads = 0;
  bool openmp_team = false;
};
CallShape last_call_shape_for_testing();

}  // namespace foldkit::cpu::detail
