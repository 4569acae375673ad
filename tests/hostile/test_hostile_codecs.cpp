// Hostile .stz files built here, with valid checksums, aimed at the codecs and the container
// (issue 14, items 1, 4, 7 and 8): parameters out of range, pipelines the reader cannot
// store, chunk counts no file could hold, stages that claim outputs their input cannot
// justify, range-coder streams that run past their end. Each must give a clear error.
#include <catch2/catch.hpp>

#include <algorithm>

#include "../test_util.hpp"

using namespace stz;
using namespace stztest;

namespace {

struct RawStage {
    uint8_t codec;
    uint32_t in_size;
    Bytes params;
};

Bytes le64(uint64_t a) {
    Bytes b;
    append_le<uint64_t>(b, a);
    return b;
}
Bytes le64x2(uint64_t a, uint64_t b) {
    Bytes p = le64(a);
    append_le<uint64_t>(p, b);
    return p;
}
Bytes chanctx_params(unsigned record, uint8_t flags, uint64_t row_records, const Bytes& classes) {
    Bytes p{static_cast<uint8_t>(record), flags};
    append_le<uint64_t>(p, row_records);
    append_bytes(p, classes);
    return p;
}

// A complete .stz of one opaque section and one chunk, written byte by byte (not by
// ContainerWriter, which refuses what the reader rejects), with every checksum valid. The
// file and chunk claim `declared` bytes (default: the size of `raw`, whose hash is stored).
Bytes craft_stz(const Bytes& raw, const std::vector<RawStage>& stages, const Bytes& payload, uint32_t declared = 0) {
    const uint32_t raw_size = declared ? declared : static_cast<uint32_t>(raw.size());
    ContainerHeader h;
    h.original_size = raw_size;
    Section s;
    s.name = "data";
    s.size = raw_size;
    h.sections.push_back(s);
    MemorySink sink;
    { ContainerWriter w(sink, h); }  // writes the header only
    Bytes out = sink.out;
    const uint64_t chunk_at = out.size();
    Bytes rec;
    rec.push_back(1);
    append_le<uint32_t>(rec, 0);
    append_le<uint64_t>(rec, 0);
    append_le<uint32_t>(rec, raw_size);
    append_le<uint32_t>(rec, static_cast<uint32_t>(payload.size()));
    rec.push_back(static_cast<uint8_t>(stages.size()));
    for (const auto& st : stages) {
        rec.push_back(st.codec);
        append_le<uint32_t>(rec, st.in_size);
        rec.push_back(static_cast<uint8_t>(st.params.size()));
        append_bytes(rec, st.params);
    }
    append_le<uint64_t>(rec, hash64(raw));
    Hasher ch;
    ch.update(rec);
    ch.update(payload);
    append_le<uint64_t>(rec, ch.digest());
    append_bytes(out, rec);
    append_bytes(out, payload);
    const uint64_t end_at = out.size();
    Bytes end;
    end.push_back(0);
    append_le<uint32_t>(end, 1);
    append_le<uint64_t>(end, chunk_at);
    append_le<uint32_t>(end, 0);
    append_le<uint32_t>(end, raw_size);
    append_le<uint32_t>(end, static_cast<uint32_t>(payload.size()));
    append_le<uint64_t>(end, raw_size);
    append_le<uint64_t>(end, hash64(raw));
    append_le<uint64_t>(end, hash64(end));
    append_le<uint64_t>(end, end_at);
    end.insert(end.end(), kStzTrailerMagic, kStzTrailerMagic + 8);
    append_bytes(out, end);
    return out;
}

// One stage of `codec` with `params` over `raw`, the payload encoded with `good_params`.
Bytes craft_one_stage(const std::string& codec, const Bytes& good_params, const Bytes& params, const Bytes& raw) {
    const Codec* c = find_codec(codec);
    Bytes payload;
    c->encode(raw, good_params, payload);
    return craft_stz(raw, {{c->id(), static_cast<uint32_t>(raw.size()), params}}, payload);
}

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

// Some f16-like rows: repeated values, so every codec has something to model.
Bytes sample_rows(size_t n) {
    Bytes b = random_bytes(n, 77);
    for (size_t i = 0; i < n; i += 2) b[i + 1 < n ? i + 1 : i] = static_cast<uint8_t>(0x3c + (i / 64) % 3);
    std::fill(b.begin() + n / 2, b.begin() + n / 2 + n / 8, 0);
    return b;
}

}  // namespace

