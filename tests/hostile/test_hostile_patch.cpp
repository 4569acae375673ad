// Hostile `--patch-from` files (tools/hostile_patch.hpp): crafted maps with valid checksums
// that claim far more than their reference and stored bytes justify. Each is refused before
// any output is written. The sizes are kept small enough that a decoder without these checks
// still finishes quickly (copying megabytes, then failing the final hash): it then fails the
// "nothing written" check instead of hanging the suite. The large claims are run through the
// CLI under `timeout`.
#include <catch2/catch.hpp>

#include "engine/engine.hpp"
#include "hostile.hpp"
#include "hostile_patch.hpp"
#include "report/inspect.hpp"
#include "related/patch.hpp"
#include "statezip.h"
#include "../test_util.hpp"

using namespace stz;
using namespace stztest;
using namespace stzhostile;

namespace {

struct CountingSink final : OutputSink {
    uint64_t bytes = 0;
    void write(const uint8_t*, size_t n) override { bytes += n; }
};

// Decodes `stz` given `ref`; returns the error's message ("" if it decoded) and what was written.
std::pair<std::string, uint64_t> decode_given(const Bytes& stz, const Bytes& ref) {
    MemoryStream in(stz);
    MemorySource r(ref);
    CountingSink out;
    DecompressOptions d;
    d.reference = &r;
    try {
        decompress_stream(in, out, d);
    } catch (const DataError& e) {
        return {e.what(), out.bytes};
    } catch (const Error& e) {
        return {std::string("not a DataError: ") + e.what(), out.bytes};
    }
    return {"", out.bytes};
}

// A small REF, so that the bounds (multiples of its size) are reached with small files.
const Bytes& small_ref() {
    static const Bytes r = patch_ref(64 << 10);
    return r;
}

}  // namespace

TEST_CASE("hostile patch: one-byte copies of one REF byte are refused before any output", "[hostile][patch]") {
    // 8 MiB of 1-byte pieces whose REF channel rows are 0 bytes apart (the 1 GiB form took 21 s).
    auto [err, written] = decode_given(patch_byte_copies(8 << 20, small_ref()), small_ref());
    CHECK(written == 0);
    CHECK_THAT(err, Catch::Contains("reference channel rows shorter than their cells"));
}

TEST_CASE("hostile patch: copies beyond 4x the reference are refused before any output", "[hostile][patch]") {
    // 2 groups x 16 runs x all of REF: 32x REF's size from a few hundred bytes.
    const Bytes stz = patch_repeated_copies(2 * 16 * small_ref().size(), small_ref());
    CHECK(stz.size() < 1000);
    auto [err, written] = decode_given(stz, small_ref());
    CHECK(written == 0);
    CHECK_THAT(err, Catch::Contains("more than 4x its size"));
}

TEST_CASE("hostile patch: a part named by two regions is refused", "[hostile][patch]") {
    const Bytes& ref = small_ref();
    PatchMap m;
    m.ref_groups.push_back({16, {{0, 4096}}});
    PatchGroup g;
    g.n_cells = 16;
    g.parts.push_back({1, 4096, false, 0, false});
    g.runs.push_back({16, 0u, 0});
    m.groups.push_back(g);
    for (int i = 0; i < 3; ++i) m.regions.push_back({RegionKind::Part, 0, 0, 0});
    m.original_size = 3 * ref.size();
    auto [err, written] = decode_given(craft_patch(m, {}, ref), ref);
    CHECK(written == 0);
    CHECK_THAT(err, Catch::Contains("bad part region"));
}

TEST_CASE("hostile patch: a row-major copy of pieces that are not REF rows is refused", "[hostile][patch]") {
    const Bytes& ref = small_ref();
    PatchMap m;
    m.ref_groups.push_back({1, {{0, 1}}});  // rows of 1 byte, copied as 4 KiB rows: overlapping
    PatchGroup g;
    g.n_cells = 1;
    g.parts.push_back({1, 4096, false, 0, false});
    g.runs.push_back({1, 0u, 0});
    m.groups.push_back(g);
    m.regions.push_back({RegionKind::Part, 0, 0, 0});
    m.original_size = 4096;
    auto [err, written] = decode_given(craft_patch(m, {}, ref), ref);
    CHECK(written == 0);
    CHECK_THAT(err, Catch::Contains("not a reference row"));
}

