// --patch-from (src/lib/related/patch.hpp): a file stored given a reference file. Round trips on
// synthetic related files and corpus groups; the wrong, a missing or a modified reference is
// refused before any output; a reference that is not a state file still works.
#include <catch2/catch.hpp>

#include "cells_util.hpp"
#include "related/patch.hpp"
#include "rebuild/patch_map.hpp"

using namespace stz;
using namespace stztest;

namespace {

struct Patched {
    Bytes stz;
    PatchResult res;
};

Patched patch_bytes(const Bytes& file, const Bytes& ref, const std::string& name = "ref.bin") {
    MemorySource fs(file), rs(ref);
    MemorySink sink;
    Patched p;
    p.res = compress_patch(fs, rs, name, sink, {});
    p.stz = std::move(sink.out);
    return p;
}

Bytes unpatch(const Bytes& stz, const Bytes* ref, RecordCheck when = RecordCheck::OnFailure) {
    MemoryStream in(stz);
    MemorySink out;
    static const Bytes kNone;
    MemorySource rs(ref ? ByteSpan(*ref) : ByteSpan(kNone));
    DecompressOptions o;
    o.reference = ref ? &rs : nullptr;
    o.record_check = when;
    decompress_stream(in, out, o);
    return out.out;
}

// A later save of the same conversation: the reference's cells, some of them changed, and new ones.
struct Related {
    Bytes ref, file;
};
Related related_pair(bool v_trans, stz::ElemType t = stz::ElemType::F16) {
    stzsynth::Spec s;
    s.cells = 120;
    s.v_trans = v_trans;
    s.k_type = s.v_type = t;
    Related r;
    r.file = synth_state(s);
    // REF: the same file with cells 100.. changed (as if the conversation went another way).
    r.ref = r.file;
    const CellGroup g = find_cell_groups(parse_bytes(r.file)).at(0);
    Bytes cell(g.cell_bytes);
    MemorySource src(r.file);
    for (uint64_t c = 100; c < 120; ++c) {
        read_cells(src, g, c, 1, cell.data());
        for (auto& b : cell) b ^= 0x5a;
        write_cell(r.ref, g, c, cell.data());
    }
    return r;
}

}  // namespace

TEST_CASE("patch-from: synthetic related files round-trip and share their cells", "[patch]") {
    for (bool v_trans : {true, false}) {
        Related r = related_pair(v_trans);
        Patched p = patch_bytes(r.file, r.ref);
        INFO("v_trans " << v_trans);
        CHECK(p.res.file_cells == 120);
        CHECK(p.res.shared_cells == 100);
        CHECK(unpatch(p.stz, &r.ref) == r.file);
        Bytes alone = compress_bytes(r.file);
        CHECK(p.stz.size() * 3 < alone.size());
    }
}

TEST_CASE("patch-from: every synthetic flavour round-trips given itself and given another file", "[patch]") {
    for (const auto& flavour : stzsynth::flavours()) {
        stzsynth::Spec s;
        s.flavour = flavour;
        s.cells = 64;
        Bytes a = synth_state(s);
        s.seed = 2;
        s.cells = 70;
        Bytes b = synth_state(s);
        INFO(flavour);
        CHECK(unpatch(patch_bytes(a, a).stz, &a) == a);
        CHECK(unpatch(patch_bytes(b, a).stz, &a) == b);
    }
}

TEST_CASE("patch-from: a reference that is not a state file works, with no sharing", "[patch]") {
    Related r = related_pair(true);
    Bytes junk = random_bytes(3000, 9);
    Patched p = patch_bytes(r.file, junk);
    CHECK(p.res.shared_cells == 0);
    CHECK(unpatch(p.stz, &junk) == r.file);
    Bytes empty;
    CHECK(unpatch(patch_bytes(r.file, empty).stz, &empty) == r.file);
}

TEST_CASE("patch-from: a missing, other or modified reference is refused, naming the expected one", "[patch]") {
    Related r = related_pair(true);
    Patched p = patch_bytes(r.file, r.ref, "conv-a.bin");
    auto refused = [&](const Bytes* ref) {
        try {
            unpatch(p.stz, ref);
        } catch (const ReferenceError& e) {
            std::string m = e.what();
            CHECK(m.find("conv-a.bin") != std::string::npos);
            CHECK(m.find(std::to_string(r.ref.size()) + " bytes") != std::string::npos);
            CHECK(m.find('\n') == std::string::npos);
            return true;
        }
        return false;
    };
    CHECK(refused(nullptr));
    CHECK(refused(&r.file));
    Bytes flipped = r.ref;
    flipped[flipped.size() / 2] ^= 1;
    CHECK(refused(&flipped));
    // Decoding without asking for a patch never hands out the stored stream.
    MemoryStream in(p.stz);
    NullSink sink;
    CHECK_THROWS_AS(decompress_stream(in, sink, 1), ReferenceError);
}

// Testing names every flip; decompression refuses it or gives back exactly the file (a flipped
// bit that decoding does not read or that leaves the chunk as written).
TEST_CASE("patch-from: a bit flip anywhere in the file is detected", "[patch]") {
    for (bool v_trans : {false, true}) {
        Related r = related_pair(v_trans);
        Patched p = patch_bytes(r.file, r.ref);
        size_t flips = 0;
        for (size_t at = 0; at < p.stz.size(); at += 7) {
            Bytes bad = p.stz;
            bad[at] ^= static_cast<uint8_t>(1u << (at % 8));
            INFO("flip at " << at << " of " << p.stz.size());
            REQUIRE_THROWS_AS(unpatch(bad, &r.ref, RecordCheck::BeforeDecode), Error);
            const bool refused_or_exact = [&] {
                try {
                    return unpatch(bad, &r.ref) == r.file;
                } catch (const Error&) {
                    return true;
                }
            }();
            REQUIRE(refused_or_exact);
            ++flips;
        }
        CHECK(flips > 50);
    }
}