TEST_CASE("hostile: chanctx row_records = 2^63+1 with the match model is refused, not a crash", "[hostile]") {
    const Bytes raw = sample_rows(8192);
    // One-byte records: kHistory x rows wraps to 2, so record 2 reads 2^63+1 records back.
    const Bytes good = chanctx_params(1, 2, 32, {1});
    const Bytes bad = chanctx_params(1, 2, (1ull << 63) + 1, {1});
    const std::string err = decode_error(craft_one_stage("chanctx", good, bad, raw));
    INFO(err);
    CHECK(err.find("bad parameters") != std::string::npos);
    CHECK(err.find("chunk 0") != std::string::npos);
    // and the codec alone refuses them too (decode validates, whoever calls it)
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
    CompressOptions opt;
    opt.codec.all = "zstd:3";
    const Bytes real = compress_bytes(sample_rows(3000), opt);
    const uint64_t header = 16 + load_le<uint32_t>(real.data() + 12) + 8;
    // End record right after the header, claiming as many chunks as the apparent size allows.
    const uint64_t size = (256ull << 20) + 1;  // apparent size of the crafted file
    const uint64_t end = header;
    const uint64_t n = (size - 16 - end - 29) / 20;
    const uint64_t file_size = end + n * 20 + 29 + 16;
    Bytes end_head{0};
    append_le<uint32_t>(end_head, static_cast<uint32_t>(n));
    Bytes trailer = le64(end);
    trailer.insert(trailer.end(), kStzTrailerMagic, kStzTrailerMagic + 8);
    SparseSource src(file_size, {{0, Bytes(real.begin(), real.begin() + header)}, {end, end_head}, {file_size - 16, trailer}});
    try {
        (void)list_container(src);
        FAIL("listed a file with " << n << " chunks");
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
    const Bytes params = chanctx_params(2, 2, 32, {2, 1});
    Bytes payload;
    append_le<uint32_t>(payload, 96);
    append_bytes(payload, random_bytes(96, 5));
    const Bytes raw(16, 0);  // its content is irrelevant: the chunk record is checked first
    const Bytes stz = craft_stz(raw, {{10, 64u << 20, params}}, payload, 64u << 20);
    const std::string err = decode_error(stz);
    INFO(err);
    CHECK(err.find("cannot decode to the declared") != std::string::npos);
}

TEST_CASE("hostile: a range-coder stream that runs past its end is refused as it happens", "[hostile]") {
    // f16 records without the match model: the low byte from the raw plane, the high byte
    // range coded. 16 range-coder bytes cannot hold 100000 modelled bytes of noise.
    const Codec* c = find_codec("chanctx");
    const Bytes params = chanctx_params(2, 0, 64, {0, 1});
    const size_t records = 100000;
    Bytes in;
    append_le<uint32_t>(in, 16);
    append_bytes(in, random_bytes(16, 9));
    append_bytes(in, random_bytes(records, 10));  // the raw low-byte plane
    Bytes out;
    try {
        c->decode(in, params, records * 2, out);
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
    const Bytes real = compress_bytes(sample_rows(3000), opt);
    Bytes header_claim(real.begin(), real.begin() + 100);
    store_le<uint32_t>(header_claim.data() + 12, kMaxHeaderBytes);  // a 64 MiB header in a 100-byte stream
    std::string err;
    CHECK(largest_read_decoding(header_claim, err) <= (1u << 20));
    CHECK(err.find("truncated header") != std::string::npos);

    // A store chunk of 64 MiB whose payload is 100 bytes: every size is legal, the stream is short.
    Bytes stz = craft_stz(Bytes(100, 1), {{0, 64u << 20, {}}}, Bytes(100, 1), 64u << 20);
    const size_t chunk_at = 16 + load_le<uint32_t>(stz.data() + 12) + 8;
    store_le<uint32_t>(stz.data() + chunk_at + 17, 64u << 20);  // stored size
    err.clear();
    CHECK(largest_read_decoding(stz, err) <= (1u << 20));
    CHECK(err.find("truncated chunk payload") != std::string::npos);
}
