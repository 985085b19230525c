// The CPU backend's only source of threads: the pool of parallel.hpp, and parallel_for_chunks
// (foldkit/reduce.hpp) on top of it.
#include "cpu/parallel.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "foldkit/reduce.hpp"

namespace foldkit::cpu::detail {
namespace {

// ---- waiting -----------------------------------------------------------------------------------

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) && std::atomic<std::uint32_t>::is_always_lock_free,
              "a futex word is a plain 32-bit word");

// Sleeps while *word == expected (or spuriously).
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
#else
  if (word.load() == expected) std::this_thread::sleep_for(std::chrono::microseconds(50));
#endif
}

void futex_wake(std::atomic<std::uint32_t>& word, int count) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
#else
  (void)word;
  (void)count;  // the fallback's sleepers poll
#endif
}

// Spins until pred() or until spin_ns have passed; returns pred()'s last value.
template <class Pred> bool spin_until(Pred pred, std::int64_t spin_ns) {
  if (pred()) return true;
  if (spin_ns <= 0) return false;
  const std::int64_t deadline = now_ns() + spin_ns;
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      cpu_relax();
      if (pred()) return true;
    }
    if (now_ns() > deadline) return pred();
  }
}

// ---- test hooks --------------------------------------------------------------------------------

std::atomic<int> g_forced_threads{0};
std::atomic<bool> g_jitter{false};
thread_local bool tl_in_pool = false;    // a pool worker, or a caller inside ThreadLease::run
thread_local bool tl_is_worker = false;  // a pool worker
thread_local CallShape tl_last_call;     // last_call_shape_for_testing

void jitter_sleep(int one_in) {
  thread_local std::uint64_t state =
      0x9e3779b97f4a7c15ull ^ std::hash<std::thread::id>{}(std::this_thread::get_id()) ^ static_cast<std::uint64_t>(now_ns());
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  if (state % static_cast<std::uint64_t>(one_in) == 0)
    std::this_thread::sleep_for(std::chrono::microseconds((state >> 8) % 300));
}

// ---- load --------------------------------------------------------------------------------------

std::atomic<int> g_spinning_workers{0};  // pool workers spinning for work now (runnable, idle)

// The cores the caller may use, the CPUs online, and how many runnable threads other than the
// caller and the pool's spinning workers the system had at the last two readings of
// /proc/loadavg (4th field: "runnable/total", counted at the moment of reading).
class Load {
 public:
  static Load& get() {
    static Load load;
    return load;
  }

  // Cores that neither the caller nor other runnable threads occupy (re-read at most every 2 ms;
  // the smallest of the last three readings, so that a task passing through one reading does not
  // halve a call; a new load is seen within three readings).
  int free_cores() {
    const std::int64_t t = now_ns();
    if (t - stamp_.load(std::memory_order_relaxed) > kPeriodNs && !refreshing_.test_and_set(std::memory_order_acquire)) {
      const int others = read_others();
      prev2_.store(prev_.load(std::memory_order_relaxed), std::memory_order_relaxed);
      prev_.store(last_.load(std::memory_order_relaxed), std::memory_order_relaxed);
      last_.store(others, std::memory_order_relaxed);
      stamp_.store(t, std::memory_order_relaxed);
      refreshing_.clear(std::memory_order_release);
    }
    const int others = std::min({last_.load(std::memory_order_relaxed), prev_.load(std::memory_order_relaxed),
                                 prev2_.load(std::memory_order_relaxed)});
    return std::max(0, cores_ - 1 - others);
  }
  // Whether the last reading left a core free beside the caller.
  bool looked_idle() const { return cores_ - 1 - last_.load(std::memory_order_relaxed) > 0; }
  // Cores that every one of the last three readings left free beside the caller.
  int surely_free_cores() const {
    const int most = std::max({last_.load(std::memory_order_relaxed), prev_.load(std::memory_order_relaxed),
                               prev2_.load(std::memory_order_relaxed)});
    return std::max(0, cores_ - 1 - most);
  }
  int cores() const { return cores_; }

 private:
  static constexpr std::int64_t kPeriodNs = 2'000'000;

