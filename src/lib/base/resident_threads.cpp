#include "resident_threads.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <pthread.h>

namespace stz {

namespace {

// A thread's mailbox: the task it is given and the promise it keeps when the task is done.
struct Mailbox {
    std::condition_variable cv;
    std::function<void()> task;
    std::promise<void> done;
};

class Residents {
public:
    // `before_fork`: in a forked child, the parent's set, left as it was (kept reachable, not leaked).
    explicit Residents(Residents* before_fork = nullptr) : before_fork_(before_fork) {}

    std::future<void> run(std::function<void()> task) {
        {
            std::lock_guard<std::mutex> lk(m_);
            if (!parked_.empty()) {
                // The thread parked last: its caches are the warmest.
                std::shared_ptr<Mailbox> box = std::move(parked_.back());
                parked_.pop_back();
                box->task = std::move(task);
                box->done = std::promise<void>();
                std::future<void> f = box->done.get_future();
                box->cv.notify_one();
                return f;
            }
        }
        auto box = std::make_shared<Mailbox>();
        box->task = std::move(task);
        std::future<void> f = box->done.get_future();
        std::thread([this, box] { serve(box); }).detach();  // std::system_error when refused
        return f;
    }

    size_t parked() {
        std::lock_guard<std::mutex> lk(m_);
        return parked_.size();
    }

private:
    void serve(const std::shared_ptr<Mailbox>& box) {
        std::unique_lock<std::mutex> lk(m_);
        for (;;) {
            std::function<void()> task = std::move(box->task);
            box->task = nullptr;
            std::promise<void> done = std::move(box->done);
            lk.unlock();
            std::exception_ptr failed;
            try {
                task();
            } catch (...) {
                failed = std::current_exception();
            }
            task = nullptr;  // what it holds goes before its owner hears it is done
            lk.lock();
            // Parked before the owner hears: its next pool, started at once, finds this thread.
            const bool stays = parked_.size() < limit_;
            if (stays) parked_.push_back(box);
            if (failed) done.set_exception(failed);
            else done.set_value();
            if (!stays) return;
            if (!box->cv.wait_for(lk, kResidentIdle, [&] { return static_cast<bool>(box->task); })) {
                parked_.erase(std::find(parked_.begin(), parked_.end(), box));
                return;  // no work for a while: the thread and its thread-local state go
            }
        }
    }

    std::mutex m_;
    std::vector<std::shared_ptr<Mailbox>> parked_;
    const size_t limit_ = std::max(1u, std::thread::hardware_concurrency());
    [[maybe_unused]] Residents* const before_fork_;  // held only to stay reachable
};

// Never destroyed: a parked thread may still wait on it while the process exits.
std::atomic<Residents*> residents{nullptr};

Residents& the_residents() {
    static std::once_flag once;
    std::call_once(once, [] {
        residents.store(new Residents);
        // A forked child has only the thread that forked: the parked ones are not there to
        // take work, so it starts from an empty set (the parent's, with a mutex that may have
        // been held at the fork, is left alone).
        pthread_atfork(nullptr, nullptr, [] { residents.store(new Residents(residents.load())); });
    });
    return *residents.load();
}

}  // namespace

std::future<void> run_on_resident_thread(std::function<void()> task) { return the_residents().run(std::move(task)); }

size_t resident_threads_parked() { return the_residents().parked(); }

}  // namespace stz
