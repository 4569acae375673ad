// The streaming engine with several workers: the same bytes for every thread count both ways
// on a many-chunk input, and a damaged chunk found by a worker (whichever thread holds the
// whole-file hash at that moment) gives the same one error as with one worker, and no output.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/thread_pool.hpp"

#include "test_util.hpp"

using namespace stz;
using namespace stztest;

namespace {

const std::string kBin = STATEZIP_BIN;
const std::string kGen = STATEZIP_GEN;

std::string decode_error(const Bytes& stz, unsigned threads) {
    try {
        decompress_bytes(stz, threads);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("stream threads: -T1 and -T4 give the same bytes both ways on a many-chunk input", "[threads]") {
    // 2.9 MB: coded on the calling thread at -T1 (engine.cpp, runs_inline), on workers at -T4.
    const Bytes in = many_chunk_input();
    CompressOptions opt;
    opt.chunk_bytes = 64u << 10;  // ~45 chunks: more than the queue holds for any thread count here
    opt.threads = 1;
    const Bytes one = compress_bytes(in, opt);
    opt.threads = 4;
    const Bytes four = compress_bytes(in, opt);
    CHECK(four == one);
    for (unsigned t : {1u, 2u, 4u, 7u}) {
        INFO("threads " << t);
        CHECK(decompress_bytes(one, t) == in);
    }
    // A memory budget that admits one chunk at a time: still every chunk, in order.
    MemoryStream s(one);
    MemorySink sink;
    DecompressOptions d;
    d.threads = 4;
    d.memory_budget = 1;
    decompress_stream(s, sink, d);
    CHECK(sink.out == in);
}

TEST_CASE("stream threads: a damaged chunk in the middle gives the same error for every thread count", "[threads][corruption]") {
    const Bytes in = many_chunk_input();
    const Bytes good = compress_in_small_chunks(in);
    // Bytes inside later chunks' payloads: found by the decode jobs (payload and raw checksums),
    // while the chunks after them are being decoded and the ones before already hashed.
    for (size_t at : {good.size() / 2, good.size() * 3 / 4, good.size() - 200}) {
        Bytes bad = good;
        bad[at] ^= 0x40;
        INFO("flipped byte " << at);
        const std::string one = decode_error(bad, 1);
        CHECK_FALSE(one.empty());
        for (unsigned t : {2u, 4u, 7u}) CHECK(decode_error(bad, t) == one);
    }
}

TEST_CASE("stream threads cli: -T1 and -T4 agree, a damaged chunk fails on one line and leaves no output", "[threads][cli]") {
    const std::string d = temp_dir("stream-threads");
    REQUIRE(sh(kGen + " session10 " + d + "/s.bin --size 6000000 --layers 4 --embd 256 --seed 3 >/dev/null") == 0);
    REQUIRE(sh(kBin + " -q -T1 --chunk-size 1 -o " + d + "/one.stz " + d + "/s.bin") == 0);
    REQUIRE(sh(kBin + " -q -T4 --chunk-size 1 -o " + d + "/four.stz " + d + "/s.bin") == 0);
    CHECK(read_file(d + "/one.stz") == read_file(d + "/four.stz"));
    for (const char* t : {"-T1", "-T4"}) {
        REQUIRE(sh(kBin + " -q -d " + t + " -o " + d + "/back.bin " + d + "/one.stz") == 0);
        CHECK(read_file(d + "/back.bin") == read_file(d + "/s.bin"));
        sh("rm -f " + d + "/back.bin");
    }
    const Bytes good = read_file(d + "/one.stz");
    Bytes bad = good;
    bad[good.size() * 2 / 3] ^= 0x01;
    write_file(d + "/bad.stz", bad);
    for (const char* t : {"-T1", "-T4"}) {
        INFO(t);
        CHECK(sh(kBin + " -d " + t + " -o " + d + "/out.bin " + d + "/bad.stz 2> " + d + "/err.txt") == 1);
        CHECK_FALSE(exists(d + "/out.bin"));
        CHECK(leftover_temp_files(d) == 0);
        const std::string err = slurp(d + "/err.txt");
        CHECK(err.find("bad.stz") != std::string::npos);
        CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    }
}

TEST_CASE("thread pool, inline: each job runs at once on the submitting thread, errors through its future",
          "[threads]") {
    ThreadPool pool{ThreadPool::Inline{}};
    const auto caller = std::this_thread::get_id();
    int runs = 0;
    auto done = pool.submit([&] { return ++runs, std::this_thread::get_id(); });
    CHECK(runs == 1);  // before submit returned
    CHECK(done.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
    CHECK(done.get() == caller);
    auto failed = pool.submit([]() -> int { throw Error("job failed"); });
    CHECK_THROWS_WITH(failed.get(), "job failed");
    CHECK(pool.started() == 0);
}

TEST_CASE("ordered queue on an inline pool: jobs run at submit, results retire in order, an error at its turn",
          "[threads]") {
    ThreadPool pool{ThreadPool::Inline{}};
    std::vector<int> ran, retired;
    OrderedQueue<std::vector<int>, int> queue(pool, 3, 1000, [&](const int& tag, std::vector<int>&& r) {
        retired.push_back(tag);
        CHECK(r == std::vector<int>(size_t(tag), tag));  // the job's own result, moved whole
    });
    for (int tag = 1; tag <= 5; ++tag) {
        queue.submit(tag, 10, [&, tag] {
            ran.push_back(tag);
            return std::vector<int>(size_t(tag), tag);
        });
        CHECK(ran.back() == tag);  // run before submit returned
    }
    CHECK(retired == std::vector<int>{1, 2});  // at most three in flight: the first two made room
    queue.drain();
    CHECK(retired == std::vector<int>{1, 2, 3, 4, 5});
    CHECK(pool.started() == 0);

    // A job that throws: the jobs before it retire, its error comes out at its own turn.
    retired.clear();
    queue.submit(6, 10, [] { return std::vector<int>(6, 6); });
    queue.submit(7, 10, []() -> std::vector<int> { throw Error("job 7 failed"); });
    queue.submit(8, 10, [] { return std::vector<int>(8, 8); });
    CHECK_THROWS_WITH(queue.drain(), "job 7 failed");
    CHECK(retired == std::vector<int>{6});
}
