// Version 3 (compact) .stz records: round trips of empty, tiny, multi-chunk and multi-section
// inputs, the same content as the fixed-width layout in fewer bytes, at most 40 bytes of
// container for a one-chunk file, listing, and clear messages for edited records.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <xxhash.h>

#include "compact_util.hpp"

using namespace stz;
using namespace stztest;

namespace {

uint16_t version_of(const Bytes& c) { return load_le<uint16_t>(c.data() + wire::FixedHeader::kVersionAt); }

ContainerListing listing(const Bytes& c) {
    MemorySource src(c);
    return list_container(src);
}

}  // namespace

TEST_CASE("compact: empty, tiny and multi-chunk inputs round trip as version 3", "[container][compact]") {
    CompressOptions opt;
    opt.chunk_bytes = 4096;
    std::vector<size_t> sizes = {0, 4095, 4096, 4097, 8192, 3 * 4096 + 17};
    for (size_t n = 1; n <= 64; ++n) sizes.push_back(n);
    for (size_t n : sizes) {
        INFO("size " << n);
        Bytes in = random_bytes(n, n + 100);
        if (n > 100) std::fill(in.begin() + n / 3, in.begin() + n / 2, 0);
        const Bytes c = compress_bytes(in, opt);
        CHECK(version_of(c) == kStzVersionCompact);
        REQUIRE(decompress_bytes(c) == in);
        REQUIRE(decompress_bytes(c, 2) == in);
        const ContainerListing L = listing(c);
        CHECK(L.header.original_size == n);
        CHECK(L.index.size() == (n + 4095) / 4096);
        CHECK(L.content_hash == XXH3_64bits(in.data(), in.size()));
        CHECK(L.container_size == c.size());
    }
}

TEST_CASE("compact: multi-section state files keep their section table, index and bytes", "[container][compact]") {
    for (const char* name : {"ggsq3.stories260K.f16.fa1.c1024.t322.bin", "ggsq3.stories260K-hd32.q8_0.fa1.c1024.t322.bin",
                             "C-65cdf34.main.prompt-cache.ggsn1.c512.f16.np446.L5-gqa2.bin"}) {
        INFO(name);
        const Bytes in = read_file(std::string(STATEZIP_TEST_DATA) + "/" + name);
        REQUIRE(!in.empty());
        CompressOptions opt;
        opt.chunk_bytes = 64u << 10;  // several chunks in the larger sections too
        const Bytes compact = compress_bytes(in, opt);
        opt.container = ContainerLayout::Fixed;
        const Bytes fixed = compress_bytes(in, opt);
        CHECK(version_of(compact) == kStzVersionCompact);
        REQUIRE(decompress_bytes(compact) == in);
        REQUIRE(decompress_bytes(compact, 3) == in);
        const ContainerListing a = listing(compact), b = listing(fixed);
        REQUIRE(a.header.sections.size() == b.header.sections.size());
        CHECK(a.header.sections.size() > 3);
        for (size_t i = 0; i < a.header.sections.size(); ++i) {
            const Section &x = a.header.sections[i], &y = b.header.sections[i];
            CHECK((x.name == y.name && x.kind == y.kind && x.type == y.type && x.offset == y.offset && x.size == y.size &&
                   x.rows == y.rows && x.row_elems == y.row_elems && x.transposed == y.transposed &&
                   x.filled_elems == y.filled_elems));
        }
        CHECK((a.header.format == b.header.format && a.header.format_version == b.header.format_version &&
               a.header.detail == b.header.detail && a.header.note == b.header.note));
        REQUIRE(a.index.size() == b.index.size());
        CHECK(a.index.size() > a.header.sections.size() / 2);
        for (size_t i = 0; i < a.index.size(); ++i)
            CHECK((a.index[i].section == b.index[i].section && a.index[i].raw_size == b.index[i].raw_size &&
                   a.index[i].stored_size == b.index[i].stored_size));
        CHECK(a.content_hash == b.content_hash);
        // Same payloads: every byte saved is container.
        CHECK(compact.size() + 30 * a.index.size() < fixed.size());
    }
}

TEST_CASE("compact: a one-chunk file costs at most 40 bytes of container", "[container][compact]") {
    CompressOptions opt;
    for (size_t n = 1; n <= 64; ++n) {
        const Bytes in = random_bytes(n, 7 * n);  // incompressible: stored
        const Bytes c = compress_bytes(in, opt);
        INFO("size " << n << " -> " << c.size());
        CHECK(c.size() <= n + 40);
    }
    // With a zstd stage (its two parameter bytes are part of the record).
    opt.codec.all = "zstd:3";
    const Bytes zeros(64, 0);
    const Bytes z = compress_bytes(zeros, opt);
    const CompactFile f = compact_file(z);
    REQUIRE(f.chunks.size() == 1);
    CHECK(z.size() - (f.chunks[0].end - f.chunks[0].payload) <= 40);
    CHECK(decompress_bytes(z) == zeros);
    opt.container = ContainerLayout::Fixed;
    const Bytes old = compress_bytes(random_bytes(28, 1), opt);
    CHECK(old.size() > 28 + 200);  // what versions 1/2 cost
}

