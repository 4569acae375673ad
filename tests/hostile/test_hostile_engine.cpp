// Hostile inputs for the engine and the parsers (expansion, threads, memory, parse time and
// geometry bounds). Every input is generated here. Work that used to hang or blow up runs in
// a child process with a wall-clock bound far above what the fixed code needs (a hang check,
// not a timing assertion) and, where memory is the point, its peak RSS is read back from the
// kernel.
#include <catch2/catch.hpp>
#include <csignal>
#include <functional>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "base/large_buffers.hpp"
#include "hostile.hpp"
#include "synth.hpp"
#include "../test_util.hpp"
#include "base/thread_pool.hpp"

using namespace stz;
using namespace stztest;
using namespace stzhostile;

// AddressSanitizer reserves terabytes of shadow memory (an address-space limit breaks it)
// and keeps freed memory in quarantine (peak RSS says nothing about the engine).
constexpr bool kPlainMemory = !kAddressSanitizer;  // base/large_buffers.hpp

namespace {

struct ChildResult {
    bool finished = false;  // false: killed at the bound
    int status = -1;        // exit code: 0 = the check passed, 1 = it failed, 2 = it threw, 128+ = a signal
    long max_rss_kb = 0;
};

// Runs `check` in a child process; kills it after `seconds`. `as_limit` (bytes, 0 = none)
// caps its address space, so a runaway allocation fails fast instead of eating the machine.
ChildResult run_bounded(const std::function<bool()>& check, int seconds, uint64_t as_limit = 0) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        for (int sig : {SIGSEGV, SIGFPE, SIGABRT, SIGILL, SIGBUS}) std::signal(sig, SIG_DFL);  // not Catch's report
        if (as_limit && kPlainMemory) {
            rlimit rl{as_limit, as_limit};
            setrlimit(RLIMIT_AS, &rl);
        }
        int code = 2;
        try {
            code = check() ? 0 : 1;
        } catch (...) {
        }
        _exit(code);
    }
    ChildResult r;
    for (int waited_ms = 0;; waited_ms += 10) {
        int st = 0;
        rusage ru{};
        pid_t got = wait4(pid, &st, WNOHANG, &ru);
        if (got == pid) {
            r.finished = true;
            r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            r.max_rss_kb = ru.ru_maxrss;
            return r;
        }
        if (waited_ms >= seconds * 1000) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return r;
        }
        usleep(10000);
    }
}

// A synthetic 2023 blob (legacy-full / legacy-dump) of the given geometry.
Bytes legacy_state(const char* flavour, uint32_t n_layer, uint32_t n_ctx, uint32_t n_embd, uint32_t cells) {
    stzsynth::Spec s;
    s.flavour = flavour;
    s.n_layer = n_layer, s.n_ctx = n_ctx, s.n_embd = n_embd, s.cells = cells;
    MemorySink sink;
    stzsynth::write_state(s, sink);
    return sink.out;
}

ParsedFile parse(const Bytes& b, const ParseHints& h = {}) {
    MemorySource src(b);
    return parse_state_file(src, h);
}

// A virtual input of zeros (no memory of its own).
class ZeroSource final : public InputSource {
public:
    explicit ZeroSource(uint64_t n) : n_(n) {}
    uint64_t size() const override { return n_; }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override {
        if (off > n_ || n > n_ - off) throw Error("read past the end");
        std::memset(dst, 0, n);
    }

private:
    uint64_t n_;
};

}  // namespace

TEST_CASE("hostile: ggsq v2 of empty memory records parses in linear time", "[hostile][formats]") {
    // 262144 records (2 MiB): the old per-record copy of the section list made this about an
    // hour of work (128 KB took 13.6 s); linear parsing takes well under a second.
    const Bytes b = ggsq2_empty_records(262144);
    ChildResult r = run_bounded(
        [&] {
            ParsedFile pf = parse(b);
            return pf.format == "ggsq" && pf.sections.size() == 1 + 2 * 262144;
        },
        120);
    CHECK(r.finished);
    CHECK(r.status == 0);
}

TEST_CASE("hostile: a parser stops at kMaxParsedSections instead of building a huge section list", "[hostile][formats]") {
    const size_t records = kMaxParsedSections / 2 + 1000;  // 2 sections each: over the cap
    const Bytes b = ggsq2_empty_records(records);
    ChildResult r = run_bounded(
        [&] {
            ParsedFile pf = parse(b);
            return pf.format == "opaque" && pf.sections.size() == 1;
        },
        120);
    CHECK(r.finished);
    CHECK(r.status == 0);
    INFO("peak RSS " << r.max_rss_kb / 1024 << " MiB for " << b.size() / 1024 << " KiB of input");
    if (kPlainMemory) CHECK(r.max_rss_kb < 1024 * 1024);
}

TEST_CASE("hostile: a V-less trial per record does not copy the section list", "[hostile][formats]") {
    // K-only records (the V entries are absent, found by trial): each trial used to copy the list.
    const Bytes b = ggsq2_k_only_records(60000);
    ChildResult r = run_bounded([&] { return parse(b).format == "ggsq"; }, 120);
    CHECK(r.finished);
    CHECK(r.status == 0);
}

