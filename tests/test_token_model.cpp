// Tokens of a --patch-from file predicted from their cells (src/lib/rebuild/token_model.hpp): the
// cells section's positions, the run form of the mapping, the stored form of the tokens (exact
// whatever the keys say, refused when damaged), the map record, and whole patches where REF
// has the cells but not the tokens.
#include <catch2/catch.hpp>
#include <random>

#include "cells_util.hpp"
#include "codecs/varint.hpp"
#include "related/patch.hpp"
#include "rebuild/token_model.hpp"

using namespace stz;
using namespace stztest;

namespace {

struct TestCell {
    int32_t pos;
    std::vector<int32_t> seqs;
};

Bytes cells_section(const std::vector<TestCell>& cells, uint32_t ext) {
    Bytes b;
    append_le<uint32_t>(b, static_cast<uint32_t>(cells.size()));
    for (const TestCell& c : cells) {
        append_le<int32_t>(b, c.pos);
        append_le<uint32_t>(b, static_cast<uint32_t>(c.seqs.size()));
        b.resize(b.size() + ext, 0);
        for (int32_t s : c.seqs) append_le<int32_t>(b, s);
    }
    append_le<uint32_t>(b, 1);  // v_trans
    append_le<uint32_t>(b, 5);  // n_layer
    return b;
}

std::vector<uint64_t> expand(const std::vector<TokenCellRun>& runs) {
    std::vector<uint64_t> out;
    for (const TokenCellRun& r : runs)
        for (uint64_t i = 0; i < r.count; ++i) out.push_back(r.first == kNoTokenCell ? kNoTokenCell : r.first + uint64_t(r.stride) * i);
    return out;
}

Bytes unpatch(const Bytes& stz, const Bytes& ref) {
    MemoryStream in(stz);
    MemorySink out;
    MemorySource rs(ref);
    DecompressOptions o;
    o.reference = &rs;
    decompress_stream(in, out, o);
    return out.out;
}

// A session file whose layer-0 V cells follow the token (as in a real model: no position
// enters them) and tokens[i] = (7 i) mod 13.
struct TokenFile {
    Bytes file;
    Section tokens;
};
TokenFile token_file(bool v_trans) {
    stzsynth::Spec s;
    s.cells = 120;
    s.v_trans = v_trans;
    TokenFile t;
    t.file = synth_state(s);
    const ParsedFile p = parse_bytes(t.file);
    for (const Section& sec : p.sections)
        if (sec.kind == SectionKind::Tokens) t.tokens = sec;
    REQUIRE(t.tokens.size >= 120 * 4);
    const std::vector<CellGroup> layers = split_parts(find_cell_groups(p));
    auto v0 = std::find_if(layers.begin(), layers.end(),
                           [&](const CellGroup& g) { return p.sections[g.parts[0].section].kind == SectionKind::KvValue; });
    REQUIRE(v0 != layers.end());
    MemorySource src(t.file);
    Bytes cell(v0->cell_bytes);
    for (uint32_t i = 0; i < t.tokens.size / 4; ++i) {
        store_le<uint32_t>(t.file.data() + t.tokens.offset + 4 * i, (7 * i) % 13);
        if (i >= 13 && i < 120) {  // the cell of the first position with this token
            read_cells(src, *v0, i % 13, 1, cell.data());
            write_cell(t.file, *v0, i, cell.data());
        }
    }
    return t;
}

// One group of 10 rows of 8 bytes, all taken from REF at `ref_offset`.
void add_row_group(PatchMap& m, uint64_t ref_offset) {
    m.ref_groups.push_back({10, {{ref_offset, 8}}});
    PatchGroup g;
    g.n_cells = 10;
    g.parts.push_back({1, 8, false, 0, false});
    g.runs.push_back({10, 0u, 0});
    m.groups.push_back(g);
}

}  // namespace

TEST_CASE("token model: positions map to the cells of the sequence that covers most of them", "[patch][tokens]") {
    const std::vector<TestCell> cells = {{0, {1}}, {0, {0}}, {1, {0}}, {1, {1}}, {2, {0, 1}}, {7, {0}}, {-1, {0}}};
    for (uint32_t ext : {0u, 8u, 12u}) {
        INFO("extension " << ext);
        CHECK(token_cells(cells_section(cells, ext), 4) == std::vector<uint64_t>{1, 2, 4, kNoTokenCell});
    }
    // Sequence 1 covers more positions: it is taken.
    CHECK(token_cells(cells_section({{0, {1}}, {1, {1}}, {0, {0}}}, 0), 2) == std::vector<uint64_t>{0, 1});
    // Not a cells section: nothing is predicted.
    CHECK(token_cells(random_bytes(100, 3), 10).empty());
    Bytes cut = cells_section(cells, 0);
    cut.pop_back();
    CHECK(token_cells(cut, 4).empty());
    CHECK(token_cells(Bytes{}, 4).empty());
}

