// Chunk- and plane-sized buffers (base/large_buffers.hpp): aligned for huge pages above 1 MiB,
// every byte usable, and a freed block kept for the next buffer of its size class, up to the
// bound, never beyond it.
#include <catch2/catch.hpp>

#include <vector>

#include "base/bytes.hpp"
#include "base/large_buffers.hpp"

using namespace stz;

TEST_CASE("large buffers: aligned to a huge page, every byte written and read back", "[base][memory]") {
    const size_t n = kHugePageBytes * 3 + 12345;  // not a whole number of huge pages
    auto* p = static_cast<uint8_t*>(allocate_large(n));
    CHECK(reinterpret_cast<uintptr_t>(p) % kHugePageBytes == 0);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i * 131 + 7);
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) wrong += p[i] != static_cast<uint8_t>(i * 131 + 7);
    CHECK(wrong == 0);
    free_large(p, n);
}

TEST_CASE("large buffers: freed blocks are kept up to the bound and taken by the next buffers of their size", "[base][memory]") {
    // A size no other test uses. Earlier tests may have left blocks of other sizes kept: they
    // were freed first, so they are the ones that make room.
    const size_t n = 5 * kHugePageBytes + 777, block = 6 * kHugePageBytes;
    const size_t fit = kMaxKeptBytes / block, count = fit + 3;  // more than can be kept
    const size_t before = large_bytes_kept();
    std::vector<void*> blocks;
    for (size_t i = 0; i < count; ++i) blocks.push_back(allocate_large(n));
    CHECK(large_bytes_kept() == before);
    for (void* p : blocks) free_large(p, n);
    CHECK(large_bytes_kept() == fit * block);  // as many as fit, every other block unmapped
    blocks.clear();
    for (size_t i = 0; i < count; ++i) blocks.push_back(allocate_large(n));
    CHECK(large_bytes_kept() == 0);  // every kept block taken again
    for (void* p : blocks) free_large(p, n);
}

TEST_CASE("large buffers: a freed block of a new size makes room by unmapping the blocks freed longest ago", "[base][memory]") {
    const size_t old_n = 3 * kHugePageBytes + 5, old_block = 4 * kHugePageBytes;
    const size_t new_n = 2 * kHugePageBytes + 9, new_block = 3 * kHugePageBytes;
    const size_t fit = kMaxKeptBytes / old_block;
    std::vector<void*> blocks;
    for (size_t i = 0; i < fit; ++i) blocks.push_back(allocate_large(old_n));
    for (void* p : blocks) free_large(p, old_n);
    REQUIRE(large_bytes_kept() == kMaxKeptBytes);  // full of a size no longer asked for
    void* fresh = allocate_large(new_n);
    free_large(fresh, new_n);
    CHECK(large_bytes_kept() == (fit - 1) * old_block + new_block);  // one old block made room
    void* again = allocate_large(new_n);
    CHECK(again == fresh);  // the newest block, taken with its pages in place
    CHECK(large_bytes_kept() == (fit - 1) * old_block);
    free_large(again, new_n);
    blocks.clear();
    for (size_t i = 0; i + 1 < fit; ++i) blocks.push_back(allocate_large(old_n));  // the rest still kept
    CHECK(large_bytes_kept() == new_block);
    for (void* p : blocks) free_large(p, old_n);
}

TEST_CASE("large buffers: Bytes past the threshold grow, copy and shrink like any vector", "[base][memory]") {
    Bytes a;
    for (size_t i = 0; i < 3 * kHugePageBytes; ++i) a.push_back(static_cast<uint8_t>(i % 251));
    Bytes b = a;
    b.resize(kSmallestBlockBytes / 2);
    b.shrink_to_fit();  // from a large block back to malloc's memory
    REQUIRE(b.size() == kSmallestBlockBytes / 2);
    CHECK(std::equal(b.begin(), b.end(), a.begin()));
    b = a;
    CHECK(b == a);
}

