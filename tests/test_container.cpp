// The .stz container: round trips at chunk boundaries, identical output for every thread
// count, listing without decoding, and detection of every truncation and of bit flips.
#include <catch2/catch.hpp>
#include <xxhash.h>

#include "test_util.hpp"
#include "layout/wire.hpp"

using namespace stz;
using namespace stztest;

TEST_CASE("round trip at sizes around chunk boundaries", "[container]") {
    CompressOptions opt;
    opt.chunk_bytes = 4096;
    for (size_t n : {0, 1, 4095, 4096, 4097, 8191, 8192, 8193, 3 * 4096 + 17}) {
        Bytes in = random_bytes(n, n);
        if (n > 100) std::fill(in.begin() + n / 3, in.begin() + n / 2, 0);
        INFO("size " << n);
        Bytes c = compress_bytes(in, opt);
        REQUIRE(decompress_bytes(c) == in);
        REQUIRE(decompress_bytes(c, 2) == in);
    }
}

TEST_CASE("output is identical for every thread count", "[container]") {
    Bytes in = random_bytes(3u << 20, 7);
    std::fill(in.begin(), in.begin() + (1u << 20), 0);
    CompressOptions opt;
    opt.chunk_bytes = 256u << 10;
    opt.threads = 1;
    Bytes one = compress_bytes(in, opt);
    for (unsigned t : {2u, 3u, 8u}) {
        opt.threads = t;
        CHECK(compress_bytes(in, opt) == one);
    }
}

TEST_CASE("list reads the header and index without decoding", "[container]") {
    Bytes in = random_bytes(100000, 3);
    CompressOptions opt;
    opt.chunk_bytes = 16384;
    Bytes c = compress_bytes(in, opt);
    MemorySource src(c);
    ContainerListing L = list_container(src);
    CHECK(L.header.original_size == in.size());
    CHECK(L.header.format == "opaque");
    CHECK(L.index.size() == 7);
    uint64_t raw = 0;
    for (const auto& e : L.index) raw += e.raw_size;
    CHECK(raw == in.size());
    CHECK(L.content_hash == XXH3_64bits(in.data(), in.size()));
}

namespace {

// The fixed-width records of versions 1 and 2 (still read, and written for tools that edit
// records by offset); the compact ones of version 3 have their own tests (test_container_compact.cpp).
Bytes small_stz(ContainerLayout layout = ContainerLayout::Fixed) {
    Bytes in = random_bytes(3000, 11);
    std::fill(in.begin() + 500, in.begin() + 2500, 0);
    CompressOptions opt;
    opt.chunk_bytes = 4096;
    opt.codec.all = "zstd:3";
    opt.container = layout;
    return compress_bytes(in, opt);
}

bool decode_fails(const Bytes& c) {
    try {
        (void)decompress_bytes(c);
        return false;
    } catch (const Error&) {
        return true;
    }
}

// Offset of the first chunk record.
size_t first_chunk(const Bytes& c) { return wire::FixedHeader::decode(c.data()).end(); }

void rehash_first_chunk(Bytes& c) { wire::rehash_chunk(c, first_chunk(c)); }

}  // namespace

TEST_CASE("every truncation of a .stz is detected", "[container][corruption]") {
    const auto layout = GENERATE(ContainerLayout::Fixed, ContainerLayout::Compact);
    Bytes c = small_stz(layout);
    REQUIRE(!decode_fails(c));
    for (size_t n = 0; n < c.size(); ++n) {
        Bytes t(c.begin(), c.begin() + n);
        INFO("truncated to " << n << " of " << c.size());
        REQUIRE(decode_fails(t));
    }
    Bytes longer = c;
    longer.push_back(0);
    CHECK(decode_fails(longer));
}

// Testing (RecordCheck::BeforeDecode) names every flip; decompression refuses it or, where the
// flipped bit is one decoding does not read or that leaves the chunk as written (zstd's frame
// has a few), gives back exactly the original.
TEST_CASE("bit flips anywhere in a .stz are detected", "[container][corruption]") {
    const auto layout = GENERATE(ContainerLayout::Fixed, ContainerLayout::Compact);
    Bytes c = small_stz(layout);
    const Bytes original = decompress_bytes(c, RecordCheck::BeforeDecode);
    size_t flips = 0;
    for (size_t pos = 0; pos < c.size(); pos += (pos < 64 ? 1 : 3))
        for (int bit = 0; bit < 8; bit += 3) {
            Bytes t = c;
            t[pos] ^= static_cast<uint8_t>(1u << bit);
            INFO("flip byte " << pos << " bit " << bit);
            REQUIRE_THROWS_AS(decompress_bytes(t, RecordCheck::BeforeDecode), Error);
            REQUIRE(refused_or_exact(t, original));
            ++flips;
        }
    CHECK(flips > (layout == ContainerLayout::Fixed ? 100u : 30u));
}

