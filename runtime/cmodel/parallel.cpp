#include "parallel.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::cmodel {
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

// Workers wait for a batch, take job indices from a shared counter, and the
// caller takes part too. One batch runs at a time (the cmodel executes one
// command at a time; a second caller waits). The caller waits for the jobs,
// not for every worker: a worker still asleep when they are done (its core
// busy elsewhere) skips the batch, so a late wake-up costs nothing. Workers
// and the caller poll a while before they sleep, and the caller wakes only
// sleeping workers.
class Pool {
public:
  explicit Pool(unsigned threads) {
    for (unsigned i = 1; i < threads; ++i)
      workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (std::thread &t : workers_)
      t.join();
  }

  void run(size_t jobs, const std::function<void(size_t)> &f) {
    std::lock_guard<std::mutex> batch(batch_mutex_);
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      f_ = &f;
      jobs_ = jobs;
      next_ = 0;
      finished_ = 0;
      open_ = true;
      ++generation_;
      wake = sleepers_ > 0;
    }
    if (wake)
      wake_.notify_all();
    drain();
    for (int i = 0; i < kSpins && finished_.load() != jobs; ++i)
      relax();
    std::unique_lock<std::mutex> lock(mutex_);
    // Workers inside the batch still read f_ and next_: wait for them too.
    done_.wait(lock, [this] { return finished_ == jobs_ && active_ == 0; });
    open_ = false;
    f_ = nullptr;
  }

private:
  void drain() {
    for (size_t i; (i = next_.fetch_add(1)) < jobs_;) {
      (*f_)(i);
      finished_.fetch_add(1);
    }
  }
  void work() {
    uint64_t seen = 0;
    for (;;) {
      for (int i = 0; i < kSpins && generation_.load() == seen; ++i)
        relax();
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleepers_;
        wake_.wait(lock, [&] { return generation_ != seen; });
        --sleepers_;
        if (stop_)
          return;
        seen = generation_;
        if (!open_)
          continue; // that batch is over
        ++active_;
      }
      drain();
      std::lock_guard<std::mutex> lock(mutex_);
      --active_;
      done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_, batch_mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(size_t)> *f_ = nullptr;
  size_t jobs_ = 0;
  std::atomic<size_t> next_{0}, finished_{0};
  std::atomic<uint64_t> generation_{0}; // changed under mutex_, polled without it
  size_t active_ = 0;                   // workers inside the open batch
  size_t sleepers_ = 0;                 // workers waiting on wake_
  bool open_ = false, stop_ = false;
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

std::mutex poolMutex;
std::unique_ptr<Pool> pool;
unsigned threads = 0; // 0: not read yet

} // namespace

unsigned cmodelThreads() {
  std::lock_guard<std::mutex> lock(poolMutex);
  if (threads == 0)
    threads = defaultThreads();
  return threads;
}

void setCmodelThreads(unsigned n) {
  std::lock_guard<std::mutex> lock(poolMutex);
  pool.reset();
  threads = n ? n : 1;
}

void parallelFor(size_t jobs, const std::function<void(size_t)> &f) {
  Pool *p = nullptr;
  if (jobs > 1 && cmodelThreads() > 1) {
    std::lock_guard<std::mutex> lock(poolMutex);
    if (!pool)
      pool = std::make_unique<Pool>(threads);
    p = pool.get();
  }
  if (!p) {
    for (size_t i = 0; i < jobs; ++i)
      f(i);
    return;
  }
  p->run(jobs, f);
}

} // namespace kiln::cmodel
