// The cell core (src/lib/related/cells.hpp): groups, per-cell hashes, matching in any order and
// across groups, and byte verification of matches. Synthetic files always; related corpus
// files (prefix sharing, seq files cut from a raw blob) when STATEZIP_CORPUS is given.
#include <catch2/catch.hpp>

#include "cells_util.hpp"

using namespace stz;
using namespace stztest;

namespace {

uint64_t matched_cells(const std::vector<CellRun>& runs) {
    uint64_t n = 0;
    for (const auto& r : runs)
        if (r.ref_group != kNoRef) n += r.count;
    return n;
}

struct Matched {
    uint64_t file_cells = 0, matched = 0, verified = 0;
};

Matched match_files(const Bytes& ref, const Bytes& file) {
    MemorySource rs(ref), fs(file);
    CellIndex index(rs, parse_bytes(ref));
    Matched m;
    for (const auto& g : find_cell_groups(parse_bytes(file))) {
        auto runs = match_cells(g, hash_cells(fs, g), index);
        m.file_cells += g.n_cells;
        m.matched += matched_cells(runs);
        m.verified += matched_cells(verified_runs(fs, g, rs, index, runs));
    }
    return m;
}

}  // namespace

TEST_CASE("cells: groups of every synthetic flavour cover their K/V sections", "[cells]") {
    for (const auto& flavour : stzsynth::flavours()) {
        stzsynth::Spec s;
        s.flavour = flavour;
        s.cells = 40;
        Bytes b = synth_state(s);
        ParsedFile pf = parse_bytes(b);
        uint64_t kv_bytes = 0, group_bytes = 0;
        for (const auto& sec : pf.sections)
            if ((sec.kind == SectionKind::KvKey || sec.kind == SectionKind::KvValue) && sec.rows) kv_bytes += sec.size;
        for (const auto& g : find_cell_groups(pf))
            for (const auto& p : g.parts) group_bytes += p.transposed ? p.channels * p.row_bytes : g.n_cells * p.row_bytes;
        INFO(flavour);
        if (flavour.rfind("legacy-compact", 0) == 0 || flavour == "legacy-dump") {
            CHECK(group_bytes == 0);  // K and V as one blob each: no rows to take cells from
        } else {
            CHECK(group_bytes == kv_bytes);
        }
    }
}

TEST_CASE("cells: a file matches itself cell for cell in one run per group", "[cells]") {
    for (bool v_trans : {true, false}) {
        stzsynth::Spec s;
        s.cells = 77;
        s.v_trans = v_trans;
        Bytes a = synth_state(s);
        MemorySource src(a);
        CellIndex index(src, parse_bytes(a));
        REQUIRE(index.groups().size() == 1);
        const CellGroup& g = index.groups()[0];
        CHECK(g.n_cells == 77);
        CHECK(g.parts.size() == 2 * s.n_layer);
        auto runs = match_cells(g, index.hashes(0), index);
        REQUIRE(runs.size() == 1);
        CHECK(runs[0].ref_group == 0);
        CHECK(runs[0].ref_first == 0);
        CHECK(runs[0].count == 77);
        CHECK(verify_run(src, g, src, g, runs[0]));
    }
}

TEST_CASE("cells: moved, changed and appended cells are found by content", "[cells]") {
    stzsynth::Spec s;
    s.cells = 60;
    Bytes ref = synth_state(s);
    ParsedFile pf = parse_bytes(ref);
    const CellGroup g = find_cell_groups(pf).at(0);
    Bytes file = ref;
    // Swap cells 10 and 20; change one byte of cell 5 in the last (transposed V) layer.
    Bytes c10(g.cell_bytes), c20(g.cell_bytes), c5(g.cell_bytes);
    MemorySource rs(ref);
    read_cells(rs, g, 10, 1, c10.data());
    read_cells(rs, g, 20, 1, c20.data());
    read_cells(rs, g, 5, 1, c5.data());
    write_cell(file, g, 10, c20.data());
    write_cell(file, g, 20, c10.data());
    c5[g.cell_bytes - 1] ^= 0x40;
    write_cell(file, g, 5, c5.data());

    MemorySource fs(file);
    CellIndex index(rs, pf);
    auto runs = match_cells(g, hash_cells(fs, g), index);
    auto cell_ref = [&](uint64_t c) -> int64_t {
        for (const auto& r : runs)
            if (c >= r.first && c < r.first + r.count) return r.ref_group == kNoRef ? -1 : int64_t(r.ref_first + c - r.first);
        return -2;
    };
    CHECK(cell_ref(5) == -1);
    CHECK(cell_ref(10) == 20);
    CHECK(cell_ref(20) == 10);
    CHECK(cell_ref(0) == 0);
    CHECK(cell_ref(59) == 59);
    CHECK(matched_cells(runs) == 59);
    CHECK(matched_cells(verified_runs(fs, g, rs, index, runs)) == 59);
}

