// Version 3 (compact) records under damage: every truncation and every bit flip of small
// files is detected by the reader, and by the lister wherever the lister's checks cover the
// byte (everything but the payloads of a file of two or more chunks); chunks moved or
// dropped are refused.
#include <catch2/catch.hpp>

#include "../compact_util.hpp"

using namespace stz;
using namespace stztest;

namespace {

// An empty file, one-chunk files (stored and zstd), and a file of three chunks in two sections.
std::vector<std::pair<std::string, Bytes>> small_files() {
    std::vector<std::pair<std::string, Bytes>> out;
    CompressOptions opt;
    out.push_back({"empty", compress_bytes({}, opt)});
    for (size_t n : {1, 28, 64}) out.push_back({"random " + std::to_string(n), compress_bytes(random_bytes(n, n), opt)});
    Bytes zeros(300, 0);
    zeros[7] = 1;
    opt.codec.all = "zstd:3";
    out.push_back({"zstd 300", compress_bytes(zeros, opt)});
    out.push_back({"three chunks, two sections", chunked_stz(random_bytes(40, 3), {30, 10}, 16)});
    return out;
}

}  // namespace

TEST_CASE("hostile compact: every truncation is detected by the reader and the lister", "[hostile][compact]") {
    for (const auto& [name, c] : small_files()) {
        INFO(name << ", " << c.size() << " bytes");
        REQUIRE(!decode_fails(c));
        REQUIRE(!list_fails(c));
        for (size_t n = 0; n < c.size(); ++n) {
            const Bytes t(c.begin(), c.begin() + long(n));
            INFO("truncated to " << n);
            REQUIRE(decode_fails(t));
            REQUIRE(list_fails(t));
        }
        Bytes longer = c;
        longer.push_back(0);
        CHECK(decode_fails(longer));
        CHECK(list_fails(longer));
    }
}

TEST_CASE("hostile compact: every bit flip of a small file is detected", "[hostile][compact]") {
    for (const auto& [name, c] : small_files()) {
        INFO(name << ", " << c.size() << " bytes");
        const CompactFile f = compact_file(c);
        auto in_payload = [&](size_t pos) {
            for (const auto& r : f.chunks)
                if (pos >= r.payload && pos < r.end) return true;
            return false;
        };
        size_t flips = 0;
        for (size_t pos = 0; pos < c.size(); ++pos)
            for (int bit = 0; bit < 8; ++bit) {
                Bytes t = c;
                t[pos] ^= static_cast<uint8_t>(1u << bit);
                INFO("flip byte " << pos << " bit " << bit);
                REQUIRE(decode_fails(t));
                // The lister checks payloads only of a one-chunk file (whose check is its end check).
                if (f.chunks.size() <= 1 || !in_payload(pos)) REQUIRE(list_fails(t));
                ++flips;
            }
        CHECK(flips == 8 * c.size());
    }
}

TEST_CASE("hostile compact: chunks swapped, dropped or repeated are refused", "[hostile][compact]") {
    const Bytes c = chunked_stz(random_bytes(48, 4), {48}, 16);  // three chunks of 16 bytes: equal heads
    const CompactFile f = compact_file(c);
    REQUIRE(f.chunks.size() == 3);
    auto rec = [&](size_t i) { return Bytes(c.begin() + long(f.chunks[i].start), c.begin() + long(f.chunks[i].end)); };
    auto rebuild = [&](const std::vector<size_t>& order) {
        Bytes out(c.begin(), c.begin() + long(f.header_end));
        for (size_t i : order) append_bytes(out, rec(i));
        out.insert(out.end(), c.begin() + long(f.end_record), c.end());
        return out;
    };
    REQUIRE(rebuild({0, 1, 2}) == c);
    for (auto order : {std::vector<size_t>{1, 0, 2}, {0, 2, 1}, {0, 1}, {0, 1, 1}, {0, 0, 2}, {0, 1, 2, 2}}) {
        const Bytes t = rebuild(order);
        CHECK(decode_fails(t));
        CHECK(list_fails(t));
    }
}

TEST_CASE("hostile compact: a size claimed by a short stream does not size the reader's buffers", "[hostile][compact]") {
    // A header that claims 64 MiB, and a chunk that claims a 64 MiB payload, in a few bytes.
    Bytes h(kStzMagic, kStzMagic + 8);
    append_le<uint16_t>(h, kStzVersionCompact);
    wire::put_varint(h, uint64_t(kMaxHeaderBytes) << 1);
    h.resize(h.size() + 20, 0);
    CHECK_THROWS_WITH(decompress_bytes(h), Catch::Contains("truncated header"));
    CHECK(list_fails(h));

    // A legal store chunk of 64 MiB (raw and stored) in a 64 MiB file, with 100 payload bytes.
    const uint32_t big = 64u << 20;
    stz::ContainerHeader hh;
    hh.original_size = big;
    hh.sections.push_back({});
    hh.sections[0].size = big;
    MemorySink sink;
    { ContainerWriter w(sink, hh); }  // the header only
    Bytes c = sink.out;
    wire::CompactChunkHead head{big, big, {{find_codec("store")->id(), big, {}}}};
    head.encode(c);
    c.resize(c.size() + wire::kCompactChecksumBytes + 100, 1);
    CHECK_THROWS_WITH(decompress_bytes(c), Catch::Contains("truncated chunk payload"));
    CHECK(list_fails(c));
}