TEST_CASE("compact: properties, format names, details and notes round trip", "[container][compact]") {
    ContainerHeader h;
    h.original_size = 10;
    h.format = "not-a-known-format";
    h.format_version = -7;
    h.detail = "detail text";
    h.note = "a note of its own";
    h.set_property("lossy", "x", false);
    h.set_property("future-note", std::string(300, 'v'), false);
    for (int i = 0; i < 3; ++i) {
        Section s;
        s.name = i == 1 ? "data" : "s" + std::to_string(i);
        s.kind = i == 2 ? SectionKind::KvValue : SectionKind::Opaque;
        s.type = i == 2 ? ElemType::F16 : ElemType::Bytes;
        s.offset = i == 0 ? 0 : i == 1 ? 2 : 6;
        s.size = i == 0 ? 2 : 4;
        s.rows = i == 2 ? 2 : 0;
        s.row_elems = i == 2 ? 1 : 0;
        s.transposed = i == 2;
        s.filled_elems = i == 2 ? 1 : 0;
        h.sections.push_back(s);
    }
    MemorySink sink;
    Pipeline store;
    store.stages.push_back({find_codec("store"), {}});
    const Bytes raw = random_bytes(10, 2);
    {
        ContainerWriter w(sink, h);
        for (uint32_t i = 0; i < 3; ++i) {
            const ByteSpan part(raw.data() + h.sections[i].offset, h.sections[i].size);
            w.add_chunk(i, h.sections[i].offset, uint32_t(part.size()), hash64(part), store, encode_pipeline(store, part));
        }
        w.finish(hash64(raw));
    }
    CHECK(decompress_bytes(sink.out) == raw);
    const ContainerListing L = listing(sink.out);
    CHECK(L.header.format == h.format);
    CHECK(L.header.format_version == -7);
    CHECK(L.header.detail == h.detail);
    CHECK(L.header.note == h.note);
    REQUIRE(L.header.properties.size() == 2);
    CHECK(L.header.property("future-note")->value == std::string(300, 'v'));
    REQUIRE(L.header.sections.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
        const Section &x = L.header.sections[i], &y = h.sections[i];
        CHECK((x.name == y.name && x.kind == y.kind && x.type == y.type && x.offset == y.offset && x.size == y.size &&
               x.rows == y.rows && x.row_elems == y.row_elems && x.transposed == y.transposed &&
               x.filled_elems == y.filled_elems));
    }
    // Without its chunks, the end record is refused: the chunks must cover the original.
    MemorySink none;
    ContainerWriter(none, h).finish(hash64({}));
    CHECK_THROWS_WITH(decompress_bytes(none.out), Catch::Contains("chunks cover 0 of 10 bytes"));
    CHECK(list_fails(none.out));
}

TEST_CASE("compact: unknown codecs, absurd sizes and unknown flags are refused with a clear message", "[container][compact]") {
    CompressOptions opt;
    opt.codec.all = "zstd:3";
    Bytes in = random_bytes(3000, 5);
    std::fill(in.begin() + 100, in.end(), 0);
    const Bytes c = compress_bytes(in, opt);
    const CompactFile f = compact_file(c);
    REQUIRE(f.chunks.size() == 1);
    const CompactRecord& r = f.chunks[0];

    // The first stage's tag (raw_size and stored_size are two bytes and one or two here).
    Bytes k = c;
    const size_t stage = r.start + wire::varint_size(3000) + wire::varint_size(r.end - r.payload);
    REQUIRE(k[stage] == (find_codec("zstd")->id() << 2 | 3));  // with parameters, the last stage
    k[stage] = 0xa3;  // codec 200: (200 << 2 | 3) = 803, two varint bytes 0xa3 0x06
    k.insert(k.begin() + long(stage) + 1, 0x06);
    CompactRecord moved = r;
    ++moved.sums, ++moved.payload, ++moved.end;
    rehash_compact_chunk(k, f, moved);
    CHECK_THROWS_WITH(decompress_bytes(k), Catch::Contains("unknown codec id 200"));

    // A raw size of 2 GiB (five varint bytes instead of two).
    Bytes s = c;
    const Bytes big = [] {
        Bytes b;
        wire::put_varint(b, 0x7fffffff);
        return b;
    }();
    s.erase(s.begin() + long(r.start), s.begin() + long(r.start + wire::varint_size(3000)));
    s.insert(s.begin() + long(r.start), big.begin(), big.end());
    CHECK_THROWS_WITH(decompress_bytes(s), Catch::Contains("bad chunk size"));

    // A non-canonical number (a redundant zero group) is refused, not read as the same value.
    Bytes nc = c;
    REQUIRE(nc[r.start] == 0xb8);  // 3000 = 0xb8 0x17; written as 0xb8 0x97 0x00
    nc[r.start + 1] |= 0x80;
    nc.insert(nc.begin() + long(r.start) + 2, 0x00);
    CHECK_THROWS_WITH(decompress_bytes(nc), Catch::Contains("bad number"));

    Bytes v = c;
    v[8] = 9;
    CHECK_THROWS_WITH(decompress_bytes(v), Catch::Contains("unsupported .stz format version 9"));
    MemorySource vs(v);
    CHECK_THROWS_WITH(list_container(vs), Catch::Contains("unsupported .stz format version 9"));
}