  Load() {
    cores_ = static_cast<int>(std::thread::hardware_concurrency());
    online_ = cores_;
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) cores_ = CPU_COUNT(&set);
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > 0) online_ = static_cast<int>(online);
#endif
    cores_ = std::max(1, cores_);
    online_ = std::max(cores_, online_);
  }

  int read_others() const {
#if defined(__linux__)
    const int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[128];
    const ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0) return 0;
    buf[len] = 0;
    const char* p = buf;
    for (int field = 0; field < 3; ++field) {  // "0.52 0.58 0.59 3/456 12345"
      while (*p && *p != ' ') ++p;
      while (*p == ' ') ++p;
    }
    long running = 0;
    while (*p >= '0' && *p <= '9') running = running * 10 + (*p++ - '0');
    if (*p != '/') return 0;
    long others = running - 1 - g_spinning_workers.load(std::memory_order_relaxed);
    // A cpuset narrower than the machine: the count is system-wide; take our cores' share.
    if (cores_ < online_) others = others * cores_ / online_;
    return static_cast<int>(std::clamp<long>(others, 0, 1 << 20));
#else
    return 0;
#endif
  }

  int cores_ = 1, online_ = 1;
  std::atomic<std::int64_t> stamp_{std::numeric_limits<std::int64_t>::min() / 2};
  std::atomic<int> last_{0}, prev_{0}, prev2_{0};
  std::atomic_flag refreshing_ = ATOMIC_FLAG_INIT;
};

// A waiting worker spins this long for the next call when the machine looked idle (a caller's
// next call is often microseconds away; waking from a futex costs tens of us), else sleeps at once.
constexpr std::int64_t kWorkerSpinNs = 200'000;
// A thread waiting for items that others run: a few items' time when idle.
constexpr std::int64_t kItemWaitSpinNs = 50'000;

// ---- the pool ----------------------------------------------------------------------------------

struct Job {
  Job(std::int64_t items, int lanes, Participant p, void* c, int helpers)
      : work(items, lanes), participate(p), ctx(c), slots(helpers) {}
  WorkItems work;
  Participant participate;
  void* ctx;
  std::atomic<int> slots;  // workers that may still join
};

std::atomic<bool> g_pool_gone{false};  // set at static destruction: calls then run alone

class Pool {
 public:
  static Pool& get() {
    static Pool pool;
    return pool;
  }

  // One call at a time holds the pool; the others run alone (no queueing behind a call).
  bool try_acquire() { return !busy_.exchange(true, std::memory_order_acquire); }

  // Holder only: hands `job` to up to `helpers` workers (started when missing).
  void publish(const std::shared_ptr<Job>& job, int helpers) {
    ensure_workers(helpers);
    lock();
    job_ = job;
    unlock();
    gen_.advance(helpers);
  }

  // Holder only: late workers no longer find the job; the next call may take the pool.
  void retire() {
    lock();
    job_.reset();
    unlock();
    busy_.store(false, std::memory_order_release);
  }

  int workers() const { return static_cast<int>(count_.load(std::memory_order_relaxed)); }

  ~Pool() {
    g_pool_gone.store(true);
    stop_.store(true);
    gen_.advance();
    for (std::thread& t : workers_)
      if (t.joinable()) t.join();
  }

 private:
  static constexpr int kMaxWorkers = 1023;

  Pool() {
#if defined(__linux__)
    pthread_atfork(nullptr, nullptr, [] { Pool::get().after_fork_in_child(); });
#endif
  }

  void lock() {
    while (job_lock_.test_and_set(std::memory_order_acquire)) cpu_relax();
  }
  void unlock() { job_lock_.clear(std::memory_order_release); }

  void ensure_workers(int helpers) {
    helpers = std::min(helpers, kMaxWorkers);
    while (static_cast<int>(workers_.size()) < helpers) {
      try {
        workers_.emplace_back([this, seen = gen_.value()] { main_loop(seen); });
      } catch (...) {
        return;  // no more threads: the calls use fewer
      }
      count_.store(workers_.size(), std::memory_order_relaxed);
    }
  }

