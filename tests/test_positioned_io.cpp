// Decompression through positioned inputs (the decode jobs read their own payloads) and
// positioned outputs (the jobs write their chunks at their offsets): the same bytes as the
// sequential paths for every thread count, and a truncated or damaged file gives the same one
// error through either input path.
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>

#include "statezip.h"
#include "test_util.hpp"

using namespace stz;
using namespace stztest;

namespace {

const std::string kBin = STATEZIP_BIN;
const std::string kGen = STATEZIP_GEN;

// A memory stream that counts the bytes it gives in order. Positioned, it also gives them by
// position as a regular file does (read_at copies); as memory, it also shows them where they
// lie (InputSource::memory, as a C API caller's buffer); else only in order (a pipe).
enum class Input { Pipe, File, Memory };
class CountingStream final : public InputStream {
    // The bytes by position, read_at only (a file's pread): not shown as memory.
    class FileLike final : public InputSource {
    public:
        explicit FileLike(ByteSpan d) : m_(d) {}
        uint64_t size() const override { return m_.size(); }
        void read_at(uint64_t off, uint8_t* dst, size_t n) override { m_.read_at(off, dst, n); }
        bool concurrent_reads() const override { return true; }

    private:
        MemorySource m_;
    };

public:
    CountingStream(ByteSpan d, Input kind) : m_(d), file_(d), kind_(kind) {}
    size_t read(uint8_t* dst, size_t n) override {
        const size_t r = m_.read(dst, n);
        given += r;
        return r;
    }
    InputSource* positioned() override {
        return kind_ == Input::Memory ? m_.positioned() : kind_ == Input::File ? &file_ : nullptr;
    }
    void skip(uint64_t n) override { kind_ != Input::Pipe ? m_.skip(n) : InputStream::skip(n); }
    uint64_t given = 0;

private:
    MemoryStream m_;
    FileLike file_;
    Input kind_;
};

// Memory written at offsets, from any thread, or in order (a writer uses one or the other).
class PositionedMemorySink final : public OutputSink {
public:
    void write(const uint8_t* data, size_t n) override {
        append_bytes(out, ByteSpan(data, n));
        ++writes;
    }
    bool positioned_writes() const override { return true; }
    void write_at(uint64_t off, const uint8_t* data, size_t n) override {
        std::lock_guard<std::mutex> lk(m_);
        if (out.size() < off + n) out.resize(off + n);
        std::copy_n(data, n, out.data() + off);
        ++writes_at;
    }
    Bytes out;
    size_t writes = 0, writes_at = 0;

private:
    std::mutex m_;
};

// The error decompressing from `s` gives, or "".
std::string error_through(InputStream&& s, unsigned threads) {
    MemorySink sink;
    try {
        decompress_stream(s, sink, threads);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("positioned io: payloads read by the jobs, chunks written at offsets, every thread count alike",
          "[threads][positioned]") {
    const Bytes in = many_chunk_input();
    const Bytes stz = compress_in_small_chunks(in);
    for (unsigned t : {1u, 2u, 4u}) {
        INFO("threads " << t);
        CountingStream seq(stz, Input::Pipe);
        MemorySink seq_out;
        decompress_stream(seq, seq_out, t);
        CHECK(seq_out.out == in);
        CHECK(seq.given == stz.size());
        // With workers the reader takes only the record heads in order and the jobs write at
        // offsets; with one worker the calling thread reads and writes everything, in order.
        CountingStream pos(stz, Input::File);
        PositionedMemorySink pos_out;
        const DecompressResult r = decompress_stream(pos, pos_out, t);
        CHECK(pos_out.out == in);
        CHECK(r.bytes_out == in.size());
        if (t == 1) {
            CHECK(pos_out.writes_at == 0);
            CHECK(pos.given == stz.size());
        } else {
            CHECK(pos_out.writes == 0);
            CHECK(pos_out.writes_at > 10);
            CHECK(pos.given < stz.size() / 20);
        }
        // Memory: at every thread count the payloads are used where they lie; the reader
        // takes only the record heads.
        CountingStream mem(stz, Input::Memory);
        MemorySink mem_out;
        decompress_stream(mem, mem_out, t);
        CHECK(mem_out.out == in);
        CHECK(mem.given < stz.size() / 20);
    }
}

TEST_CASE("positioned io: a truncated or damaged file gives the same error through either input path",
          "[threads][positioned][corruption]") {
    const Bytes in = many_chunk_input();
    const Bytes good = compress_in_small_chunks(in);
    std::vector<Bytes> bad;
    for (size_t len : {good.size() / 3, good.size() / 2 + 7, good.size() - 20, good.size() - 1}) bad.emplace_back(good.begin(), good.begin() + len);
    for (size_t at : {good.size() / 4, good.size() / 2, good.size() - 100}) {
        bad.push_back(good);
        bad.back()[at] ^= 0x10;
    }
    for (size_t i = 0; i < bad.size(); ++i) {
        INFO("damaged file " << i);
        const std::string seq = error_through(CountingStream(bad[i], Input::Pipe), 1);
        CHECK_FALSE(seq.empty());
        for (unsigned t : {1u, 2u, 4u}) {
            INFO("threads " << t);
            CHECK(error_through(CountingStream(bad[i], Input::Pipe), t) == seq);
            CHECK(error_through(CountingStream(bad[i], Input::File), t) == seq);
            CHECK(error_through(MemoryStream(bad[i]), t) == seq);
        }
    }
}

TEST_CASE("positioned io cli: -T1/-T2/-T4 from a file to a file, and from a pipe, give the same bytes and errors",
          "[threads][positioned][cli]") {
    const std::string d = temp_dir("positioned-io");
    REQUIRE(sh(kGen + " session10 " + d + "/s.bin --size 6000000 --layers 4 --embd 256 --seed 5 >/dev/null") == 0);
    REQUIRE(sh(kBin + " -q -T2 --chunk-size 1 -o " + d + "/s.stz " + d + "/s.bin") == 0);
    const Bytes orig = read_file(d + "/s.bin");
    for (const char* t : {"-T1", "-T2", "-T4"}) {
        INFO(t);
        REQUIRE(sh(kBin + " -q -d " + t + " -o " + d + "/file.bin " + d + "/s.stz") == 0);
        CHECK(read_file(d + "/file.bin") == orig);
        REQUIRE(sh("cat " + d + "/s.stz | " + kBin + " -q -d " + t + " -c > " + d + "/pipe.bin") == 0);
        CHECK(read_file(d + "/pipe.bin") == orig);
        REQUIRE(sh(kBin + " -q -d " + t + " -c < " + d + "/s.stz > " + d + "/redirect.bin") == 0);
        CHECK(read_file(d + "/redirect.bin") == orig);
        sh("rm -f " + d + "/file.bin " + d + "/pipe.bin " + d + "/redirect.bin");
    }
    // Cut inside a payload: the file (positioned) and the pipe (sequential) name the same place.
    const Bytes good = read_file(d + "/s.stz");
    write_file(d + "/cut.stz", Bytes(good.begin(), good.begin() + good.size() / 2));
    for (const char* t : {"-T1", "-T2"}) {
        INFO(t);
        CHECK(sh(kBin + " -d " + t + " -o " + d + "/out.bin " + d + "/cut.stz 2> " + d + "/file_err.txt") == 1);
        CHECK_FALSE(exists(d + "/out.bin"));
        CHECK(leftover_temp_files(d) == 0);
        CHECK(sh("cat " + d + "/cut.stz | " + kBin + " -d " + t + " -c > /dev/null 2> " + d + "/pipe_err.txt") == 1);
        std::string file_err = slurp(d + "/file_err.txt"), pipe_err = slurp(d + "/pipe_err.txt");
        CHECK(std::count(file_err.begin(), file_err.end(), '\n') == 1);
        CHECK(file_err.find("truncated") != std::string::npos);
        // The same message after the file's name.
        REQUIRE(file_err.find(": ") != std::string::npos);
        REQUIRE(pipe_err.find(": ") != std::string::npos);
        CHECK(file_err.substr(file_err.find("cut.stz") + 7) == pipe_err.substr(pipe_err.find("(stdin)") + 7));
    }
}

TEST_CASE("positioned io capi: stz_decompress_threads copies the chunks in at their offsets, the same for every count",
          "[threads][positioned][capi]") {
    const Bytes in = many_chunk_input();
    const Bytes stz = compress_in_small_chunks(in);
    for (int threads : {1, 2, 4}) {
        INFO("threads " << threads);
        Bytes back(in.size() + 10, 0xee);
        size_t n = 0;
        REQUIRE(stz_decompress_threads(stz.data(), stz.size(), back.data(), back.size(), &n, threads) == STZ_OK);
        CHECK(n == in.size());
        CHECK(std::equal(in.begin(), in.end(), back.begin()));
        CHECK(std::all_of(back.begin() + in.size(), back.end(), [](uint8_t b) { return b == 0xee; }));
    }
}

namespace {

// A caller's buffer (SpanSink) that counts how its bytes arrive: into its memory, or copied.
class CountingSpanSink final : public OutputSink {
public:
    explicit CountingSpanSink(Bytes& buf) : s_(buf.data(), buf.size()) {}
    void write(const uint8_t* data, size_t n) override { ++writes, s_.write(data, n); }
    bool positioned_writes() const override { return true; }
    void write_at(uint64_t off, const uint8_t* data, size_t n) override { ++writes, s_.write_at(off, data, n); }
    uint8_t* memory_at(uint64_t off, size_t n) override {
        if (n) ++placed;
        return s_.memory_at(off, n);
    }
    std::atomic<size_t> writes{0}, placed{0};
    size_t used() const { return s_.used(); }

private:
    SpanSink s_;
};

}  // namespace

TEST_CASE("positioned io: into a caller's memory each chunk is decoded in its place, never written or copied",
          "[threads][positioned]") {
    const Bytes in = many_chunk_input();
    const Bytes stz = compress_in_small_chunks(in);
    for (unsigned t : {1u, 2u, 4u}) {
        INFO("threads " << t);
        for (Input kind : {Input::Pipe, Input::File, Input::Memory}) {
            Bytes back(in.size() + 64, 0xee);
            CountingSpanSink out(back);
            CountingStream s(stz, kind);
            const DecompressResult r = decompress_stream(s, out, t);
            CHECK(r.bytes_out == in.size());
            CHECK(out.used() == in.size());
            CHECK(out.writes == 0);
            CHECK(out.placed > 10);
            CHECK(std::equal(in.begin(), in.end(), back.begin()));
            CHECK(std::all_of(back.begin() + in.size(), back.end(), [](uint8_t b) { return b == 0xee; }));
        }
        // One byte short: the chunk that does not fit is refused, nothing is written past the end.
        Bytes small(in.size() - 1 + 64, 0xee);
        SpanSink short_out(small.data(), in.size() - 1);
        MemoryStream s(stz);
        CHECK_THROWS_AS(decompress_stream(s, short_out, t), OutputFull);
        CHECK(std::all_of(small.begin() + in.size() - 1, small.end(), [](uint8_t b) { return b == 0xee; }));
    }
}

TEST_CASE("positioned io: a damaged file decoded into a caller's memory gives the error it gives elsewhere",
          "[threads][positioned][corruption]") {
    const Bytes in = many_chunk_input();
    const Bytes good = compress_in_small_chunks(in);
    for (size_t at : {good.size() / 4, good.size() / 2, good.size() - 100, size_t(200)}) {
        INFO("flipped byte " << at);
        Bytes bad = good;
        bad[at] ^= 0x10;
        const std::string expect = error_through(MemoryStream(bad), 1);
        REQUIRE_FALSE(expect.empty());
        for (unsigned t : {1u, 2u, 4u}) {
            INFO("threads " << t);
            Bytes back(in.size());
            SpanSink out(back.data(), back.size());
            MemoryStream s(bad);
            std::string got;
            try {
                decompress_stream(s, out, t);
            } catch (const DataError& e) {
                got = e.what();
            }
            CHECK(got == expect);
        }
    }
}
