#pragma once
// The worker threads the evaluator's kernels share. parallel_for splits [0, count) into contiguous
// ranges, one per thread, the calling thread taking the first. The kernels that use it compute
// each output from its own inputs in a fixed order, so their results are the same, bit for bit,
// on any number of threads.
//
// One parallel_for runs at a time on a pool. A call made while the pool is busy (from another
// thread, or from inside a range) runs its whole range on the calling thread, which gives the same
// results and cannot deadlock.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <type_traits>
#include <mutex>
#include <thread>
#include <vector>

namespace mase {

class thread_pool {
public:
  // A pool of `threads` threads in all: the caller of parallel_for and threads − 1 workers.
  explicit thread_pool(std::size_t threads) {
    for (std::size_t i = 1; i < std::max<std::size_t>(threads, 1); ++i)
      workers_.emplace_back([this, i] { work(i); });
  }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  std::size_t size() const noexcept { return workers_.size() + 1; }

  // The pool every evaluator uses: one thread per core.
  static thread_pool& shared() {
    static thread_pool pool(std::max(1u, std::thread::hardware_concurrency()));
    return pool;
  }

  // Calls body(begin, end, part) for `parts` = min(threads, size(), count) contiguous ranges that
  // split [0, count) as evenly as possible (part p gets [p·count/parts, (p+1)·count/parts)), and
  // returns when all have run. The first exception a range throws is rethrown here.
  template <class Body>
  void parallel_for(std::size_t count, std::size_t threads, Body&& body) {
    const std::size_t parts = std::min({threads, size(), count});
    std::unique_lock run_lock(running_, std::try_to_lock);
    if (parts <= 1 || !run_lock.owns_lock()) {
      if (count > 0) body(std::size_t{0}, count, std::size_t{0});
      return;
    }
    using Fn = std::remove_reference_t<Body>;  // const for a const lambda
    job_ = {static_cast<const void*>(std::addressof(body)), [](const void* b, std::size_t begin, std::size_t end,
                                                               std::size_t part) {
              (*static_cast<Fn*>(const_cast<void*>(b)))(begin, end, part);
            }};
    count_ = count;
    parts_ = parts;
    error_ = nullptr;
    // Every worker reports, the ones this call does not need too, so that none still reads this
    // call's job when the next call writes its own.
    pending_.store(workers_.size(), std::memory_order_relaxed);
    {
      const std::lock_guard lock(mutex_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    run_part(0);
    if (!spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock lock(mutex_);
      done_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
    }
    if (error_) std::rethrow_exception(error_);
  }

  // parallel_for on the shared pool, except that work for one thread runs on the caller without
  // touching the pool, which starts (and allocates) its threads on first use: a kernel run on one
  // thread allocates nothing.
  template <class Body>
  static void shared_for(std::size_t count, std::size_t threads, Body&& body) {
    if (std::min(threads, count) <= 1) {
      if (count > 0) body(std::size_t{0}, count, std::size_t{0});
      return;
    }
    shared().parallel_for(count, threads, body);
  }
  // shared_for over element ranges of at least `grain` elements (fewer threads for small counts,
  // where waking another thread would cost more than it saves).
  template <class Body>
  static void shared_chunks(std::size_t count, std::size_t threads, std::size_t grain, Body&& body) {
    shared_for(count, std::min(threads, useful_threads(count, grain)), body);
  }

private:
  static std::size_t useful_threads(std::size_t count, std::size_t grain) noexcept {
    return std::max<std::size_t>(1, count / std::max<std::size_t>(grain, 1));
  }

  struct job {
    const void* body = nullptr;
    void (*call)(const void*, std::size_t, std::size_t, std::size_t) = nullptr;
  };

  // Waking a sleeping thread costs tens of microseconds (more in a virtual machine), as much as
  // a whole small product: between the calls of one evaluator run the threads spin for a while
  // before they sleep, as OpenMP runtimes do.
  template <class Ready>
  static bool spin_until(Ready&& ready) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    for (unsigned i = 1;; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if (i % 256 == 0 && std::chrono::steady_clock::now() > deadline) return false;
    }
  }

  void run_part(std::size_t part) {
    const std::size_t begin = part * count_ / parts_, end = (part + 1) * count_ / parts_;
    try {
      if (begin < end) job_.call(job_.body, begin, end, part);
    } catch (...) {
      const std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }

  void work(std::size_t index) {
    std::size_t seen = 0;
    for (;;) {
      const auto changed = [&] { return generation_.load(std::memory_order_acquire) != seen; };
      if (!spin_until(changed)) {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || changed(); });
        if (stopping_) return;
      }
      seen = generation_.load(std::memory_order_acquire);
      if (index < parts_) run_part(index);  // else this call needs fewer threads
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        const std::lock_guard lock(mutex_);  // the caller may be between its check and its wait
        done_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex running_;  // held by the parallel_for in progress
  std::mutex mutex_;    // for sleeping and waking, and error_
  std::condition_variable wake_, done_;
  // Written by parallel_for before it publishes a new generation, read by the workers after.
  job job_{};
  std::size_t count_ = 0, parts_ = 0;
  std::exception_ptr error_;
  std::atomic<std::size_t> generation_{0}, pending_{0};
  bool stopping_ = false;
};

}  // namespace mase
