// Resident worker threads (base/resident_threads.hpp): a pool's workers outlive it, parked, and
// the next pool's workers are those same threads; at most one per core stays; a forked child
// starts with none and its pools still run.
#include <catch2/catch.hpp>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "base/resident_threads.hpp"
#include "base/thread_pool.hpp"

using namespace stz;

namespace {

// The threads a pool of `n` workers ran its jobs on, with every worker busy at once.
std::set<std::thread::id> pool_threads(unsigned n) {
    std::set<std::thread::id> ids;
    std::mutex m;
    std::atomic<unsigned> arrived{0};
    ThreadPool pool(n);
    std::vector<std::future<void>> jobs;
    for (unsigned i = 0; i < n; ++i)
        jobs.push_back(pool.submit([&] {
            {
                std::lock_guard<std::mutex> lk(m);
                ids.insert(std::this_thread::get_id());
            }
            ++arrived;
            while (arrived.load() < n) std::this_thread::yield();  // each job holds its worker
        }));
    for (auto& j : jobs) j.get();
    CHECK(pool.started() == n);
    return ids;
}

}  // namespace

TEST_CASE("resident threads: the next pool's worker is the thread the last pool parked", "[base][threads]") {
    const std::set<std::thread::id> first = pool_threads(1);
    REQUIRE(first.size() == 1);
    CHECK(*first.begin() != std::this_thread::get_id());
    CHECK(resident_threads_parked() >= 1);
    const std::set<std::thread::id> second = pool_threads(1);
    CHECK(second == first);  // the same thread, with its thread-local caches
}

TEST_CASE("resident threads: a thread-local value set in one pool's job is there in the next pool's", "[base][threads]") {
    thread_local int calls = 0;
    int seen = 0;
    for (int round = 0; round < 3; ++round) {
        ThreadPool pool(1);
        seen = pool.submit([] { return ++calls; }).get();
    }
    CHECK(seen == 3);
}

TEST_CASE("resident threads: at most one parked thread per core", "[base][threads]") {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const std::set<std::thread::id> ids = pool_threads(cores + 2);
    CHECK(ids.size() == cores + 2);
    CHECK(resident_threads_parked() <= cores);
}

TEST_CASE("resident threads: a forked child starts with none parked and its pools run", "[base][threads]") {
    pool_threads(2);  // the parent has parked threads, which the child does not get
    REQUIRE(resident_threads_parked() >= 1);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        alarm(30);  // a pool waiting for a thread that is not there would hang: end the child instead
        bool ok = resident_threads_parked() == 0;
        for (int round = 0; round < 3; ++round) {
            ThreadPool pool(2);
            ok = ok && pool.submit([] { return 7; }).get() == 7;
        }
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
