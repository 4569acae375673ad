// A fixed pool of worker threads and a bounded queue of ordered results: the caller submits
// jobs in file order and takes results back in the same order, so chunks are encoded in
// parallel while reading and writing stay sequential (and the output identical for every
// thread count).
#pragma once
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <system_error>
#include <type_traits>
#include <thread>
#include <vector>

#include "bytes.hpp"
#include "resident_threads.hpp"

namespace stz {

class ThreadPool {
public:
    // Starts a thread; replaceable so that tests can make the k-th start fail as the system would.
    // Without one, workers are resident threads (resident_threads.hpp), parked between pools.
    using Spawn = std::function<std::thread(std::function<void()>)>;

    // Up to `n` workers, started when a job finds none idle: a run whose in-flight work is
    // held down by a memory budget starts only as many threads as it uses (each thread's
    // malloc arena keeps what it freed, so idle threads would cost memory too).
    explicit ThreadPool(unsigned n, Spawn spawn = {}) : max_(std::max(1u, n)), spawn_(std::move(spawn)) {}
    // No workers: each job runs at once on the submitting thread (its future is ready when
    // submit returns). For small inputs a worker would start cold, with its own malloc arena's
    // fresh pages and per-thread codec tables and contexts built again, for less work than
    // that costs; the calling thread has them warm from its earlier calls. (OrderedQueue, the
    // engine's only user, runs such jobs itself and keeps their results without a future.)
    struct Inline {};
    explicit ThreadPool(Inline) : max_(0) {}
    ~ThreadPool() { stop_and_join(); }
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // Throws Error when a needed thread cannot be started (process limit, -T 100000); the
    // job is not queued, and the workers already started finish their jobs and are joined
    // by the destructor, so nothing hangs or aborts.
    template <class F> auto submit(F f) -> std::future<decltype(f())> {
        using R = decltype(f());
        auto result = std::make_shared<std::promise<R>>();
        auto fn = std::make_shared<F>(std::move(f));
        auto fut = result->get_future();
        if (max_ == 0) {
            try {
                if constexpr (std::is_void_v<R>) {
                    (*fn)();
                    result->set_value();
                } else {
                    result->set_value((*fn)());
                }
            } catch (...) {
                result->set_exception(std::current_exception());
            }
            return fut;
        }
        // The worker counts itself idle before its result is visible, so that the caller's
        // next job (submitted on seeing the result) finds it instead of starting another.
        auto job = [this, result, fn] {
            bool idle = false;
            try {
                if constexpr (std::is_void_v<R>) {
                    (*fn)();
                    now_idle(), idle = true;
                    result->set_value();
                } else {
                    R r = (*fn)();
                    now_idle(), idle = true;
                    result->set_value(std::move(r));
                }
            } catch (...) {
                if (!idle) now_idle();
                result->set_exception(std::current_exception());
            }
        };
        {
            std::lock_guard<std::mutex> lk(m_);
            jobs_.emplace_back(std::move(job));
            if (idle_ < jobs_.size() && workers_.size() < max_) start_worker();
        }
        cv_.notify_one();
        return fut;
    }
    bool runs_jobs_inline() const { return max_ == 0; }
    size_t started() const {
        std::lock_guard<std::mutex> lk(m_);
        return workers_.size();
    }

private:
    void start_worker() {  // with m_ held
        try {
            auto loop = [this] { work(); };
            // Room first, so that the push_back below cannot reallocate (and throw) with a worker started.
            if (workers_.size() == workers_.capacity()) workers_.reserve(2 * workers_.size() + 1);
            if (spawn_) workers_.push_back({spawn_(loop), {}});
            else workers_.push_back({{}, run_on_resident_thread(loop)});
        } catch (const std::system_error& e) {
            jobs_.pop_back();
            throw Error("cannot start thread " + std::to_string(workers_.size() + 1) + " of " + std::to_string(max_) +
                        ": " + e.what());
        } catch (...) {
            jobs_.pop_back();
            throw;
        }
    }
    void now_idle() {
        std::lock_guard<std::mutex> lk(m_);
        ++idle_;
    }
    void work() {
        std::unique_lock<std::mutex> lk(m_);
        ++idle_;
        for (;;) {
            cv_.wait(lk, [this] { return stop_ || !jobs_.empty(); });
            if (stop_ && jobs_.empty()) return;
            std::function<void()> job = std::move(jobs_.front());
            jobs_.pop_front();
            --idle_;
            lk.unlock();
            job();  // counts this worker idle again (now_idle) before its result is visible
            job = nullptr;
            lk.lock();
        }
    }
    void stop_and_join() {
        {
            std::lock_guard<std::mutex> lk(m_);
            stop_ = true;
        }
        cv_.notify_all();
        for (Worker& w : workers_) {
            if (w.thread.joinable()) w.thread.join();
            if (w.done.valid()) w.done.wait();
        }
    }