TEST_CASE("cells: verification drops a match whose bytes differ", "[cells]") {
    stzsynth::Spec s;
    s.cells = 30;
    Bytes ref = synth_state(s);
    Bytes file = ref;
    const CellGroup g = find_cell_groups(parse_bytes(ref)).at(0);
    file[g.parts[1].piece_offset(7, 0)] ^= 1;  // cell 7, second layer
    MemorySource rs(ref), fs(file);
    CellIndex index(rs, parse_bytes(ref));
    // A claimed match of all cells (as a hash collision would give) must lose cell 7.
    std::vector<CellRun> claimed{{0, 30, 0, 0}};
    CHECK_FALSE(verify_run(fs, g, rs, g, claimed[0]));
    auto runs = verified_runs(fs, g, rs, index, claimed);
    CHECK(matched_cells(runs) == 29);
    REQUIRE(runs.size() == 3);
    CHECK(runs[1].first == 7);
    CHECK(runs[1].ref_group == kNoRef);
}

TEST_CASE("cells: a file that is not a state file has no cells and matches nothing", "[cells]") {
    Bytes junk = random_bytes(5000, 3);
    MemorySource js(junk);
    CellIndex index(js, parse_bytes(junk));
    CHECK(index.cells() == 0);
    stzsynth::Spec s;
    Bytes a = synth_state(s);
    CHECK(match_files(junk, a).matched == 0);
}

TEST_CASE("cells: related corpus files share their common cells", "[cells][corpus]") {
    struct Pair {
        const char *ref, *file;
        double min_share;  // of the file's cells
    };
    const Pair pairs[] = {
        {"raw-s260k-conv8-f16-fa1-p1000.bin", "raw-s260k-conv8-f16-fa1-p1200.bin", 0.8},
        {"raw-s260k-conv8-f16-fa1-p1200.bin", "raw-s260k-conv8-f16-fa1-p1400.bin", 0.8},
        {"seq-s260k-conv8-f16-fa1-p1000.bin", "seq-s260k-conv8-f16-fa1-p1200.bin", 0.8},
        {"raw-s260k-multi3-kvu-f16-fa0.bin", "seq-s260k-multi3-kvu-f16-fa0-s0.bin", 0.99},
        {"raw-s260k-multi3-kvu-f16-fa0.bin", "seq-s260k-multi3-kvu-f16-fa0-s1.bin", 0.99},
        {"raw-s260k-multi3-kvu-f16-fa0.bin", "seq-s260k-multi3-kvu-f16-fa0-s2.bin", 0.99},
        {"seq-s260k-srv-conv5-f16-fa1-a.bin", "seq-s260k-srv-conv5-f16-fa1-b.bin", 0.5},
    };
    int found = 0;
    for (const auto& p : pairs) {
        std::string rp = corpus_file(p.ref), fp = corpus_file(p.file);
        if (rp.empty() || fp.empty()) continue;
        ++found;
        Matched m = match_files(read_file(rp), read_file(fp));
        INFO(p.file << " given " << p.ref << ": " << m.matched << " of " << m.file_cells << " cells matched, "
                    << m.verified << " verified");
        WARN(p.file << " given " << p.ref << ": " << m.matched << "/" << m.file_cells);
        CHECK(m.file_cells > 0);
        CHECK(m.verified == m.matched);
        CHECK(double(m.matched) >= p.min_share * double(m.file_cells));
    }
    if (!found) skip_test("no related corpus files (set STATEZIP_CORPUS)");
}

TEST_CASE("cells: the hash of one cell's bytes equals the streamed hash", "[cells]") {
    for (bool v_trans : {true, false}) {
        stzsynth::Spec s;
        s.cells = 50;
        s.v_trans = v_trans;
        Bytes a = synth_state(s);
        MemorySource src(a);
        const CellGroup g = find_cell_groups(parse_bytes(a)).at(0);
        auto hs = hash_cells(src, g);
        Bytes cell(g.cell_bytes);
        for (uint64_t c : {0, 17, 49}) {
            read_cells(src, g, c, 1, cell.data());
            CHECK(hash_cell(g, cell.data()) == hs[c]);
        }
        CHECK_FALSE(hs[0] == hs[1]);
    }
}
