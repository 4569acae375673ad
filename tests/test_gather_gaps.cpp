// Gathering K layers that lie between zero gaps (the full KV buffer of a 2023 file: each K
// layer's n_past rows, then zeros up to n_ctx): one written section per run, trim first, the
// layer's pipeline on what trim keeps.
#include <catch2/catch.hpp>

#include "plan/plan.hpp"
#include "test_synth.hpp"

using namespace stz;
using stztest::parse;
using stztest::random_bytes;
using stztest::synth;

namespace {

const Section* written_named(const Plan& p, const std::string& name) {
    for (const Section& s : p.header.sections)
        if (s.name == name) return &s;
    return nullptr;
}

uint32_t index_of(const Plan& p, const Section* s) { return static_cast<uint32_t>(s - p.header.sections.data()); }

// [K, gap] x layers by hand: K layers of `rows` x 32 f16, each followed by `gap` bytes of slack.
ParsedFile gapped(const std::vector<uint64_t>& gaps, uint64_t rows = 16) {
    ParsedFile pf;
    pf.format = "legacy-full";
    SectionList list;
    list.add("kv.k.hdr", SectionKind::Meta, 240);
    for (size_t l = 0; l < gaps.size(); ++l) {
        const std::string n = "kv.k[" + std::to_string(l) + "]";
        list.add_rows(n, SectionKind::KvKey, ElemType::F16, rows, 32);
        list.add(n + ".unused", SectionKind::Slack, gaps[l]);
    }
    pf.sections = std::move(list.sections());
    return pf;
}

// The file of `pf`: K rows of channel-dependent f16, slack zero (or not, where asked).
Bytes file_of(const ParsedFile& pf, bool dirty_gap = false) {
    Bytes f;
    for (const Section& s : pf.sections) {
        Bytes b = s.kind == SectionKind::KvKey ? stztest::channel_floats16(s.rows, s.row_elems, s.offset)
                  : s.kind == SectionKind::Slack ? Bytes(s.size, 0)
                                                 : random_bytes(s.size, s.offset);
        if (dirty_gap && s.kind == SectionKind::Slack && s.size > 100) b[100] = 0x5a;
        append_bytes(f, b);
    }
    return f;
}

Bytes compress_parsed_bytes(const Bytes& file, const ParsedFile& pf, const CompressOptions& opt = {}) {
    MemorySource src(file);
    MemorySink sink;
    compress_parsed(src, pf, sink, opt);
    return sink.out;
}

}  // namespace

TEST_CASE("a synthetic 2023 full buffer: K layers between zero gaps are gathered and round-trip", "[gather]") {
    for (ElemType t : {ElemType::F16, ElemType::F32}) {
        INFO(elem_type_info(t).name);
        stzsynth::Spec spec;
        spec.flavour = "legacy-full";
        spec.k_type = spec.v_type = t;
        spec.n_layer = 4;
        spec.n_ctx = 128;
        spec.n_embd = 64;
        spec.cells = 20;
        const Bytes file = synth(spec);
        const ParsedFile pf = parse(file);
        REQUIRE(pf.format == "legacy-full");
        REQUIRE(pf.n_cells == 20u);
        const Plan plan = make_plan(pf, CodecChoice{}, 4u << 20);
        const Section* k = written_named(plan, "kv.k[0]..kv.k[3].unused");
        REQUIRE(k != nullptr);
        const uint64_t elem = elem_type_info(t).block_bytes;
        CHECK(k->size == 4 * 128 * 64 * elem);
        CHECK(k->rows == 4);
        CHECK(k->filled_elems == 20 * 64);
        const SectionPlan& ks = plan.sections[index_of(plan, k)];
        CHECK(ks.spec.rfind("trim+planes", 0) == 0);
        REQUIRE(!ks.alternatives.empty());
        for (const Pipeline& p : ks.alternatives) {
            REQUIRE(p.stages.size() >= 2);
            CHECK(p.stages[0].codec->name() == "trim");
            CHECK(p.stages[1].codec->name() == "planes");
        }
        // The parsed K layers and their gaps all went into it.
        size_t held = 0;
        for (size_t i = 0; i < pf.sections.size(); ++i) held += plan.written_of[i] == index_of(plan, k);
        CHECK(held == 8);
        // V layers (rows of n_past values, then zeros) stay one by one: gathered, celldedup
        // would find a cell only where it repeats in every layer of the run (corpus f16 np198: +0.1 %).
        for (int l = 0; l < 4; ++l) CHECK(written_named(plan, "kv.v[" + std::to_string(l) + "]") != nullptr);

        stztest::check_gathered_round_trip(file, pf);
    }
}

