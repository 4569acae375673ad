// Format recognition and section splitting, on synthetic files of every flavour (written
// per the spec by tools/synth.cpp) and on the small real files in tests/data.
#include <catch2/catch.hpp>
#include <set>

#include "test_synth.hpp"

using namespace stz;
using namespace stztest;

namespace {

std::set<std::string> types_of(const ParsedFile& pf, SectionKind k) {
    std::set<std::string> t;
    for (const auto& s : pf.sections)
        if (s.kind == k) t.insert(s.type_string());
    return t;
}

size_t count_kind(const ParsedFile& pf, SectionKind k) {
    return std::count_if(pf.sections.begin(), pf.sections.end(), [&](const Section& s) { return s.kind == k; });
}

}  // namespace

TEST_CASE("every synthetic flavour is recognised, tiles the file and round-trips", "[formats]") {
    struct Case { std::string flavour, format; std::optional<int64_t> version; };
    const std::vector<Case> cases = {
        {"session9", "ggsn", 9}, {"session10", "ggsn", 10}, {"seq2", "ggsq", 2}, {"seq3", "ggsq", 3},
        {"raw", "raw", {}}, {"seqraw", "seqraw", {}}, {"seq1", "ggsq", 1}, {"ik-session10", "ggsn", 10},
        {"legacy-full", "legacy-full", {}}, {"legacy-compact", "legacy-compact", {}}, {"legacy-dump", "legacy-compact", {}},
        {"session0", "ggsn", 0}, {"session1", "ggsn", 1}};
    for (const auto& c : cases)
        for (ElemType t : {ElemType::F16, ElemType::F32, ElemType::BF16, ElemType::Q8_0, ElemType::Q4_0}) {
            bool legacy = c.flavour.rfind("legacy", 0) == 0 || c.flavour == "session0" || c.flavour == "session1";
            if (legacy && t != ElemType::F16 && t != ElemType::F32) continue;  // 2023 caches were f16/f32
            if (c.flavour == "seq1" && elem_type_info(t).block_elems > 1) continue;
            stzsynth::Spec s;
            s.flavour = c.flavour;
            s.k_type = s.v_type = t;
            s.v_trans = elem_type_info(t).block_elems == 1;
            s.cells = 37;
            s.n_ctx = 128;
            s.n_embd = 64;
            s.n_layer = 3;
            Bytes b = synth(s);
            INFO(c.flavour << " " << elem_type_info(t).name);
            ParsedFile pf = parse(b);
            CHECK(pf.format == c.format);
            CHECK(pf.version == c.version);
            CHECK(pf.note.empty());
            check_tiling(pf.sections, b.size());
            CHECK(pf.n_cells == s.cells);
            if (c.flavour != "legacy-compact" && c.flavour != "legacy-dump") CHECK(pf.n_layer == s.n_layer);
            CHECK(types_of(pf, SectionKind::KvKey) == std::set<std::string>{elem_type_info(t).name});
            CHECK(count_kind(pf, SectionKind::KvValue) >= 1);
            REQUIRE(decompress_bytes(compress_bytes(b)) == b);
        }
}

TEST_CASE("multi-stream records split per stream", "[formats]") {
    stzsynth::Spec s;
    s.flavour = "session9";
    s.n_stream = 3;
    s.cells = 10;
    Bytes b = synth(s);
    ParsedFile pf = parse(b);
    CHECK(pf.n_cells == 30);
    CHECK(count_kind(pf, SectionKind::KvKey) == 3 * s.n_layer);
    CHECK(std::any_of(pf.sections.begin(), pf.sections.end(), [](const Section& x) { return x.name == "s2.kv.v[4]"; }));
}

TEST_CASE("legacy full-buffer geometry is inferred and trim keeps only the filled data", "[formats][trim]") {
    stzsynth::Spec s;
    s.flavour = "legacy-full";
    s.n_layer = 8, s.n_ctx = 512, s.n_embd = 64, s.cells = 20;
    Bytes b = synth(s);
    ParsedFile pf = parse(b);
    REQUIRE(pf.format == "legacy-full");
    CHECK(pf.n_ctx == 512);
    CHECK(pf.n_embd == 64);
    CHECK(pf.n_layer == 8);
    CHECK(pf.n_cells == 20);
    Bytes c = compress_bytes(b);
    uint64_t filled = 2ull * 8 * 20 * 64 * 2;  // K and V of the 20 filled positions
    INFO("compressed " << c.size() << " of " << b.size() << ", filled data " << filled);
    CHECK(c.size() < filled + 20000);  // rng text + logits are the rest
    CHECK(decompress_bytes(c) == b);
    // A stale non-zero byte beyond n_past must survive byte-exactly (trim keeps that chunk).
    Section v = *std::find_if(pf.sections.begin(), pf.sections.end(), [](const Section& x) { return x.name == "kv.v[3]"; });
    b[v.offset + 100 * 2 + 1] = 0x3c;
    CHECK(decompress_bytes(compress_bytes(b)) == b);
}