TEST_CASE("hostile: huge geometry hints neither wrap nor loop", "[hostile][formats]") {
    SECTION("compact dump: n_layer 2^63+1 x n_embd 128 x 2 bytes wraps to the real row size") {
        const Bytes state = legacy_state("legacy-dump", 4, 256, 32, 50);
        ParseHints h;
        h.n_layer = 9223372036854775809ull, h.n_embd = 128;
        ChildResult r = run_bounded(
            [&] {
                ParsedFile pf = parse(state, h);
                return pf.format == "legacy-compact" && pf.sections.size() < 100;
            },
            60, 2ull << 30);
        CHECK(r.finished);
        CHECK(r.status == 0);
    }
    SECTION("full buffer: n_layer 2^63+8 x n_ctx 512 x n_embd 64 wraps to the tensor's element count") {
        const Bytes state = legacy_state("legacy-full", 8, 512, 64, 20);
        ParseHints h;
        h.n_layer = (1ull << 63) + 8, h.n_ctx = 512, h.n_embd = 64;
        ChildResult r = run_bounded(
            [&] {
                ParsedFile pf = parse(state, h);
                check_tiling(pf.sections, state.size());
                return pf.format == "legacy-full" && pf.n_layer == 8u;  // the bad hint is ignored, geometry inferred
            },
            60, 2ull << 30);
        CHECK(r.finished);
        CHECK(r.status == 0);
    }
    SECTION("an n_ctx hint of 2^63 does not divide by zero") {
        const Bytes state = legacy_state("legacy-dump", 4, 256, 32, 50);
        ParseHints h;
        h.n_ctx = 1ull << 63;
        ChildResult r = run_bounded(  // (the old code divided by 2 * n_ctx, which wraps to 0: SIGFPE)
            [&] {
                ParsedFile pf = parse(state, h);
                check_tiling(pf.sections, state.size());
                return true;
            },
            60);
        CHECK(r.finished);
        CHECK(r.status == 0);
    }
}

TEST_CASE("hostile: a failed thread start stops the started workers and reports an error", "[hostile][threads]") {
    ChildResult r = run_bounded(
        [] {
            unsigned started = 0;
            ThreadPool::Spawn spawn = [&](std::function<void()> f) {
                if (started == 3) throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
                ++started;
                return std::thread(std::move(f));
            };
            std::promise<void> release;
            std::shared_future<void> gate = release.get_future().share();
            bool reported = false;
            {
                ThreadPool pool(8, spawn);
                try {
                    for (int i = 0; i < 8; ++i) pool.submit([gate] { gate.wait(); });  // each job keeps its worker busy
                } catch (const Error& e) {
                    reported = std::string(e.what()).find("cannot start thread 4 of 8") != std::string::npos;
                }
                release.set_value();
            }  // the three started workers finish their jobs and are joined
            return reported && started == 3;
        },
        60);
    CHECK(r.finished);  // the old pool aborted (joinable threads destroyed) or hung
    CHECK(r.status == 0);
}

TEST_CASE("hostile: threads the system refuses (no room for their stacks) give an error, not an abort",
          "[hostile][threads]") {
    if (!kPlainMemory) {
        stztest::skip_test("needs RLIMIT_AS, which AddressSanitizer builds cannot use");
    }
    ChildResult r = run_bounded(
        [] {
            // Address space for a few more 8 MiB thread stacks only (works as root, unlike RLIMIT_NPROC).
            std::ifstream statm("/proc/self/statm");
            uint64_t pages = 0;
            statm >> pages;
            const uint64_t limit = pages * uint64_t(sysconf(_SC_PAGESIZE)) + (40u << 20);
            rlimit rl{limit, limit};
            setrlimit(RLIMIT_AS, &rl);
            std::promise<void> release;
            std::shared_future<void> gate = release.get_future().share();
            bool reported = false;
            {
                ThreadPool pool(64);
                try {
                    for (int i = 0; i < 64; ++i) pool.submit([gate] { gate.wait(); });
                } catch (const Error& e) {
                    reported = std::string(e.what()).find("cannot start thread") != std::string::npos;
                }
                release.set_value();
            }
            return reported;
        },
        60);
    CHECK(r.finished);
    CHECK(r.status == 0);
}