  void main_loop(std::uint32_t seen) {
    tl_in_pool = true;
    tl_is_worker = true;
    for (;;) {
      if (gen_.value() == seen && !stop_.load(std::memory_order_relaxed)) {
        if (Load::get().looked_idle()) {
          g_spinning_workers.fetch_add(1, std::memory_order_relaxed);
          spin_until([&] { return gen_.value() != seen; }, kWorkerSpinNs);
          g_spinning_workers.fetch_sub(1, std::memory_order_relaxed);
        }
        while (gen_.value() == seen && !stop_.load(std::memory_order_relaxed)) gen_.wait(seen, 0);
      }
      if (stop_.load()) return;
      seen = gen_.value();
      lock();
      std::shared_ptr<Job> job = job_;
      unlock();
      if (!job || job->slots.fetch_sub(1, std::memory_order_acq_rel) <= 0) continue;
      if (g_jitter.load(std::memory_order_relaxed)) jitter_sleep(1);
      job->participate(job->ctx, job->work);  // claims nothing once every item is claimed
    }
  }

  // The child of fork() has only the forking thread: forget the workers (without joining or
  // detaching threads that do not exist here) and any call another thread held the pool for.
  void after_fork_in_child() {
    new std::vector<std::thread>(std::move(workers_));  // leaked on purpose: never destroyed
    workers_.clear();
    count_.store(0);
    new (&job_) std::shared_ptr<Job>();  // the parent's job, if any, is leaked likewise
    job_lock_.clear();
    busy_.store(false);
    g_spinning_workers.store(0);
  }

  std::vector<std::thread> workers_;  // the holder's (and the destructor's) only
  std::atomic<std::size_t> count_{0};
  Progress gen_;  // advanced by every call
  std::atomic_flag job_lock_ = ATOMIC_FLAG_INIT;
  std::shared_ptr<Job> job_;  // under job_lock_
  std::atomic<bool> busy_{false};
  std::atomic<bool> stop_{false};
};

// ---- parallel_for_chunks -----------------------------------------------------------------------

struct ForChunks {
  ForChunks(void (*b)(void*, std::int64_t), void* c) : body(b), ctx(c) {}
  void (*body)(void*, std::int64_t);
  void* ctx;
  // The exception of the lowest failing chunk: what the serial loop would have thrown, so the
  // error does not depend on the thread count either. Chunks above a known failure are skipped;
  // chunks below it still run, since one of them might fail first.
  std::atomic<std::int64_t> first_failed{std::numeric_limits<std::int64_t>::max()};
  std::mutex error_mutex;
  std::exception_ptr error;

  // Runs chunk c unless a lower chunk already failed; keeps the lowest failure's exception.
  void run_chunk(std::int64_t c) {
    if (c > first_failed.load(std::memory_order_relaxed)) return;
    try {
      body(ctx, c);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (c < first_failed.load(std::memory_order_relaxed)) {
        error = std::current_exception();
        first_failed.store(c, std::memory_order_relaxed);
      }
    }
  }

  static void participate(void* p, WorkItems& work) {
    auto& x = *static_cast<ForChunks*>(p);
    WorkItems::Claimer me;
    for (std::int64_t c = work.claim(me); c >= 0; c = work.claim(me)) {
      x.run_chunk(c);
      work.finish();
    }
  }
};

}  // namespace

// ---- Progress, WorkItems -----------------------------------------------------------------------

void Progress::advance(int wake) {
  word_.fetch_add(1, std::memory_order_seq_cst);
  if (wake > 0 && sleepers_.load(std::memory_order_seq_cst) != 0) futex_wake(word_, wake);
}

void Progress::wait(std::uint32_t seen, std::int64_t spin_ns) {
  if (spin_until([&] { return word_.load(std::memory_order_acquire) != seen; }, spin_ns)) return;
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  if (word_.load(std::memory_order_seq_cst) == seen) futex_wait(word_, seen);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

WorkItems::WorkItems(std::int64_t items, int lanes)
    : items_(items), lanes_(lanes > 1 && items < (std::int64_t{1} << 31) ? static_cast<int>(std::min<std::int64_t>(lanes, items)) : 1) {
  if (lanes_ > 1) {
    lane_.reset(new std::atomic<std::uint64_t>[static_cast<std::size_t>(lanes_)]);
    for (int k = 0; k < lanes_; ++k) {
      const auto front = static_cast<std::uint64_t>(items_ * k / lanes_);
      const auto back = static_cast<std::uint64_t>(items_ * (k + 1) / lanes_);
      lane_[k].store(back << 32 | front, std::memory_order_relaxed);
    }
  }
}

std::int64_t WorkItems::claim(Claimer& me) {
  std::int64_t i;
  if (lanes_ == 1) {
    i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= items_) return -1;
  } else {
    i = claim_in_ranges(me);
    if (i < 0) return -1;
  }
  if (tl_is_worker && g_jitter.load(std::memory_order_relaxed)) jitter_sleep(8);
  return i;
}