TEST_CASE("token model: the cell mapping as runs gives back every position", "[patch][tokens]") {
    const std::vector<uint64_t> cells = {0, 1, 2, 3, 10, 13, 16, kNoTokenCell, kNoTokenCell, 5, 9, 4, 3, 2};
    const auto runs = token_cell_runs(cells);
    CHECK(expand(runs) == cells);
    CHECK(runs.size() == 5);  // 0..3, 10..16 by 3, two none, 5 and 9, 4..2 by -1
    CHECK(token_cell_runs({}).empty());
}

TEST_CASE("token model: stored tokens come back exact, with wrong predictions listed", "[patch][tokens]") {
    std::mt19937 rng(11);
    int several_wrong = 0;
    for (int round = 0; round < 50; ++round) {
        const uint64_t n = 1 + rng() % 400, prefix = rng() % (n + 1);
        std::vector<std::optional<TokenKey>> keys(n);
        std::vector<uint32_t> tokens(n);
        for (uint64_t i = 0; i < n; ++i) {
            const uint64_t k = rng() % 20;
            if (rng() % 10) keys[i] = TokenKey{k, k * 3};
            tokens[i] = rng() % 15 ? uint32_t(k * 100) : uint32_t(rng() % 500);  // mostly the key's token
        }
        uint64_t predicted = 0;
        const KeyOf key = [&](uint64_t i) { return keys.at(i); };
        const Bytes stored = predict_tokens(tokens, prefix, key, &predicted);
        std::vector<uint32_t> back(tokens.begin(), tokens.begin() + prefix);
        CHECK(restore_tokens(stored, n, key, back, 0) == stored.size());
        CHECK(back == tokens);
        CHECK((predicted == 0 || stored.size() < 1 + (n - prefix) * 4));
        if (n - prefix > 100) CHECK(predicted > 0);
        several_wrong += stored[0] > 1;  // the count of wrong predictions (one varint byte here)
        // Damaged: an error or other tokens (the patch's output hash catches those), never a crash.
        for (int k = 0; k < 20 && !stored.empty(); ++k) {
            Bytes bad = stored;
            bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
            if (k % 2) bad.resize(rng() % bad.size());
            std::vector<uint32_t> b(tokens.begin(), tokens.begin() + prefix);
            try {
                restore_tokens(bad, n, key, b, 0);
                CHECK(b.size() == n);
            } catch (const DataError&) {
            }
        }
    }
    CHECK(several_wrong > 10);
}

TEST_CASE("token model: the map record round-trips and is checked against its group", "[patch][tokens]") {
    PatchMap m;
    m.original_size = 100;
    m.meta_raw = 20;
    add_row_group(m, 0);
    m.regions.push_back({RegionKind::Stream, 20});
    m.regions.push_back({RegionKind::Part, 80, 0, 0});
    CHECK(encode_patch_map(m)[0] == kPatchMapVersion);  // no token model: readable by every release
    m.tokens = PatchTokenModel{4, 0, 2, 9, 0, {{5, 0, 2}, {3, kNoTokenCell, 1}, {3, 9, -1}}};
    const Bytes good = encode_patch_map(m);
    CHECK(good[0] == kPatchMapVersionTokens);
    PatchMap back = decode_patch_map(good, 0);
    REQUIRE(back.tokens);
    CHECK(back.tokens->meta_offset == 4);
    CHECK(back.tokens->tail == 9);
    CHECK(expand(back.tokens->cells) == std::vector<uint64_t>{0, 2, 4, 6, 8, kNoTokenCell, kNoTokenCell, kNoTokenCell, 9, 8, 7});
    for (TokenCellRun bad : {TokenCellRun{5, 0, 3}, TokenCellRun{5, 2, -1}, TokenCellRun{5, 10, 0}}) {
        PatchMap x = m;
        x.tokens->cells[0] = bad;
        CHECK_THROWS_AS(decode_patch_map(encode_patch_map(x), 0), DataError);
    }
    PatchMap short_runs = m;
    short_runs.tokens->cells.pop_back();
    CHECK_THROWS_AS(decode_patch_map(encode_patch_map(short_runs), 0), DataError);
}