TEST_CASE("K layers between zero gaps: one section, smaller than the layers one by one", "[gather]") {
    const ParsedFile pf = gapped(std::vector<uint64_t>(8, 3072));
    const Bytes file = file_of(pf);
    const Plan p = make_plan(pf, CodecChoice{}, 4u << 20);
    REQUIRE(written_named(p, "kv.k[0]..kv.k[7].unused") != nullptr);
    CHECK(p.header.sections.size() == 2);
    const Bytes gathered = compress_parsed_bytes(file, pf);
    CHECK(stztest::decompress_bytes(gathered) == file);
    // The same bytes with the gaps as metadata: nothing to gather, each layer coded alone.
    ParsedFile apart = pf;
    for (Section& s : apart.sections)
        if (s.kind == SectionKind::Slack) s.kind = SectionKind::Meta;
    REQUIRE(written_named(make_plan(apart, CodecChoice{}, 4u << 20), "kv.k[0]..kv.k[7].unused") == nullptr);
    const Bytes one_by_one = compress_parsed_bytes(file, apart);
    CHECK(stztest::decompress_bytes(one_by_one) == file);
    CHECK(gathered.size() < one_by_one.size());
}

TEST_CASE("K layers between zero gaps: runs stop at other gaps, other layers and the chunk target", "[gather]") {
    SECTION("a gap of another size ends the run") {
        const Plan p = make_plan(gapped({3072, 3072, 3072, 100, 3072, 3072}), CodecChoice{}, 4u << 20);
        CHECK(written_named(p, "kv.k[0]..kv.k[2].unused") != nullptr);
        CHECK(written_named(p, "kv.k[3]") != nullptr);
        CHECK(written_named(p, "kv.k[4]..kv.k[5].unused") != nullptr);
    }
    SECTION("a lone pair stays as parsed") {
        const Plan p = make_plan(gapped({3072, 100, 3072}), CodecChoice{}, 4u << 20);
        CHECK(p.header.sections.size() == 7);
    }
    SECTION("records are cut at the chunk target, and none larger than it is gathered") {
        const Plan p = make_plan(gapped(std::vector<uint64_t>(6, 3072)), CodecChoice{}, 8192);  // 4096-byte records
        CHECK(written_named(p, "kv.k[0]..kv.k[1].unused") != nullptr);
        CHECK(written_named(p, "kv.k[4]..kv.k[5].unused") != nullptr);
        for (const ChunkJob& c : p.chunks) CHECK(c.size <= 8192);
        const Plan big = make_plan(gapped(std::vector<uint64_t>(4, 8192)), CodecChoice{}, 4096);
        CHECK(written_named(big, "kv.k[0]") != nullptr);
    }
    SECTION("the max preset gathers them too (its alternatives need no records here)") {
        CodecChoice max;
        max.preset = Preset::Max;
        const Plan p = make_plan(gapped(std::vector<uint64_t>(4, 3072)), max, 4u << 20);
        const Section* k = written_named(p, "kv.k[0]..kv.k[3].unused");
        REQUIRE(k != nullptr);
        for (const Pipeline& alt : p.sections[index_of(p, k)].alternatives) CHECK(alt.stages[0].codec->name() == "trim");
        CHECK(p.sections[index_of(p, k)].alternatives.size() >= 2);
    }
    SECTION("a pipeline the user forced is not gathered across gaps") {
        CodecChoice zstd;
        zstd.all = "zstd:3";
        CHECK(make_plan(gapped(std::vector<uint64_t>(4, 3072)), zstd, 4u << 20).header.sections.size() == 9);
    }
}

TEST_CASE("K layers between gaps that are not zero still round-trip (trim keeps the gaps)", "[gather]") {
    const ParsedFile pf = gapped(std::vector<uint64_t>(5, 3072));
    const Bytes file = file_of(pf, true);
    for (Preset preset : {Preset::Fast, Preset::Default, Preset::Max}) {
        CompressOptions opt;
        opt.codec.preset = preset;
        INFO(preset_name(preset));
        const Bytes z = compress_parsed_bytes(file, pf, opt);
        CHECK(stztest::decompress_bytes(z) == file);
    }
}