std::int64_t WorkItems::claim_in_ranges(Claimer& me) {
  if (me.lane_ < 0) me.lane_ = joined_.fetch_add(1, std::memory_order_relaxed) % lanes_;
  constexpr std::uint64_t kLow = 0xffffffffu;
  // The front of my range.
  std::atomic<std::uint64_t>& mine = lane_[me.lane_];
  for (std::uint64_t v = mine.load(std::memory_order_relaxed); (v & kLow) < (v >> 32);) {
    if (mine.compare_exchange_weak(v, v + 1, std::memory_order_relaxed)) return static_cast<std::int64_t>(v & kLow);
  }
  // Empty: the upper half of the first non-empty range after mine becomes my range.
  for (int d = 1; d < lanes_; ++d) {
    std::atomic<std::uint64_t>& victim = lane_[(me.lane_ + d) % lanes_];
    for (std::uint64_t v = victim.load(std::memory_order_relaxed); (v & kLow) < (v >> 32);) {
      const std::uint64_t front = v & kLow, back = v >> 32, mid = front + (back - front) / 2;
      if (victim.compare_exchange_weak(v, mid << 32 | front, std::memory_order_relaxed)) {
        // [mid, back) is mine now; mid I take at once. Only thieves that find my range
        // non-empty touch it, and it was empty until this store.
        mine.store(back << 32 | (mid + 1), std::memory_order_relaxed);
        return static_cast<std::int64_t>(mid);
      }
    }
  }
  return -1;  // every item is claimed (or held by a thief that will run it)
}

void WorkItems::finish(std::int64_t count) {
  if (done_.fetch_add(count, std::memory_order_acq_rel) + count == items_) finished_.advance();
}

void WorkItems::wait_all_finished() {
  const auto all = [&] { return done_.load(std::memory_order_acquire) >= items_; };
  while (!all()) {
    const std::uint32_t seen = finished_.value();
    if (all()) break;
    finished_.wait(seen, wait_spin_ns());
  }
}

// ---- the entry points --------------------------------------------------------------------------

std::int64_t wait_spin_ns() { return Load::get().looked_idle() ? kItemWaitSpinNs : 0; }

// $FOLDKIT_CPU_THREADS=N (N >= 1): every large call plans for N threads whatever the load (for a
// dedicated machine, or a process whose own OpenMP team spins and would read as load). Read once.
int env_threads() {
  static const int threads = [] {
    const char* v = std::getenv("FOLDKIT_CPU_THREADS");
    const long n = v ? std::strtol(v, nullptr, 10) : 0;
    return n >= 1 ? static_cast<int>(std::min<long>(n, 1024)) : 0;
  }();
  return threads;
}

int pick_threads(std::int64_t items) {
  if (items <= 1) return 1;
  int forced = g_forced_threads.load(std::memory_order_relaxed);
  if (forced <= 0 && !tl_in_pool) forced = env_threads();
  if (forced > 0) return static_cast<int>(std::min<std::int64_t>(forced, items));
  // Inside an active OpenMP region the caller's team already has the cores; in a pool worker or
  // a call's own items, the pool is taken.
  if (tl_in_pool || omp_in_parallel()) return 1;
  const int cap = static_cast<int>(std::min<std::int64_t>(omp_get_max_threads(), items));
  if (cap <= 1) return 1;
  return std::min(cap, 1 + Load::get().free_cores());
}

ThreadLease::ThreadLease(int threads) {
  if (threads > 1 && !tl_in_pool && !g_pool_gone.load(std::memory_order_relaxed) && Pool::get().try_acquire()) {
    threads_ = threads;
    held_ = true;
  }
}

