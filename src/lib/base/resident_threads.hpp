// Worker threads that outlive the pool that started them. A call of the library (a C API
// compression or decompression, a server's cache save or restore) builds a pool for its
// chunks; with a thread of its own per pool, every call started cold threads: a new malloc
// arena whose first writes fault pages in, and per-thread codec state (htscodecs' 4 MiB
// order-1 tables, zero-filled on a thread's first use; zstd contexts; estimate tables) built
// again. Two threads then decompressed the corpus more slowly than one. A worker whose pool is
// done parks here instead and the next pool's worker is one of them, its caches warm.
//
// At most one parked thread per core, each leaving after kResidentIdle without work (its
// thread-local state freed with it). A child process after fork() starts with none.
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <future>

namespace stz {

inline constexpr std::chrono::milliseconds kResidentIdle{10000};

// Runs `task` on a parked thread, else on a new one; the future is ready once `task` has
// returned and been destroyed. Throws std::system_error when a new thread cannot start.
std::future<void> run_on_resident_thread(std::function<void()> task);

// Threads parked now (tests, diagnostics).
size_t resident_threads_parked();

}  // namespace stz