TEST_CASE("hostile: decompression memory is bounded in bytes, not chunks", "[hostile][memory]") {
    // 40 chunks of 16 MiB of zeros: a few KB of .stz. The old engine kept 2 x T chunks in
    // flight (32 x 16 MiB at -T 16); with a 64 MiB budget at most 4 are.
    CompressOptions opt;
    opt.chunk_bytes = 16u << 20;
    ZeroSource zeros(40ull * (16u << 20));
    MemorySink stz_bytes;
    compress_stream(zeros, stz_bytes, opt);
    REQUIRE(stz_bytes.out.size() < 100000);
    long rss_t1 = 0, rss_t16 = 0;
    for (unsigned threads : {1u, 16u}) {
        ChildResult r = run_bounded(
            [&] {
                MemoryStream in(stz_bytes.out);
                NullSink sink;
                DecompressOptions d;
                d.threads = threads;
                d.memory_budget = 64u << 20;
                return decompress_stream(in, sink, d).bytes_out == zeros.size();
            },
            300);
        REQUIRE(r.finished);
        CHECK(r.status == 0);
        (threads == 1 ? rss_t1 : rss_t16) = r.max_rss_kb;
    }
    INFO("peak RSS -T 1: " << rss_t1 / 1024 << " MiB, -T 16: " << rss_t16 / 1024 << " MiB");
    if (kPlainMemory) {
        CHECK(rss_t16 < 320 * 1024);           // old: ~32 x 16 MiB = 512 MiB and more
        CHECK(rss_t16 < rss_t1 + 128 * 1024);  // independent of T (up to thread stacks and arenas)
    }

    // Compression too: 16 MiB chunks at -T 16 (the old engine: 32 chunks and their buffers).
    ChildResult c = run_bounded(
        [&] {
            CompressOptions o = opt;
            o.threads = 16;
            o.memory_budget = 64u << 20;
            MemorySink sink;
            compress_stream(zeros, sink, o);
            return sink.out == stz_bytes.out;  // and the same bytes as at -T 1
        },
        300);
    REQUIRE(c.finished);
    CHECK(c.status == 0);
    INFO("compress peak RSS -T 16: " << c.max_rss_kb / 1024 << " MiB");
    if (kPlainMemory) CHECK(c.max_rss_kb < 320 * 1024);
}

TEST_CASE("thread pool: workers start only when a job finds none idle", "[threads]") {
    ThreadPool pool(64);
    for (int i = 0; i < 20; ++i) pool.submit([] { return 0; }).get();  // one job at a time
    CHECK(pool.started() == 1);  // not 64 threads (and 64 malloc arenas) for sequential work
}

TEST_CASE("ordered queue: results in order, cost in flight within the budget, an oversized job alone", "[threads]") {
    ThreadPool pool(4);
    std::vector<int> order;
    OrderedQueue<int, int> q(pool, 8, 100, [&](const int& tag, int&& v) {
        CHECK(tag == v);
        order.push_back(v);
    });
    for (int i = 0; i < 50; ++i) q.submit(i, i == 20 ? 1000 : 30, [i] { return i; });
    q.drain();
    CHECK(order.size() == 50);
    CHECK(std::is_sorted(order.begin(), order.end()));
    CHECK(q.peak_cost() == 1000);  // the oversized job ran with nothing else in flight
}

TEST_CASE("hostile: many tiny sections never expand the output beyond the allowance (14.4, 14.10)", "[hostile][plan]") {
    struct Case { const char* name; Bytes data; };
    std::vector<Case> cases;
    cases.push_back({"ggsq v2, 25600 empty records", ggsq2_empty_records(25600)});
    cases.push_back({"ggsq v2, 1-cell 512-layer records of random f16", ggsq2_many_layers(40, 7)});
    cases.push_back({"28 random bytes", random_bytes(28, 3)});
    for (auto& c : cases) {
        for (Preset p : {Preset::Default, Preset::Max}) {
            INFO(c.name << ", preset " << preset_name(p) << ", " << c.data.size() << " bytes");
            CompressOptions opt;
            opt.codec.preset = p;
            Bytes z = compress_bytes(c.data, opt);
            INFO("compressed to " << z.size() << " bytes");
            CHECK(z.size() <= c.data.size() + expansion_allowance(c.data.size()));  // old: 9-17x the input
            CHECK(decompress_bytes(z) == c.data);
            // A caller's buffer (the C API's) is written directly, not through a trial in
            // memory: the same bytes, whatever the room left beyond them.
            for (const size_t room : {z.size(), z.size() + 1, c.data.size() + expansion_allowance(c.data.size())}) {
                Bytes dst(room);
                MemorySource src(c.data);
                SpanSink sink(dst.data(), dst.size());
                compress_stream(src, sink, opt);
                REQUIRE(sink.used() == z.size());
                dst.resize(sink.used());
                CHECK(dst == z);
            }
        }
    }
}

TEST_CASE("hostile: a section table over the reader's header limit falls back to what it can read", "[hostile][plan]") {
    // 40000 sections of 5000 bytes with 2000-byte names: an 82 MB table (the reader takes
    // 64 MiB), over 200 MB of zeros that cost no memory.
    const uint64_t n = 40000, size = 5000;
    ParsedFile pf;
    pf.format = "raw";
    SectionList list;
    for (uint64_t i = 0; i < n; ++i) list.add(std::string(1990, 'x') + std::to_string(1000000 + i), SectionKind::Meta, size);
    pf.sections = std::move(list.sections());
    ZeroSource zeros(n * size);
    MemorySink sink;
    CompressOptions opt;
    opt.codec.preset = Preset::Fast;
    compress_parsed(zeros, pf, sink, opt);
    MemoryStream in(sink.out);
    NullSink out;
    CHECK(decompress_stream(in, out, 1).bytes_out == n * size);  // old: "header too large"
}