TEST_CASE("compact: a payload altered and re-hashed still fails its raw checksum", "[container][compact]") {
    Bytes in(5000, 0);
    for (size_t i = 0; i < in.size(); i += 3) in[i] = static_cast<uint8_t>(i);
    CompressOptions opt;
    opt.codec.all = "store";
    Bytes c = compress_bytes(in, opt);
    const CompactFile f = compact_file(c);
    REQUIRE(f.chunks.size() == 1);
    c[f.chunks[0].payload + 10] ^= 1;
    CHECK_THROWS_WITH(decompress_bytes(c), Catch::Contains("checksum mismatch in chunk 0"));
    rehash_compact_chunk(c, f, f.chunks[0]);
    CHECK_THROWS_WITH(decompress_bytes(c), Catch::Contains("checksum mismatch in decoded chunk"));
}

TEST_CASE("compact: versions 1, 2 and 3 of the same input decode alike", "[container][compact]") {
    // A version 1 and a version 2 file from today's writer (fixed layout) and version 3 agree.
    const Bytes in = random_bytes(20000, 9);
    CompressOptions opt;
    opt.container = ContainerLayout::Fixed;
    const Bytes v1 = compress_bytes(in, opt);
    opt.properties = {{"lossy", "note", false}};
    const Bytes v2 = compress_bytes(in, opt);
    opt.container = ContainerLayout::Compact;
    const Bytes v3 = compress_bytes(in, opt);
    CHECK(version_of(v1) == 1);
    CHECK(version_of(v2) == 2);
    CHECK(version_of(v3) == 3);
    for (const Bytes* c : {&v1, &v2, &v3}) CHECK(decompress_bytes(*c) == in);
}

TEST_CASE("compact: the header alone is checked through the first record when the stream holds it", "[container][compact]") {
    const Bytes in = random_bytes(5000, 12);
    CompressOptions opt;
    opt.properties = {{"lossy", "some text to flip", false}};
    const Bytes c = compress_bytes(in, opt);
    const CompactFile f = compact_file(c);
    MemoryStream whole(c);
    CHECK(read_checked_header(whole).original_size == in.size());
    // A flip inside the property's text still parses: only the first record's check can tell.
    const std::string text = "some text to flip";
    const auto at = std::search(c.begin(), c.end(), text.begin(), text.end());
    REQUIRE(at != c.end());
    REQUIRE(size_t(at - c.begin()) < f.header_end);
    Bytes flipped = c;
    flipped[size_t(at - c.begin())] ^= 1;
    MemoryStream bad(flipped);
    CHECK_THROWS_WITH(read_checked_header(bad), Catch::Contains("checksum mismatch in chunk 0"));
    // The first bytes of a file (the header, part of the first record) still give its header.
    const Bytes prefix(c.begin(), c.begin() + long(f.header_end) + 5);
    MemoryStream head(prefix);
    CHECK(read_checked_header(head).property("lossy")->value == text);
}

TEST_CASE("compact: thousands of one-byte chunks list and decode", "[container][compact]") {
    const Bytes raw = random_bytes(5000, 13);
    const Bytes c = chunked_stz(raw, {1000, 0, 4000}, 1);
    CHECK(decompress_bytes(c) == raw);
    const ContainerListing L = listing(c);
    REQUIRE(L.index.size() == 5000);
    CHECK(L.index.front().section == 0);
    CHECK(L.index.back().section == 2);  // the empty section holds no chunk
    CHECK(L.content_hash == XXH3_64bits(raw.data(), raw.size()));
    uint64_t at = 0;
    for (const auto& e : L.index) {
        CHECK(e.container_offset > at);
        at = e.container_offset;
    }
}

TEST_CASE("compact: golden version 3 files still decode to the same bytes", "[container][compact][golden]") {
    const std::string dir = std::string(STATEZIP_TEST_DATA) + "/golden-container-3";
    std::ifstream m(dir + "/MANIFEST.tsv");
    std::string line;
    size_t files = 0;
    while (std::getline(m, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        std::string file, hex;
        uint64_t size = 0;
        fields >> file >> size >> hex;
        INFO(file);
        const Bytes packed = read_file(dir + "/" + file);
        REQUIRE(packed.size() >= wire::kCompactFixedBytes);
        CHECK(version_of(packed) == kStzVersionCompact);
        const Bytes raw = decompress_bytes(packed);
        CHECK(raw.size() == size);
        CHECK(XXH3_64bits(raw.data(), raw.size()) == std::stoull(hex, nullptr, 16));
        CHECK(listing(packed).content_hash == std::stoull(hex, nullptr, 16));
        ++files;
    }
    CHECK(files == 8);
}
