#include "parallel.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::chip {
namespace {

// A short busy wait between polls (the CPU's spin-loop hint).
void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Polls (about 0.1 ms) before a thread sleeps. Waking a sleeping thread can
// take longer than a whole record (a virtual CPU that halted must be
// scheduled again), and a record's batches, and the records themselves,
// follow one another within microseconds. Longer polls were faster still on
// an idle machine but slower when another process wants the core.
constexpr int kSpins = 4000;
// A poll yields its core now and then: nearly free when the machine is idle,
// and when it is not, the thread being waited for may get the core.
constexpr int kYieldEvery = 64;

// Poll i's wait.
void pause(int i) {
  if (i % kYieldEvery == kYieldEvery - 1)
    std::this_thread::yield();
  else
    relax();
}

// One open parallelFor: its caller owns the slot (taken) from start to end.
struct Batch {
  std::atomic<bool> taken{false}, open{false};
  const std::function<void(size_t)> *f = nullptr; // set before open
  size_t jobs = 0;
  std::atomic<size_t> next{0}, finished{0};
  std::atomic<unsigned> active{0}; // helpers inside the batch
};

// Workers, and engines waiting in waitUntil, take job indices from the open
// batches; a batch's caller takes part too and waits for its jobs, not for
// every worker: a worker still asleep when they are done (its core busy
// elsewhere) skips the batch, so a late wake-up costs nothing. Every event
// (a batch opens, a side task is posted or ends, an engine makes progress)
// bumps generation_; threads poll it a while before they sleep, and only
// sleeping threads are woken (sleepers_ and generation_ are sequentially
// consistent, so a sleeper either sees the new generation or is notified).
class Pool {
public:
  explicit Pool(unsigned threads) {
    for (unsigned i = 1; i < threads; ++i)
      workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    stop_ = true;
    signal();
    for (std::thread &t : workers_)
      t.join();
  }

  // False when both batch slots are taken: the caller runs the jobs itself.
  bool run(size_t jobs, const std::function<void(size_t)> &f) {
    Batch *b = nullptr;
    for (Batch &slot : batches_) {
      bool free = false;
      if (slot.taken.compare_exchange_strong(free, true)) {
        b = &slot;
        break;
      }
    }
    if (!b)
      return false;
    b->f = &f;
    b->jobs = jobs;
    b->next = 0;
    b->finished = 0;
    b->open = true;
    signal();
    drain(*b);
    for (int i = 0; i < kSpins && b->finished.load() != jobs; ++i)
      pause(i);
    if (b->finished.load() != jobs) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return b->finished.load() == jobs; });
    }
    // Helpers that saw the batch open may still read f and next: wait for
    // them to leave (a few instructions after their last job).
    b->open = false;
    for (int i = 0; b->active.load() != 0; ++i)
      i < kSpins ? relax() : std::this_thread::yield();
    b->f = nullptr;
    b->taken = false;
    return true;
  }

  bool runBeside(const std::function<void()> &main, const std::function<void()> &side) {
    int idle = kIdle;
    if (workers_.empty() || !side_state_.compare_exchange_strong(idle, kReserved))
      return false;
    side_ = &side;
    side_state_ = kPosted;
    signal();
    main();
    waitUntil([this] { return side_state_.load() == kDone; });
    side_ = nullptr;
    side_state_ = kIdle;
    return true;
  }

  void waitUntil(const std::function<bool()> &ready) {
    for (;;) {
      uint64_t seen = generation_.load();
      if (ready())
        return;
      if (help())
        continue;
      if (!pollFor(seen))
        sleepUnless(seen);
    }
  }

  void signal() {
    generation_.fetch_add(1);
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_all();
    }
  }