    // A thread of its own (from Spawn), or a resident thread's promise to finish the loop.
    struct Worker {
        std::thread thread;
        std::future<void> done;
    };

    const unsigned max_;  // 0: Inline
    Spawn spawn_;
    std::vector<Worker> workers_;
    std::deque<std::function<void()>> jobs_;
    size_t idle_ = 0;  // workers waiting for a job
    mutable std::mutex m_;
    std::condition_variable cv_;
    bool stop_ = false;
};

// Jobs run on the pool, results are retired in submission order. At most `max_jobs` jobs
// are in flight and at most `max_cost` of their declared costs (bytes of memory they may
// hold); a job costing more than `max_cost` on its own runs alone. Retiring happens on the
// caller's thread (it writes the output), so the output is the same for every thread count.
template <class Result, class Tag> class OrderedQueue {
public:
    using Retire = std::function<void(const Tag&, Result&&)>;
    OrderedQueue(ThreadPool& pool, size_t max_jobs, uint64_t max_cost, Retire retire)
        : pool_(pool), max_jobs_(std::max<size_t>(1, max_jobs)), max_cost_(max_cost), retire_(std::move(retire)) {}

    // Retires results until a job of `cost` may start (call before allocating its input).
    void make_room(uint64_t cost) {
        while (!q_.empty() && (q_.size() >= max_jobs_ || cost > max_cost_ - std::min(max_cost_, cost_))) retire_one();
    }
    template <class F> void submit(Tag tag, uint64_t cost, F job) {
        make_room(cost);
        cost_ += cost;
        peak_cost_ = std::max(peak_cost_, cost_);
        if (!pool_.runs_jobs_inline()) {
            q_.push_back({std::move(tag), cost, pool_.submit(std::move(job)), {}, {}});
            return;
        }
        // Run here and keep the result: a promise and its future per chunk cost a futex call
        // each (its once-flag's wake-up), 1 us, which on a small file's many chunks adds up.
        Entry e{std::move(tag), cost, {}, {}, {}};
        try {
            e.ready.emplace(job());
        } catch (...) {
            e.failed = std::current_exception();
        }
        q_.push_back(std::move(e));
    }
    void drain() {
        while (!q_.empty()) retire_one();
    }
    uint64_t peak_cost() const { return peak_cost_; }  // the most ever in flight (tests)

private:
    struct Entry {
        Tag tag;
        uint64_t cost;
        std::future<Result> result;     // from the pool's workers
        std::optional<Result> ready;    // or, run inline, the result itself
        std::exception_ptr failed;      // or what it threw
    };
    void retire_one() {
        Entry e = std::move(q_.front());
        q_.pop_front();
        cost_ -= e.cost;
        if (e.failed) std::rethrow_exception(e.failed);
        retire_(e.tag, e.ready ? std::move(*e.ready) : e.result.get());
    }
    ThreadPool& pool_;
    size_t max_jobs_;
    uint64_t max_cost_;
    Retire retire_;
    std::deque<Entry> q_;
    uint64_t cost_ = 0, peak_cost_ = 0;
};

}  // namespace stz
