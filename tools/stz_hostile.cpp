// stz-hostile: writes one hostile input (see hostile.hpp), for bench/hostile.sh.
//   stz-hostile CASE OUT [--size N]
// N is per case: the bytes of raw data or of the file, or the apparent size of a sparse file.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <algorithm>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

#include "hostile.hpp"
#include "hostile_pack.hpp"
#include "hostile_patch.hpp"
#include "sections/types.hpp"
#include "hostile_files.hpp"

namespace {

using stzhostile::SparseImage;

struct Case {
    const char* name;
    const char* what;
    uint64_t default_size;
    std::function<SparseImage(uint64_t)> make;
};

SparseImage dense(stz::Bytes b) {
    SparseImage img;
    img.size = b.size();
    img.pieces.push_back({0, std::move(b)});
    return img;
}

const std::vector<Case>& cases() {
    using namespace stzhostile;
    static const std::vector<Case> all = {
        {"member-size", ".stzp: two members, the second's record claiming N bytes (N = 2^64-1: the sum wraps)", UINT64_MAX,
         [](uint64_t n) { return dense(set_with_member_size(n)); }},
        {"chanctx-row-records", ".stz: chanctx row_records = 2^63+1, match model on, N raw bytes", 8192,
         [](uint64_t n) { return dense(chanctx_row_records(n)); }},
        {"tiny-sections", "ggsq v2 of N/8 empty memory records (14.4, 14.8, 14.10)", 128 << 10,
         [](uint64_t n) { return dense(ggsq2_empty_records(n / 8)); }},
        {"many-layers", "ggsq v2 of 1-cell 512-layer records of random f16, about N bytes", 40 * 14360,
         [](uint64_t n) { return dense(ggsq2_many_layers(std::max<uint64_t>(1, n / 14360), 7)); }},
        {"oversized-stage", ".stz: a chanctx stage declaring N bytes from ~100 payload bytes", 64 << 20,
         [](uint64_t n) { return dense(oversized_stage(static_cast<uint32_t>(std::min<uint64_t>(n, 0xFFFFFFFFu)))); }},
        {"range-overrun", ".stz: chanctx whose range coder runs past its end, N output bytes", 200000,
         [](uint64_t n) { return dense(range_overrun(std::max<uint64_t>(1, n / 2))); }},
        {"pack-repeated-member", ".stzp whose last commit lists one member record N times", 1 << 20,
         [](uint64_t n) { return dense(repeated_member_set(static_cast<uint32_t>(std::min<uint64_t>(n, 1u << 20)))); }},
        {"pack-nested-member", ".stzp whose commit lists a member record nested in another's name", 1,
         [](uint64_t) { return dense(nested_member_set()); }},
        {"pack-damaged-commit", ".stzp of 3 members with one bit flipped in its last commit", 1,
         [](uint64_t) { return dense(damaged_last_commit_set()); }},
        {"pack-sentinel-run", ".stzp whose member has a cell run at block offset 2^64-1", 1,
         [](uint64_t) { return dense(sentinel_block_offset_set()); }},
        {"pack-reuse-bomb", "valid .stzp whose member rebuilds to N bytes from one 64 MiB block of zeros", 1ull << 30,
         [](uint64_t n) { return dense(reuse_bomb_set(64 << 20, static_cast<uint32_t>(std::max<uint64_t>(1, n >> 26)))); }},
        {"pack-one-byte-cells", "valid .stzp of one block of N one-byte cells", 64ull << 20,
         [](uint64_t n) { return dense(one_byte_cells_set(n)); }},
        {"huge-chunk-count", "sparse .stz of apparent size N whose end record claims ~N/20 chunks", 4ull << 30,
         [](uint64_t n) { return huge_chunk_count(std::max<uint64_t>(n, 1 << 20)); }},
        {"patch-ref", "the N-byte REF the patch-* cases name (give them the default N)", kPatchRefBytes,
         [](uint64_t n) { return dense(patch_ref(n)); }},
        {"patch-byte-copies", "--patch-from .stz: N one-byte copies of one REF byte", 1ull << 30,
         [](uint64_t n) { return dense(patch_byte_copies(n, patch_ref())); }},
        {"patch-repeated-copies", "--patch-from .stz: about N bytes of whole-REF copies", 40ull << 30,
         [](uint64_t n) { return dense(patch_repeated_copies(n, patch_ref())); }},
        {"patch-size-claim", "--patch-from .stz: a small real patch whose patched_size claims N", 4000000000ull,
         [](uint64_t n) { return dense(patch_size_claim(n, patch_ref())); }},
    };
    return all;
}

int usage() {
    std::fprintf(stderr, "usage: stz-hostile CASE OUT [--size N]\ncases:\n");
    for (const auto& c : cases())
        std::fprintf(stderr, "  %-20s %s (default N = %llu)\n", c.name, c.what, static_cast<unsigned long long>(c.default_size));
    return 2;
}

// Writes the pieces at their offsets and sets the size: unwritten ranges stay holes.
void write_sparse(const std::string& path, const SparseImage& img) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw stz::Error("cannot create " + path + ": " + std::strerror(errno));
    auto fail = [&](const char* what) {
        std::string e = std::string(what) + " " + path + ": " + std::strerror(errno);
        ::close(fd);
        throw stz::Error(e);
    };
    for (const auto& [at, b] : img.pieces) {
        for (size_t done = 0; done < b.size();) {
            ssize_t w = ::pwrite(fd, b.data() + done, b.size() - done, static_cast<off_t>(at + done));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) fail("cannot write");
            done += static_cast<size_t>(w);
        }
    }
    if (::ftruncate(fd, static_cast<off_t>(img.size)) != 0) fail("cannot size");
    if (::close(fd) != 0) throw stz::Error("cannot close " + path + ": " + std::strerror(errno));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 && argc != 5) return usage();
    const std::string name = argv[1], out = argv[2];
    const Case* c = nullptr;
    for (const auto& k : cases())
        if (name == k.name) c = &k;
    if (!c) return usage();
    try {
        uint64_t size = c->default_size;
        if (argc == 5) {
            if (std::string(argv[3]) != "--size") return usage();
            size_t used = 0;
            size = std::stoull(argv[4], &used);
            if (used != std::strlen(argv[4]) || size == 0) throw stz::Error("--size needs a positive number");
        }
        write_sparse(out, c->make(size));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "stz-hostile: %s\n", e.what());
        return 1;
    }
    return 0;
}
