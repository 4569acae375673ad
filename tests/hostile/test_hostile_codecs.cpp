// Hostile .stz files built here, with valid checksums, aimed at the codecs and the container
// (codec parameters, expansion, memory and work bounds): parameters out of range, pipelines the reader cannot
// store, chunk counts no file could hold, stages that claim outputs their input cannot
// justify, range-coder streams that run past their end. Each must give a clear error.
#include <catch2/catch.hpp>

#include <algorithm>

#include "../test_util.hpp"
#include "hostile.hpp"
#include "layout/wire.hpp"

using namespace stz;
using namespace stztest;
using namespace stzhostile;

namespace {

// The error a decode of `stz` gives, or "" if it decodes.
std::string decode_error(const Bytes& stz) {
    try {
        (void)decompress_bytes(stz);
    } catch (const DataError& e) {
        return e.what();
    } catch (const Error& e) {
        return std::string("not a DataError: ") + e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("hostile: chanctx row_records = 2^63+1 with the match model is refused, not a crash", "[hostile]") {
    const std::string err = decode_error(chanctx_row_records(8192));
    INFO(err);
    CHECK(err.find("bad parameters") != std::string::npos);
    CHECK(err.find("chunk 0") != std::string::npos);
    // and the codec alone refuses them too (decode validates, whoever calls it)
    const Bytes raw = sample_rows(8192);
    const Bytes good = chanctx_params(1, 2, 32, {1});
    const Bytes bad = chanctx_params(1, 2, (1ull << 63) + 1, {1});
    Bytes payload, out;
    find_codec("chanctx")->encode(raw, good, payload);
    CHECK_THROWS_AS(find_codec("chanctx")->decode(payload, bad, raw.size(), out), Error);
}

TEST_CASE("hostile: every codec refuses out-of-range parameters when the chunk is read", "[hostile]") {
    const Bytes raw = sample_rows(4096);
    const uint64_t huge = 1ull << 63;
    const std::vector<std::tuple<std::string, Bytes, std::vector<Bytes>>> cases = {
        {"store", {}, {{0}}},
        {"rle", {}, {{1}, Bytes(255, 7)}},
        {"lz4", {1, 0, 0, 0}, {{}, {0, 0, 0, 0}, {2, 0, 1, 0}, {1, 0, 0, 0, 0}}},
        {"lz4hc", {9}, {{}, {0}, {13}, {9, 0}}},
        {"zstd", {3, 0}, {{}, {3}, {23, 0}, {0xF0, 0}, {3, 2}, {3, 0, 0}}},
        {"lzma", {6, 0}, {{}, {6}, {10, 0}, {6, 2}}},
        {"trim", le64x2(0, 0), {{}, le64x2(64, 64), le64x2(huge, 1), le64x2(0, 3), le64(64)}},
        {"shuffle", {2}, {{}, {0}, {17}, {2, 0}}},
        {"transpose", le64x2(2, 32), {le64x2(0, 32), le64x2(huge, 2), le64x2(1, huge), le64(2)}},
        {"fields", le64x2(34, 2), {le64x2(huge, 2), le64x2(34, huge), le64(34)}},
        {"chanctx", chanctx_params(2, 2, 32, {0, 1}),
         {chanctx_params(2, 6, 32, {0, 1}), chanctx_params(2, 2, 0, {0, 1}), chanctx_params(2, 2, 1ull << 26, {0, 1}),
          chanctx_params(2, 2, 32, {0, 8}), chanctx_params(2, 2, 32, {0, 1, 1}), {0, 0}}},
        {"dedup", le64(64), {{}, le64(huge), le64x2(64, 0)}},
    };
    for (const Codec* c : all_codecs()) {  // every registered codec has a case
        bool listed = std::any_of(cases.begin(), cases.end(), [&](const auto& t) { return std::get<0>(t) == c->name(); });
        // Codecs added after this list must bring their own hostile-parameter cases.
        if (c->id() <= 11) CHECK(listed);
    }
    for (const auto& [codec, good, bads] : cases) {
        REQUIRE(decode_error(craft_one_stage(codec, good, good, raw)) == "");
        for (const Bytes& bad : bads) {
            const std::string err = decode_error(craft_one_stage(codec, good, bad, raw));
            INFO(codec << " with " << bad.size() << " parameter bytes: " << err);
            CHECK(err.find("parameters") != std::string::npos);
        }
    }
}

TEST_CASE("hostile: the writer refuses a pipeline with more stages than the reader accepts", "[hostile]") {
    const Bytes raw = sample_rows(2048);
    for (size_t n : {size_t(9), size_t(256)}) {
        std::string spec = "zstd:3";  // compresses, so the engine keeps it (no fallback to store)
        for (size_t i = 1; i < n; ++i) spec = "store+" + spec;
        CompressOptions opt;
        opt.codec.all = spec;
        INFO(n << " stages");
        try {
            (void)compress_bytes(raw, opt);
            FAIL("wrote a .stz with " << n << " stages");
        } catch (const Error& e) {
            CHECK(std::string(e.what()).find("stages") != std::string::npos);
        }
    }
    CompressOptions eight;
    eight.codec.all = "store+store+store+store+store+store+store+zstd:3";
    CHECK(decompress_bytes(compress_bytes(raw, eight)) == raw);
}

TEST_CASE("hostile: the writer refuses a header the reader would reject", "[hostile]") {
    ContainerHeader h;
    h.note = std::string(70000, 'n');  // a u16 length would wrap
    MemorySink sink;
    CHECK_THROWS_AS(ContainerWriter(sink, h), Error);
    CHECK(sink.out.empty());
    ContainerHeader big;  // ~66 MiB of section names: over kMaxHeaderBytes
    for (int i = 0; i < 1100; ++i) {
        Section s;
        s.name = std::string(63000, 'a' + i % 26);
        s.offset = i, s.size = 1;
        big.sections.push_back(std::move(s));
    }
    big.original_size = 1100;
    CHECK_THROWS_WITH(ContainerWriter(sink, big), Catch::Contains("header"));
    CHECK(sink.out.empty());
}

namespace {

// A seekable source of `size` bytes, zero except the given pieces (like a sparse file); it
// records the largest single read, so a test can see what a reader tried to allocate.
class SparseSource final : public InputSource {
public:
    SparseSource(uint64_t size, std::vector<std::pair<uint64_t, Bytes>> pieces) : size_(size), pieces_(std::move(pieces)) {}
    uint64_t size() const override { return size_; }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override {
        largest_read = std::max<uint64_t>(largest_read, n);
        if (n > (16u << 20)) throw Error("test source: a read of " + std::to_string(n) + " bytes");
        if (off > size_ || n > size_ - off) throw Error("test source: read past the end");
        std::fill(dst, dst + n, 0);
        for (const auto& [at, b] : pieces_)
            for (size_t i = 0; i < b.size(); ++i)
                if (at + i >= off && at + i < off + n) dst[at + i - off] = b[i];
    }
    uint64_t largest_read = 0;

private:
    uint64_t size_;
    std::vector<std::pair<uint64_t, Bytes>> pieces_;
};

}  // namespace

TEST_CASE("hostile: listing a small or sparse file that claims a huge chunk count allocates nothing first", "[hostile]") {
    // The end record right after the header claims as many chunks as the apparent size allows.
    const SparseImage img = huge_chunk_count((256ull << 20) + 1);
    SparseSource src(img.size, img.pieces);
    try {
        (void)list_container(src);
        FAIL("listed a file with " << (img.size >> 20) << " MiB of chunk index");
    } catch (const DataError& e) {
        CHECK(std::string(e.what()).find("chunks") != std::string::npos);
    } catch (const Error& e) {
        FAIL(e.what());
    }
    CHECK(src.largest_read <= (1u << 20));
}

TEST_CASE("hostile: a stage declaring more output than its input can justify is refused before decoding", "[hostile]") {
    // 64 MiB of chanctx output claimed from ~100 bytes (bf16 records: both bytes modelled, no
    // raw plane), where at most ~4 KiB per input byte can exist. 0.1.0 decoded it all.
    const std::string err = decode_error(oversized_stage(64u << 20));
    INFO(err);
    CHECK(err.find("cannot decode to the declared") != std::string::npos);
}

TEST_CASE("hostile: a range-coder stream that runs past its end is refused as it happens", "[hostile]") {
    // f16 records without the match model: the low byte from the raw plane, the high byte
    // range coded. 16 range-coder bytes cannot hold 100000 modelled bytes of noise.
    const Codec* c = find_codec("chanctx");
    const size_t records = 100000;
    Bytes out;
    try {
        c->decode(chanctx_range_overrun_payload(records), chanctx_range_overrun_params(), records * 2, out);
        FAIL("decoded");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("read past the end") != std::string::npos);
    }
}

namespace {

// A stream over memory that records the largest single read asked of it: the reader sizes
// its buffer for each read, so this shows what a size field made it allocate.
class CountingStream final : public InputStream {
public:
    explicit CountingStream(ByteSpan d) : in_(d) {}
    size_t read(uint8_t* dst, size_t n) override {
        largest_read = std::max(largest_read, n);
        return in_.read(dst, n);
    }
    size_t largest_read = 0;

private:
    MemoryStream in_;
};

size_t largest_read_decoding(const Bytes& stz, std::string& error) {
    CountingStream s(stz);
    NullSink sink;
    try {
        decompress_stream(s, sink, 1);
    } catch (const Error& e) {
        error = e.what();
    }
    return s.largest_read;
}

}  // namespace

TEST_CASE("hostile: header and payload sizes of a short stream do not size the reader's buffers", "[hostile]") {
    CompressOptions opt;
    opt.codec.all = "zstd:3";
    opt.container = ContainerLayout::Fixed;  // the u32 header length of versions 1 and 2
    const Bytes real = compress_bytes(sample_rows(3000), opt);
    Bytes header_claim(real.begin(), real.begin() + 100);
    store_le<uint32_t>(header_claim.data() + wire::FixedHeader::kLengthAt, kMaxHeaderBytes);  // 64 MiB in a 100-byte stream
    std::string err;
    CHECK(largest_read_decoding(header_claim, err) <= (1u << 20));
    CHECK(err.find("truncated header") != std::string::npos);

    // A store chunk of 64 MiB whose payload is 100 bytes: every size is legal, the stream is short.
    Bytes stz = craft_stz(Bytes(100, 1), {{0, 64u << 20, {}}}, Bytes(100, 1), 64u << 20);
    const size_t chunk_at = wire::FixedHeader::decode(stz.data()).end();
    store_le<uint32_t>(stz.data() + chunk_at + wire::kKindBytes + wire::ChunkHead::kStoredAt, 64u << 20);
    err.clear();
    CHECK(largest_read_decoding(stz, err) <= (1u << 20));
    CHECK(err.find("truncated chunk payload") != std::string::npos);
}