TEST_CASE("patch-from: tokens REF lacks are predicted from the cells it has", "[patch][tokens]") {
    for (bool v_trans : {true, false}) {
        INFO("v_trans " << v_trans);
        TokenFile t = token_file(v_trans);
        Bytes ref = t.file;  // the same cells, other tokens (as a raw blob has none)
        for (uint64_t i = 0; i < t.tokens.size; i += 4) ref[t.tokens.offset + i] ^= 0x40;
        MemorySource fs(t.file), rs(ref);
        MemorySink sink;
        PatchResult res = compress_patch(fs, rs, "ref.bin", sink, {});
        CHECK(res.shared_token_bytes == 0);
        CHECK(res.predicted_tokens == 120 - 13);  // all but the first of each token
        CHECK(unpatch(sink.out, ref) == t.file);

        // Tokens that break the pattern (the same cells, other tokens) are stored, still exact.
        Bytes odd = t.file;
        for (uint32_t i = 50; i < 60; ++i) store_le<uint32_t>(odd.data() + t.tokens.offset + 4 * i, 1000 + i);
        MemorySource os(odd);
        MemorySink osink;
        PatchResult ores = compress_patch(os, rs, "ref.bin", osink, {});
        CHECK(ores.predicted_tokens < res.predicted_tokens);
        CHECK(ores.predicted_tokens > 80);
        CHECK(unpatch(osink.out, ref) == odd);
    }
}

TEST_CASE("token model: damaged maps and token bytes are refused or give other tokens, never crash", "[patch][tokens]") {
    // REF: 10 cells of 8 bytes at offset 16 and 20 tokens at offset 96; the original: a token
    // list of 11 (2 from REF) whose cells are REF's, then 80 bytes of rows.
    Bytes ref = random_bytes(200, 4);
    for (int c = 0; c < 10; ++c) std::memcpy(ref.data() + 16 + 8 * c, ref.data() + 16 + 8 * (c % 3), 8);
    MemorySource rs(ref);
    PatchMap m;
    m.original_size = 44 + 80;
    add_row_group(m, 16);
    m.tokens = PatchTokenModel{0, 96, 2, 9, 0, {{10, 0, 1}, {1, kNoTokenCell, 1}}};
    TokenKeys keys(m, *m.tokens, rs);
    CHECK(keys(0) == keys(3));  // cells 0, 3, 6, 9 are equal
    CHECK(keys(1) != keys(2));
    CHECK(!keys(10));
    std::vector<uint32_t> tokens(11);
    for (uint32_t i = 0; i < 11; ++i) tokens[i] = i < 2 ? load_le<uint32_t>(ref.data() + 96 + 4 * i) : i % 3 + 7;
    const Bytes stored = predict_tokens(tokens, 2, std::ref(keys));
    m.meta_raw = stored.size();
    m.regions.push_back({RegionKind::Tokens, 44, 0, 0, 96, 8});
    m.regions.push_back({RegionKind::Part, 80, 0, 0});
    Bytes content = encode_patch_map(m);
    append_bytes(content, stored);
    Bytes meta;
    const PatchMap back = decode_patch_content(content, rs, meta, 0);
    REQUIRE(meta.size() == 36);
    for (uint32_t i = 2; i < 11; ++i) CHECK(load_le<uint32_t>(meta.data() + 4 * (i - 2)) == tokens[i]);
    std::mt19937 rng(8);
    for (int i = 0; i < 5000; ++i) {
        Bytes bad = content;
        bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
        if (i % 4 == 0) bad.resize(rng() % bad.size());
        try {
            const PatchMap x = decode_patch_content(bad, rs, meta, 0);
            CHECK(meta.size() <= kMaxPatchMetaBytes);
        } catch (const DataError&) {
        }
    }
}

TEST_CASE("token model: keys are computed a chunk of positions at a time, alike across chunks", "[patch][tokens]") {
    Bytes ref = random_bytes(120, 6);
    MemorySource rs(ref);
    PatchMap m;
    add_row_group(m, 16);
    const uint64_t n = kTokenKeyChunk + 100;
    m.tokens = PatchTokenModel{0, 0, 0, n, 0, {{n - 10, 3, 0}, {10, 0, 1}}};  // cell 3 again and again, then 0..9
    TokenKeys keys(m, *m.tokens, rs);
    const auto k3 = keys(0);
    REQUIRE(k3);
    CHECK(keys(kTokenKeyChunk - 1) == k3);
    CHECK(keys(kTokenKeyChunk + 5) == k3);
    CHECK(keys(n - 7) == k3);   // cell 3 of the last run
    CHECK(keys(n - 10) != k3);  // cell 0
    // A map that makes the keys copy far more than REF holds is refused.
    PatchMap big = m;
    big.tokens->tail = n * 8;
    big.tokens->cells = {{n * 8, 3, 0}};
    TokenKeys over(big, *big.tokens, rs);
    CHECK_THROWS_AS([&] {
        for (uint64_t i = 0; i < n * 8; i += kTokenKeyChunk) (void)over(i);
    }(), DataError);
}