TEST_CASE("hints split a compact dump per layer", "[formats]") {
    stzsynth::Spec s;
    s.flavour = "legacy-dump";
    s.n_layer = 4, s.n_ctx = 256, s.n_embd = 32, s.cells = 50;
    Bytes b = synth(s);
    ParsedFile plain = parse(b);
    CHECK(plain.format == "legacy-compact");
    CHECK(count_kind(plain, SectionKind::KvKey) == 1);
    ParseHints h;
    h.n_layer = 4, h.n_embd = 32;
    ParsedFile hinted = parse(b, h);
    CHECK(count_kind(hinted, SectionKind::KvKey) == 4);
    CHECK(hinted.n_layer == 4);
    CHECK(decompress_bytes(compress_bytes(b)) == b);
}

TEST_CASE("unknown and damaged input becomes one opaque section, never a wrong split", "[formats]") {
    Bytes r = random_bytes(10000, 1);
    ParsedFile pf = parse(r);
    CHECK(pf.format == "opaque");
    CHECK(pf.sections.size() == 1);
    CHECK_FALSE(pf.note.empty());
    CHECK(parse(Bytes{}).sections.empty());
    // Truncations of a real file: whatever is recognised must still tile the bytes.
    Bytes real = read_file(std::string(STATEZIP_TEST_DATA) + "/ggsq3.stories260K.f16.fa1.c1024.t322.bin");
    for (size_t n : {size_t(3), size_t(12), size_t(1300), size_t(5000), real.size() / 2, real.size() - 1}) {
        Bytes t(real.begin(), real.begin() + n);
        ParsedFile p = parse(t);
        INFO("truncated to " << n);
        CHECK(p.format == "opaque");
        check_tiling(p.sections, t.size());
        CHECK(decompress_bytes(compress_bytes(t)) == t);
    }
}

TEST_CASE("bundled real files: facts as their writers configured them", "[formats][real]") {
    const std::string d = STATEZIP_TEST_DATA;
    ParsedFile f16 = parse(read_file(d + "/ggsq3.stories260K.f16.fa1.c1024.t322.bin"));
    CHECK(f16.format == "ggsq");
    CHECK(f16.version == 3);
    CHECK(f16.n_tokens == 322);
    CHECK(f16.n_cells == 322);
    CHECK(f16.n_layer == 5);
    CHECK(types_of(f16, SectionKind::KvValue) == std::set<std::string>{"f16"});
    for (const auto& s : f16.sections)
        if (s.kind == SectionKind::KvValue) CHECK_FALSE(s.transposed);  // flash attention on
    ParsedFile q8 = parse(read_file(d + "/ggsq3.stories260K-hd32.q8_0.fa1.c1024.t322.bin"));
    CHECK(types_of(q8, SectionKind::KvKey) == std::set<std::string>{"q8_0"});
    ParsedFile c = parse(read_file(d + "/C-65cdf34.main.prompt-cache.ggsn1.c512.f16.np446.L5-gqa2.bin"));
    CHECK(c.format == "ggsn");
    CHECK(c.version == 1);
    CHECK(c.n_cells == 446);
    CHECK(c.n_layer == 5);
    CHECK(c.n_embd == 32);
}

namespace {

// A file of one section (plus nothing else), for plan tables.
ParsedFile one_section(SectionKind kind, ElemType type, uint64_t rows, uint64_t row_elems, uint64_t bytes = 0,
                       bool transposed = false) {
    ParsedFile pf;
    SectionList l;
    if (rows) l.add_rows("s", kind, type, rows, row_elems, transposed);
    else l.add("s", kind, bytes, type);
    pf.sections = std::move(l.sections());
    return pf;
}

std::vector<uint32_t> chunk_sizes(const Plan& p) {
    std::vector<uint32_t> v;
    for (const auto& c : p.chunks) v.push_back(c.size);
    return v;
}

}  // namespace