TEST_CASE("patch-from: damaged patch maps are refused, never crash", "[patch]") {
    Related r = related_pair(true);
    PatchMap m;
    m.original_size = 100;
    m.ref_groups.push_back({10, {{0, 8}}});
    PatchGroup g;
    g.n_cells = 10;
    g.parts.push_back({1, 8, false, 0, false});
    g.runs.push_back({4, std::nullopt, 0});
    g.runs.push_back({6, 0u, 2});
    m.groups.push_back(g);
    m.regions.push_back({RegionKind::Stream, 20});
    m.regions.push_back({RegionKind::Part, 80, 0, 0});
    const Bytes good = encode_patch_map(m);
    PatchMap back = decode_patch_map(good, 0);
    CHECK(back.regions.size() == 2);
    CHECK(back.groups[0].runs[1].ref_first == 2);
    uint64_t total = 0;
    PatchWalker w(back);
    while (auto s = w.next()) total += s->length;
    CHECK(total == 100);
    std::mt19937 rng(5);
    for (int i = 0; i < 3000; ++i) {
        Bytes bad = good;
        bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
        if (i % 3 == 0) bad.resize(rng() % bad.size());
        try {
            PatchMap x = decode_patch_map(bad, 0);
            PatchWalker wx(x);
            uint64_t t = 0;
            while (auto s = wx.next()) t += s->length;
            CHECK(t == x.original_size);  // whatever it accepted is self-consistent
        } catch (const DataError&) {
        }
    }
}

TEST_CASE("patch-from: related corpus files round-trip", "[patch][corpus]") {
    const std::pair<const char*, const char*> pairs[] = {
        {"raw-s260k-conv8-f16-fa1-p1000.bin", "raw-s260k-conv8-f16-fa1-p1200.bin"},
        {"seq-s260k-conv8-f16-fa1-p1200.bin", "seq-s260k-conv8-f16-fa1-p1400.bin"},
        {"raw-s260k-multi3-kvu-f16-fa0.bin", "seq-s260k-multi3-kvu-f16-fa0-s1.bin"},
        {"session-s260k-multi3-kvu-f16-fa0.bin", "seqraw-s260k-multi3-kvu-f16-fa0-s2.bin"},
        {"raw-s260k-multi3-kvu-f16-fa0.bin", "session-s260k-multi3-kvu-f16-fa0.bin"},  // tokens predicted
        {"seq-s260k-srv-conv5-f16-fa1-a.bin", "seq-s260k-srv-conv5-f16-fa1-b.bin"},
        {"session-s260k-conv3-f32-fa1-a-n1000.bin", "session-s260k-conv3-f32-fa1-b-n1200.bin"},
        {"seq-s260khd32-srv-conv10-q8_0-fa1-a.bin", "seq-s260khd32-srv-conv10-q8_0-fa1-b.bin"},
        {"A-2485d7a.main.session.ggsn0.c512.f16.np294.bin", "B-e216aa0.main.session.ggsn1.c512.f16.np196.bin"},
    };
    int found = 0;
    for (const auto& [rn, fn] : pairs) {
        std::string rp = corpus_file(rn), fp = corpus_file(fn);
        if (rp.empty() || fp.empty()) continue;
        ++found;
        Bytes ref = read_file(rp), file = read_file(fp);
        Patched p = patch_bytes(file, ref, rn);
        INFO(fn << " given " << rn);
        CHECK(unpatch(p.stz, &ref) == file);
        CHECK(p.stz.size() < compress_bytes(file).size());
        // REF (a raw blob) has the cells but no tokens: most tokens follow from their cells.
        if (std::string(fn).rfind("session-s260k-multi3", 0) == 0) CHECK(p.res.predicted_tokens > 500);
    }
    if (!found) skip_test("no related corpus files (set STATEZIP_CORPUS)");
}

TEST_CASE("patch-from: a file repeating REF's cells many times copies at most 4x REF and round-trips", "[patch]") {
    // REF: 8 cells; the file: 200 cells, every one equal to REF's cell 0 (all sequences
    // repeating one prompt). Copying them all would be ~25x REF: a reader refuses more than
    // 4x, so the writer stores the rest as new cells.
    stzsynth::Spec s;
    s.cells = 8;
    const Bytes ref = synth_state(s);
    s.cells = 200;
    Bytes file = synth_state(s);
    const CellGroup rg = find_cell_groups(parse_bytes(ref)).at(0), fg = find_cell_groups(parse_bytes(file)).at(0);
    REQUIRE(rg.cell_bytes == fg.cell_bytes);
    Bytes cell(rg.cell_bytes);
    MemorySource rs(ref);
    read_cells(rs, rg, 0, 1, cell.data());
    for (uint64_t c = 0; c < fg.n_cells; ++c) write_cell(file, fg, c, cell.data());
    const Patched p = patch_bytes(file, ref);
    CHECK(p.res.shared_cells > 0);
    CHECK(p.res.shared_cells * fg.cell_bytes <= kMaxRefCopyFactor * ref.size());
    CHECK(p.res.shared_cells < fg.n_cells);
    CHECK(unpatch(p.stz, &ref) == file);
}
