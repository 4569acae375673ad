// The parsers' reader: the same bytes whatever the source, and from a file-like source (no
// memory to read in place) a read-ahead that stays small across skipped rows.
#include <catch2/catch.hpp>

#include "formats/source_reader.hpp"
#include "test_util.hpp"

using namespace stz;

namespace {

// A source without memory() that counts the bytes it hands out.
class CountingSource final : public InputSource {
public:
    explicit CountingSource(const Bytes& d) : d_(d) {}
    uint64_t size() const override { return d_.size(); }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override {
        REQUIRE(off + n <= d_.size());
        std::copy_n(d_.data() + off, n, dst);
        fetched += n;
    }
    uint64_t fetched = 0;

private:
    const Bytes& d_;
};

// 64 layers: a 12-byte header (i32 index, u64 row bytes) before 20 KB of rows that are skipped.
Bytes layered_file() {
    Bytes f;
    for (uint32_t il = 0; il < 64; ++il) {
        append_le<uint32_t>(f, il);
        append_le<uint64_t>(f, 20000);
        f.resize(f.size() + 20000, static_cast<uint8_t>(il));
    }
    return f;
}

template <typename Source>
void walk_layers(Source& src) {
    SourceReader r(src);
    for (uint32_t il = 0; il < 64; ++il) {
        CHECK(r.u32("layer") == il);
        const uint64_t rows = r.u64("layer");
        REQUIRE(rows == 20000);
        r.skip(rows, "rows");
    }
    CHECK(r.at_end());
}

}  // namespace

TEST_CASE("SourceReader reads headers between skipped rows without fetching the rows", "[formats]") {
    const Bytes f = layered_file();
    CountingSource counting(f);
    walk_layers(counting);
    // A refill after a skip is 4 KiB: 64 of them, not 64 x 64 KiB (more than the whole file).
    CHECK(counting.fetched <= 64 * 4096);
    MemorySource memory(f);
    walk_layers(memory);
}

TEST_CASE("SourceReader's read-ahead grows over a sequential list and returns its bytes exactly", "[formats]") {
    Bytes f;
    for (uint32_t i = 0; i < 100000; ++i) append_le<uint32_t>(f, i * 2654435761u);
    CountingSource counting(f);
    SourceReader r(counting);
    for (uint32_t i = 0; i < 100000; ++i) REQUIRE(r.u32("list") == i * 2654435761u);
    CHECK(r.at_end());
    CHECK(counting.fetched == f.size());  // each byte fetched once: refills start where the last ended
    CHECK_THROWS_AS(r.u8("past the end"), DataError);
}