TEST_CASE("unknown versions, codecs and absurd sizes are rejected with a clear message", "[container][corruption]") {
    Bytes c = small_stz();
    Bytes v = c;
    v[8] = 9;
    try {
        (void)decompress_bytes(v);
        FAIL("accepted version 9");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("unsupported .stz format version 9") != std::string::npos);
    }
    Bytes k = c;
    size_t stage = wire::chunk_layout(k, first_chunk(k)).stages;
    k[stage + wire::StageHead::kCodecAt] = 200;
    rehash_first_chunk(k);
    try {
        (void)decompress_bytes(k);
        FAIL("accepted codec 200");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("unknown codec id 200") != std::string::npos);
    }
    Bytes s = c;
    store_le<uint32_t>(s.data() + first_chunk(s) + wire::kKindBytes + wire::ChunkHead::kRawSizeAt, 0x7fffffff);  // 2 GiB
    rehash_first_chunk(s);
    try {
        (void)decompress_bytes(s);
        FAIL("accepted a 2 GiB chunk");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("bad chunk size") != std::string::npos);
    }
    Bytes m = c;
    m[0] = 'X';
    CHECK_THROWS_WITH(decompress_bytes(m), Catch::Contains("not a statezip"));
}

TEST_CASE("a chunk whose payload was altered and re-hashed still fails its raw checksum", "[container][corruption]") {
    Bytes in(5000, 0);
    for (size_t i = 0; i < in.size(); i += 3) in[i] = static_cast<uint8_t>(i);
    CompressOptions opt;
    opt.codec.all = "store";
    opt.container = ContainerLayout::Fixed;
    Bytes c = compress_bytes(in, opt);
    size_t payload = wire::chunk_layout(c, first_chunk(c)).payload;
    c[payload + 10] ^= 1;
    rehash_first_chunk(c);
    CHECK_THROWS_WITH(decompress_bytes(c), Catch::Contains("checksum mismatch in decoded chunk"));
}

TEST_CASE("header properties: version 2 only when present, round trip, unknown required ones refused", "[container]") {
    const auto layout = GENERATE(ContainerLayout::Fixed, ContainerLayout::Compact);
    const bool fixed = layout == ContainerLayout::Fixed;
    Bytes in = random_bytes(5000, 21);
    CompressOptions opt;
    opt.container = layout;
    Bytes plain = compress_bytes(in, opt);
    // The fixed layout: 0.1.0 still reads files without properties.
    CHECK(wire::FixedHeader::decode(plain.data()).version == (fixed ? kStzVersion : kStzVersionCompact));

    opt.properties = {{"lossy", "bits:V=6", false}, {"reference", "name=a.bin", true}};
    Bytes with = compress_bytes(in, opt);
    CHECK(wire::FixedHeader::decode(with.data()).version == (fixed ? kStzVersionProperties : kStzVersionCompact));
    // "reference" is honoured (patch.hpp): without its reference file the data is not handed out.
    CHECK_THROWS_WITH(decompress_bytes(with), Catch::Contains("reference"));
    MemorySource src(with);
    ContainerListing L = list_container(src);
    REQUIRE(L.header.properties.size() == 2);
    REQUIRE(L.header.property("lossy"));
    CHECK(L.header.property("lossy")->value == "bits:V=6");
    CHECK_FALSE(L.header.property("lossy")->required);
    CHECK(L.header.property("reference")->required);
    CHECK(L.header.property("absent") == nullptr);

    // An optional property this release does not know is kept and ignored; a required one
    // refuses the file, naming it.
    opt.properties = {{"lossy", "bits:V=6", false}, {"future-note", "x", false}};
    CHECK(decompress_bytes(compress_bytes(in, opt)) == in);
    opt.properties = {{"future-transform", "x", true}};
    CHECK_THROWS_WITH(decompress_bytes(compress_bytes(in, opt)), Catch::Contains("future-transform"));
    Bytes listed = compress_bytes(in, opt);
    MemorySource src2(listed);
    CHECK_THROWS_WITH(list_container(src2), Catch::Contains("does not know"));
}

// The decoder checks each chunk's raw_hash and the chunks' order and coverage, and does not
// hash the whole output again: every single-bit flip of a many-chunk file, wherever it lands
// (header, heads, checksums, payloads, content hash, end record), is refused or still gives
// the original bytes exactly, with one worker and with several.
TEST_CASE("no bit flip of a many-chunk file decodes to other bytes", "[container]") {
    Bytes in = channel_floats16(64, 256, 5);  // 32 KiB of f16-like values, then a noisy tail
    append_bytes(in, random_bytes(9000, 6));
    CompressOptions opt;
    opt.chunk_bytes = 4096;
    const Bytes z = compress_bytes(in, opt);
    REQUIRE(decompress_bytes(z) == in);
    size_t refused = 0, same = 0;
    for (size_t i = 0; i < z.size(); ++i) {
        for (uint8_t bit : {uint8_t(0x01), uint8_t(0x80)}) {
            Bytes f = z;
            f[i] ^= bit;
            const unsigned threads = i % 3 == 0 ? 2 : 1;
            try {
                const Bytes out = decompress_bytes(f, threads);
                CHECK(out == in);
                ++same;
            } catch (const Error&) {
                ++refused;
            }
        }
    }
    CHECK(refused > 2 * z.size() * 9 / 10);  // nearly every byte matters
    INFO("flips that still decoded to the original: " << same);
}