TEST_CASE("hostile patch: a map disagreeing with patched_size or the stored stream is refused first", "[hostile][patch]") {
    const Bytes ref = patch_ref();
    const Bytes good = patch_size_claim(UINT64_MAX, ref);  // the map's own size
    auto [ok, n] = decode_given(good, ref);
    CHECK(ok.empty());
    CHECK(n == 1024 + 40 * 64);
    // A patched_size one byte off: refused before the copies (0.x decoded the map's size).
    auto [err, written] = decode_given(patch_size_claim(1024 + 40 * 64 - 1, ref), ref);
    CHECK(written == 0);
    CHECK_THAT(err, Catch::Contains("patched_size says"));
    // New rows the map takes from a stored stream that holds none.
    PatchMap m;
    PatchGroup g;
    g.n_cells = 1000;
    g.parts.push_back({1, 64, false, 0, false});
    g.runs.push_back({1000, std::nullopt, 0});
    m.groups.push_back(g);
    m.regions.push_back({RegionKind::Part, 0, 0, 0});
    m.original_size = 64000;
    std::tie(err, written) = decode_given(craft_patch(m, {}, ref), ref);
    CHECK(written == 0);
    CHECK_THAT(err, Catch::Contains("bytes of new rows, the stored stream holds"));
}

TEST_CASE("hostile patch: an implausible patched_size is an error for -l and stz_decompressed_size", "[hostile][patch]") {
    const Bytes ref = patch_ref();
    for (uint64_t claim : {uint64_t(4000000000ull), uint64_t(1) << 60}) {
        const Bytes stz = patch_size_claim(claim, ref);
        MemoryStream in(stz);
        ContainerReader r(in);
        CHECK_THROWS_AS(rebuilt_size(r.header()), DataError);
        uint64_t size = 0;
        CHECK(stz_decompressed_size(stz.data(), stz.size(), &size) == STZ_ERROR_CORRUPT);
        CHECK(size == 0);
    }
    // The real claim is accepted and is what the C API decodes into.
    const Bytes stz = patch_size_claim(UINT64_MAX, ref);
    uint64_t size = 0;
    REQUIRE(stz_decompressed_size(stz.data(), stz.size(), &size) == STZ_OK);
    CHECK(size == 1024 + 40 * 64);
    Bytes out(size);
    size_t got = 0;
    CHECK(stz_decompress_ref(stz.data(), stz.size(), ref.data(), ref.size(), out.data(), out.size(), &got) == STZ_OK);
    CHECK(got == size);
}

TEST_CASE("hostile patch: inspect says a --patch-from file is a patch, names REF, gives the rebuilt size", "[hostile][patch]") {
    const Bytes ref = patch_ref();
    const Bytes stz = patch_size_claim(UINT64_MAX, ref);
    MemorySource in(stz);
    const InspectReport r = inspect_input(in, {});
    const std::string j = inspect_json("p.stz", r);
    CHECK_THAT(j, Catch::Contains("\"bytes\": 3584,"));
    CHECK_THAT(j, Catch::Contains("\"patch\": {\"reference\": \"ref.bin\", \"reference_bytes\": 1048576"));
    CHECK_THAT(j, Catch::Contains("\"stored_stream_bytes\": "));
}

TEST_CASE("hostile patch: the CLI refuses huge claims at once (each run bounded by 5 s)", "[hostile][patch]") {
    const std::string dir = temp_dir("hostile-patch");
    const Bytes ref = patch_ref();
    write_file(dir + "/ref.bin", ref);
    write_file(dir + "/bytes.stz", patch_byte_copies(1ull << 30, ref));
    write_file(dir + "/huge.stz", patch_byte_copies(1ull << 60, ref));
    write_file(dir + "/copies.stz", patch_repeated_copies(40ull << 30, ref));
    for (const char* f : {"bytes", "huge", "copies"}) {
        INFO(f);
        // 0.x: 21 s, centuries, 40 GiB copied; refused at the header now. 124 = the bound hit.
        const std::string base = "timeout 5 " STATEZIP_BIN " -q --patch-from=" + dir + "/ref.bin ";
        CHECK(sh(base + "-t " + dir + "/" + f + ".stz 2>/dev/null") == 1);
        CHECK(sh(base + "-d -f " + dir + "/" + f + ".stz -o " + dir + "/out 2>/dev/null") == 1);
        CHECK_FALSE(exists(dir + "/out"));
    }
    CHECK(sh("rm -rf " + dir) == 0);
}

TEST_CASE("hostile patch: groups repeating a group of many runs cannot blow up the map's memory", "[hostile][patch]") {
    // 4096 one-cell runs, then 5000 groups that repeat them at a few bytes each: 20 M runs
    // (490 MB of records on main) for a 20 MB original. Refused once the runs would take more
    // memory than the original plus 64 MiB.
    PatchMap m;
    PatchGroup g;
    g.n_cells = 4096;
    g.parts.push_back({1, 1, false, 0, false});
    for (int i = 0; i < 4096; ++i) g.runs.push_back({1, std::nullopt, 0});
    for (int i = 0; i < 5001; ++i) m.groups.push_back(g);
    m.original_size = 5001 * 4096;
    m.regions.push_back({RegionKind::Stream, m.original_size});
    const Bytes map = encode_patch_map(m);
    CHECK(map.size() < 64 << 10);
    CHECK_THROWS_WITH(decode_patch_map(map, 0), Catch::Contains("more runs than the original can hold"));
}