TEST_CASE("large buffers: below 1 MiB a block is a power of two from 64 KiB, kept for the next buffer of its class", "[base][memory]") {
    // (Earlier tests may have filled the kept list: blocks then make room by age, so only the
    // reuse of the newest block and the bound are checked, not totals.)
    // 300 KB and 400 KB share the 512 KiB class: the block freed by one is taken by the other.
    auto* a = static_cast<uint8_t*>(allocate_large(300000));
    for (size_t i = 0; i < 300000; ++i) a[i] = static_cast<uint8_t>(i);
    free_large(a, 300000);
    auto* b = static_cast<uint8_t*>(allocate_large(400000));
    CHECK(b == a);
    for (size_t i = 0; i < 400000; ++i) b[i] = static_cast<uint8_t>(i * 7);  // every byte of the larger size
    // 600 KB is in the 1 MiB class: not the 512 KiB block.
    auto* c = static_cast<uint8_t*>(allocate_large(600000));
    CHECK(c != b);
    for (size_t i = 0; i < 600000; ++i) c[i] = static_cast<uint8_t>(i * 3);
    // 1 MiB + 1 is past the small classes: whole huge pages, aligned.
    auto* d = static_cast<uint8_t*>(allocate_large((size_t(1) << 20) + 1));
    CHECK(reinterpret_cast<uintptr_t>(d) % kHugePageBytes == 0);
    free_large(d, (size_t(1) << 20) + 1);
    free_large(c, 600000);
    free_large(b, 400000);
    CHECK(large_bytes_kept() <= kMaxKeptBytes);
    CHECK(allocate_large(500000) == b);  // the newest block of the 512 KiB class
    free_large(b, 500000);
}

TEST_CASE("large buffers: a Bytes of 64-128 KiB takes the block a buffer of its class freed, its bytes intact", "[base][memory]") {
    if (kAddressSanitizer) SUCCEED("AddressSanitizer builds take every buffer from malloc");
    if (kAddressSanitizer) return;
    // A stage's output of a small file: 70 KB and 100 KB share the 128 KiB class; 40 KB is
    // below the smallest class and stays with malloc.
    uintptr_t first = 0;  // (the address only: the block is freed before it is compared)
    {
        Bytes a(70000);
        for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 5);
        first = reinterpret_cast<uintptr_t>(a.data());
    }
    Bytes b;
    b.reserve(100000);
    CHECK(reinterpret_cast<uintptr_t>(b.data()) == first);
    b.resize(100000);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 11 + 1);
    size_t wrong = 0;
    for (size_t i = 0; i < b.size(); ++i) wrong += b[i] != static_cast<uint8_t>(i * 11 + 1);
    CHECK(wrong == 0);
    const size_t kept = large_bytes_kept();
    { Bytes small(40000); }
    CHECK(large_bytes_kept() == kept);
    CHECK(kSmallestBlockBytes == size_t(64) << 10);
}

TEST_CASE("large tables: value-initialised every time, even on a block a table before left dirty", "[base][memory]") {
    struct Counts {
        alignas(64) uint32_t cells[256 * 256];  // 256 KiB: a block of the 512 KiB class
        uint16_t seen[1000];
    };
    uintptr_t first = 0;
    {
        auto t = make_large_table<Counts>();
        first = reinterpret_cast<uintptr_t>(t.get());
        CHECK(first % 64 == 0);
        size_t nonzero = 0;
        for (uint32_t c : t->cells) nonzero += c != 0;
        CHECK(nonzero == 0);
        for (uint32_t& c : t->cells) c = 0xdeadbeef;
        for (uint16_t& s : t->seen) s = 0xbeef;
    }
    auto again = make_large_table<Counts>();
    if (!kAddressSanitizer) CHECK(reinterpret_cast<uintptr_t>(again.get()) == first);  // the kept block
    size_t nonzero = 0;
    for (uint32_t c : again->cells) nonzero += c != 0;
    for (uint16_t s : again->seen) nonzero += s != 0;
    CHECK(nonzero == 0);
}
