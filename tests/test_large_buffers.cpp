// Chunk-sized buffers (base/large_buffers.hpp): aligned for huge pages, every byte usable, and
// a freed block kept for the next buffer of its size, up to the bound, never beyond it.
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
    b.resize(kHugePageBytes / 2);
    b.shrink_to_fit();  // from a large block back to malloc's memory
    REQUIRE(b.size() == kHugePageBytes / 2);
    CHECK(std::equal(b.begin(), b.end(), a.begin()));
    b = a;
    CHECK(b == a);
}