ThreadLease::~ThreadLease() {
  if (held_) Pool::get().retire();
}

void ThreadLease::run(std::int64_t items, bool in_order, Participant participate, void* ctx) {
  if (items <= 0) return;
  const int helpers = static_cast<int>(std::min<std::int64_t>(threads_ - 1, items - 1));
  tl_last_call = {std::max(helpers, 0) + 1, false};
  if (helpers <= 0) {
    WorkItems work(items);  // the caller alone: it claims and finishes every item, in order
    participate(ctx, work);
    return;
  }
  auto job = std::make_shared<Job>(items, in_order ? 1 : helpers + 1, participate, ctx, helpers);
  Pool& pool = Pool::get();
  pool.publish(job, helpers);
  tl_in_pool = true;
  participate(ctx, job->work);
  tl_in_pool = false;
  job->work.wait_all_finished();
  pool.retire();  // late workers no longer find the job
  held_ = false;
}

void set_forced_threads_for_testing(int threads) { g_forced_threads.store(std::max(0, threads)); }
void set_jitter_for_testing(bool on) { g_jitter.store(on); }
int pool_workers_for_testing() { return g_pool_gone.load() ? 0 : Pool::get().workers(); }
CallShape last_call_shape_for_testing() { return tl_last_call; }

static int openmp_team_threads(int threads);

void wake_threads(bool reduction) {
  // One item per thread; each participant holds its item until every item is claimed, i.e.
  // until every thread has come (or the deadline passed: then the caller claims the rest).
  struct Wake {
    std::int64_t deadline;
    static void participate(void* p, WorkItems& work) {
      const auto& x = *static_cast<const Wake*>(p);
      WorkItems::Claimer me;
      for (std::int64_t i = work.claim(me); i >= 0; i = work.claim(me)) {
        spin_until([&] { return !work.unclaimed_below(work.items()) || now_ns() > x.deadline; }, 20'000'000);
        work.finish();
      }
    }
  } x{now_ns() + 20'000'000};
  const int threads = pick_threads(std::numeric_limits<int>::max());
  if (const int team = reduction ? openmp_team_threads(threads) : 0; team > 1) {  // the next reduction's team
#pragma omp parallel num_threads(team)
    { (void)omp_get_thread_num(); }
    return;
  }
  ThreadLease lease(threads);
  lease.run(lease.threads(), true, &Wake::participate, &x);
}

// A mostly idle machine: reductions on an OpenMP team with a static schedule, as before the
// pool, sized to the cores that the last three load readings all left free, so that no member
// waits behind another process for a time slice. On the H100 machine's idle 16-core host it
// reduced 2^20 f32 in 52-53 us against the pool's 61-65 (read ceiling 47-55; 2026-11-26; why
// the pool costs ~10 us a call there was not found). With fewer than half the cores free (a
// busy machine, where a team would lose time slices): the pool. 0: use the pool.
static int openmp_team_threads(int threads) {
  if (g_forced_threads.load(std::memory_order_relaxed) > 0 || env_threads() > 0) return 0;
  const Load& load = Load::get();
  const int sure = 1 + load.surely_free_cores();
  if (2 * sure <= load.cores()) return 0;
  return std::min(threads, sure);
}

static void openmp_for_chunks(std::int64_t chunks, int threads, ForChunks& x) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t c = 0; c < chunks; ++c) x.run_chunk(c);
}

void parallel_for_chunks(std::int64_t chunks, void (*body)(void* ctx, std::int64_t chunk), void* ctx) {
  if (chunks <= 0) return;
  const int threads = pick_threads(chunks);
  if (threads <= 1) {  // exceptions propagate from the lowest failing chunk, as below
    tl_last_call = {1, false};
    for (std::int64_t c = 0; c < chunks; ++c) body(ctx, c);
    return;
  }
  ForChunks x{body, ctx};
  if (const int team = openmp_team_threads(threads); team > 1) {
    tl_last_call = {team, true};
    openmp_for_chunks(chunks, team, x);
  } else ThreadLease(threads).run(chunks, false, &ForChunks::participate, &x);
  if (x.error) std::rethrow_exception(x.error);
}

}  // namespace foldkit::cpu::detail