TEST_CASE("plan: every preset, section kind and element type gets the policy's pipeline and whole-row chunks", "[plan]") {
    const SectionKind kinds[] = {SectionKind::Opaque, SectionKind::Header, SectionKind::Tokens, SectionKind::Rng,
                                 SectionKind::Logits, SectionKind::Embeddings, SectionKind::Cells, SectionKind::KvKey,
                                 SectionKind::KvValue, SectionKind::Slack, SectionKind::Meta, SectionKind::RecState};
    for (Preset preset : {Preset::Fast, Preset::Default, Preset::Max})
        for (SectionKind kind : kinds)
            for (uint8_t t = 0; elem_type_from_u8(t); ++t)
                for (bool transposed : {false, true}) {
                    const ElemType type = *elem_type_from_u8(t);
                    const auto& info = elem_type_info(type);
                    CodecChoice c;
                    c.preset = preset;
                    ParsedFile pf = one_section(kind, type, 300, 4 * info.block_elems, 0, transposed);
                    const Section& s = pf.sections[0];
                    Plan p = make_plan(pf, c, 4096);
                    INFO(preset_name(preset) << " " << section_kind_name(kind) << " " << info.name << (transposed ? " T" : ""));
                    REQUIRE(p.layout == PlanLayout::AsParsed);
                    REQUIRE(p.sections.size() == 1);
                    CHECK(p.sections[0].spec == choose_pipeline(s, c));
                    CHECK_FALSE(p.sections[0].alternatives.empty());
                    CHECK(p.sections[0].shape.row_bytes == s.row_bytes());
                    CHECK_FALSE(p.sections[0].rows_as_bytes);
                    // Chunks tile the section, hold whole rows and stay within the target.
                    uint64_t at = s.offset;
                    for (const auto& ch : p.chunks) {
                        CHECK(ch.offset == at);
                        CHECK(ch.size % s.row_bytes() == 0);
                        CHECK(ch.size <= 4096);
                        at += ch.size;
                    }
                    CHECK(at == s.offset + s.size);
                }
}

TEST_CASE("plan: chunk boundaries", "[plan]") {
    struct Row {
        const char* what;
        ParsedFile pf;
        uint32_t chunk_bytes;
        std::vector<uint32_t> sizes;
        bool rows_as_bytes;
    };
    const uint32_t M = 1u << 20;
    std::vector<Row> table = {
        {"bytes: 10 MiB in 4 MiB chunks", one_section(SectionKind::Opaque, ElemType::Bytes, 0, 0, 10 * M), 4 * M,
         {4 * M, 4 * M, 2 * M}, false},
        {"f16 rows of 128 B: 32 rows per 4 KiB chunk", one_section(SectionKind::KvKey, ElemType::F16, 1000, 64), 4096,
         [] { std::vector<uint32_t> v(31, 4096); v.push_back(1024); return v; }(), false},
        {"rows of 3000 B: one row per chunk when the target is smaller",
         one_section(SectionKind::KvKey, ElemType::F16, 10, 1500), 4096, std::vector<uint32_t>(10, 3000), false},
        {"a target below 4 KiB is raised to 4 KiB", one_section(SectionKind::Meta, ElemType::Bytes, 0, 0, 9000), 1,
         {4096, 4096, 808}, false},
        {"a target above the reader's chunk limit is lowered to it (it used to write unreadable chunks)",
         one_section(SectionKind::Opaque, ElemType::Bytes, 0, 0, 65 * M), 128 * M, {kMaxChunkRaw, M}, false},
        {"rows larger than a chunk can be: cut as plain bytes (recorded)",
         one_section(SectionKind::KvValue, ElemType::F32, 1, 17 * M), 4 * M,
         std::vector<uint32_t>(17, 4 * M), true},
    };
    for (const Row& r : table) {
        INFO(r.what);
        Plan p = make_plan(r.pf, CodecChoice{}, r.chunk_bytes);
        CHECK(chunk_sizes(p) == r.sizes);
        CHECK(p.sections[0].rows_as_bytes == r.rows_as_bytes);
        if (r.rows_as_bytes) CHECK(p.sections[0].shape.row_bytes == 0);
    }
}

TEST_CASE("plan: the output is byte-identical for every thread count", "[plan][threads]") {
    stzsynth::Spec s;
    s.flavour = "session9";
    s.n_layer = 4, s.n_embd = 64;
    s.k_type = ElemType::F16, s.v_type = ElemType::Q8_0;
    s.v_trans = false;
    s.cells = stzsynth::cells_for_size(s, 1u << 20);
    const Bytes in = synth(s);
    for (Preset preset : {Preset::Default, Preset::Max}) {
        Bytes first;
        for (unsigned threads : {1u, 2u, 3u, 8u}) {
            INFO(preset_name(preset) << " at -T " << threads);
            CompressOptions opt;
            opt.codec.preset = preset;
            opt.threads = threads;
            opt.chunk_bytes = 64u << 10;  // ~16 chunks: every thread count reorders the work
            Bytes z = compress_bytes(in, opt);
            if (first.empty()) first = z;
            CHECK(z == first);
            CHECK(decompress_bytes(z, threads) == in);
        }
    }
}