private:
  enum { kIdle, kReserved, kPosted, kRunning, kDone };

  // Runs jobs of b until none are left; true if it ran any.
  bool drain(Batch &b) {
    bool ran = false;
    for (size_t i; (i = b.next.fetch_add(1)) < b.jobs;) {
      (*b.f)(i);
      ran = true;
      if (b.finished.fetch_add(1) + 1 == b.jobs) {
        std::lock_guard<std::mutex> lock(mutex_); // the caller may be about to sleep
        done_.notify_all();
      }
    }
    return ran;
  }
  // Runs jobs of any open batch; true if it ran any.
  bool help() {
    bool ran = false;
    for (Batch &b : batches_) {
      if (!b.open.load())
        continue;
      b.active.fetch_add(1);
      if (b.open.load())
        ran |= drain(b);
      b.active.fetch_sub(1);
    }
    return ran;
  }
  // Polls until the generation is no longer `seen`; false if it still is.
  bool pollFor(uint64_t seen) {
    for (int i = 0; i < kSpins; ++i) {
      if (generation_.load() != seen)
        return true;
      pause(i);
    }
    return false;
  }
  void sleepUnless(uint64_t seen) {
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1);
    wake_.wait(lock, [&] { return generation_.load() != seen; });
    sleepers_.fetch_sub(1);
  }
  void work() {
    for (;;) {
      uint64_t seen = generation_.load();
      if (stop_)
        return;
      int posted = kPosted;
      if (side_state_.compare_exchange_strong(posted, kRunning)) {
        (*side_)();
        side_state_ = kDone;
        signal();
        continue;
      }
      if (help())
        continue;
      if (!pollFor(seen))
        sleepUnless(seen);
    }
  }

  std::vector<std::thread> workers_;
  Batch batches_[2]; // one per engine
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<unsigned> sleepers_{0}; // threads waiting on wake_
  std::atomic<bool> stop_{false};
  std::atomic<int> side_state_{kIdle};
  const std::function<void()> *side_ = nullptr; // set before kPosted
};

unsigned defaultThreads() {
  if (const char *env = std::getenv("KILN_CMODEL_THREADS")) {
    long n = std::strtol(env, nullptr, 10);
    if (n >= 1 && n <= 256)
      return unsigned(n);
  }
  unsigned cores = std::thread::hardware_concurrency();
  return cores ? cores : 1u;
}

// The thread count and the pool are read on every record: atomics, set
// under poolMutex.
std::mutex poolMutex;
std::unique_ptr<Pool> pool;
std::atomic<Pool *> current{nullptr};
std::atomic<unsigned> threads{0}; // 0: not read yet

unsigned threadsLocked() {
  if (threads.load() == 0)
    threads = defaultThreads();
  return threads.load();
}

// The pool, made on first use; nullptr with one thread.
Pool *thePool() {
  if (Pool *p = current.load())
    return p;
  if (threads.load() == 1)
    return nullptr;
  std::lock_guard<std::mutex> lock(poolMutex);
  if (threadsLocked() > 1 && !pool) {
    pool = std::make_unique<Pool>(threads.load());
    current = pool.get();
  }
  return pool.get();
}

} // namespace

unsigned cmodelThreads() {
  if (unsigned n = threads.load())
    return n;
  std::lock_guard<std::mutex> lock(poolMutex);
  return threadsLocked();
}

void setCmodelThreads(unsigned n) {
  std::lock_guard<std::mutex> lock(poolMutex);
  current = nullptr;
  pool.reset();
  threads = n ? n : 1;
}

void parallelFor(size_t jobs, const std::function<void(size_t)> &f) {
  Pool *p = jobs > 1 ? thePool() : nullptr;
  if (p && p->run(jobs, f))
    return;
  for (size_t i = 0; i < jobs; ++i)
    f(i);
}

bool runBeside(const std::function<void()> &main, const std::function<void()> &side) {
  Pool *p = thePool();
  return p && p->runBeside(main, side);
}

void waitUntil(const std::function<bool()> &ready) {
  if (Pool *p = thePool())
    return p->waitUntil(ready);
  while (!ready())
    std::this_thread::yield();
}

void notifyProgress() {
  if (Pool *p = thePool())
    p->signal();
}

} // namespace kiln::chip
