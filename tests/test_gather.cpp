// Gathering small sections: `planes` over records (a head of other bytes, then a body of
// rows) and the plan that writes a run of K layers [hdr, K] x n as one section of records.
#include <catch2/catch.hpp>
#include <random>

#include "container/container.hpp"
#include "codecs/pipeline.hpp"
#include "plan/plan.hpp"
#include "test_synth.hpp"

using namespace stz;
using stztest::channel_floats16;
using stztest::parse;
using stztest::random_bytes;
using stztest::synth;

namespace {

DataShape f16_rows(uint64_t cols) {
    DataShape s;
    s.kind = ElemKind::F16;
    s.elem_bytes = 2;
    s.row_bytes = 2 * cols;
    return s;
}

DataShape q8_rows(uint64_t blocks) {
    DataShape s;
    s.kind = ElemKind::Block;
    s.elem_bytes = 34;
    s.block_head = 2;
    s.row_bytes = 34 * blocks;
    return s;
}

}  // namespace

// The planes stage existed before records: its parameters and output for shapes without
// records must stay byte for byte what they were (files written with id 13 still decode, and
// the same input still gives the same file). Hashes taken from the code before records; the
// two with rans:1 retaken when the rans codec's order-1 streams got grouped contexts (the f16
// exponent plane's is one: smaller, the planes' layout the same, as the other three show).
TEST_CASE("planes output without records is unchanged", "[gather]") {
    const Bytes f16 = channel_floats16(500, 32, 21);
    Bytes q8 = random_bytes(34 * 8 * 40, 22);
    struct Case {
        const char* spec;
        DataShape shape;
        const Bytes* data;
    };
    const Case cases[] = {
        {"planes(top=rans:1,rest=store)", f16_rows(32), &f16},
        {"planes:rm(top=zstd:1,rest=store)", f16_rows(32), &f16},
        {"planes:rm(top=rans:1,rest=zstd:3)", f16_rows(32), &f16},
        {"planes(top=rans:1,q=zstd:3,rest=zstd:3)", q8_rows(8), &q8},
        {"planes:rm(all=zstd:3)", q8_rows(8), &q8},
    };
    const uint64_t expected[] = {0xc9fc73b91aa80a62ull, 0x5790256c792821f8ull, 0xcbde64b4d7783355ull,
                                 0xc73c2152ddf35cf4ull, 0xbb32188b5db8588cull};
    for (size_t i = 0; i < std::size(cases); ++i) {
        const Case& c = cases[i];
        INFO(c.spec);
        Pipeline p = parse_pipeline(c.spec, c.shape);
        Bytes all = p.stages[0].params;
        append_bytes(all, encode_pipeline(p, *c.data).payload);
        CHECK(hash64(all) == expected[i]);
    }
}

namespace {

DataShape with_records(DataShape s, uint64_t record, uint32_t head) {
    s.record_bytes = record;
    s.record_head = head;
    return s;
}

// n records: a head of `head` bytes (equal heads or random ones), then `body`'s i-th slice.
Bytes records_of(const Bytes& bodies, uint64_t body, uint32_t head, bool equal_heads, uint64_t seed) {
    Bytes out;
    const Bytes same = random_bytes(head, seed);
    for (uint64_t i = 0; body && i < bodies.size() / body; ++i) {
        const Bytes h = equal_heads ? same : random_bytes(head, seed + 1 + i);
        append_bytes(out, h);
        out.insert(out.end(), bodies.begin() + i * body, bodies.begin() + (i + 1) * body);
    }
    return out;
}

Bytes roundtrip(const Pipeline& p, const Bytes& data) {
    EncodedChunk e = encode_pipeline(p, data);
    return decode_pipeline(p, e.payload, e.stage_input_sizes);
}

std::vector<const Section*> gathered(const Plan& p) {
    std::vector<const Section*> g;
    for (const Section& s : p.header.sections)
        if (s.name.find("..") != std::string::npos) g.push_back(&s);
    return g;
}

}  // namespace

TEST_CASE("planes with records round-trips: heads of 0, 1, 12, 64 bytes, 0 to many records", "[gather]") {
    const char* specs[] = {"planes(top=rans:1,rest=store)", "planes:rm(top=zstd:1,rest=store)",
                           "planes(top=rans:1,q=zstd:3,rest=zstd:3)"};
    for (const char* spec : specs)
        for (uint32_t head : {0u, 1u, 12u, 64u})
            for (uint64_t n : {0u, 1u, 2u, 7u, 60u})
                for (uint64_t body : {uint64_t{34 * 8 * 3}, uint64_t{193}, uint64_t{1}})
                    for (bool equal : {true, false}) {
                        const bool q8 = std::string(spec).find("q=") != std::string::npos;
                        const DataShape rows = q8 ? q8_rows(8) : f16_rows(32);
                        const Bytes bodies = q8 ? random_bytes(body * n, n + head) : channel_floats16(body * n / 2 + 1, 1, n);
                        const Bytes data = records_of(Bytes(bodies.begin(), bodies.begin() + body * n), body, head, equal, head);
                        INFO(spec << " head " << head << " records " << n << " body " << body << (equal ? " equal" : ""));
                        REQUIRE(data.size() == n * (head + body));
                        const Pipeline p = parse_pipeline(spec, with_records(rows, head + body, head));
                        CHECK(roundtrip(p, data) == data);
                    }
}

TEST_CASE("planes with records: equal heads cost two bytes, bodies are coded as one", "[gather]") {
    const Bytes bodies = channel_floats16(40 * 8, 32, 3);  // 8 layers of 40 rows x 32 f16
    const uint64_t body = 40 * 64;
    const Bytes same = records_of(bodies, body, 12, true, 5), differ = records_of(bodies, body, 12, false, 5);
    const Pipeline p = parse_pipeline("planes(top=rans:1,rest=store)", with_records(f16_rows(32), body + 12, 12));
    const Bytes a = encode_pipeline(p, same).payload, b = encode_pipeline(p, differ).payload;
    CHECK(b.size() - a.size() == 7 * 12 - 1);  // 7 later heads stored (+ 1 mode) vs constant (2 bytes)
    // The bodies part is exactly planes over the concatenated bodies.
    const Bytes plain = encode_pipeline(parse_pipeline("planes(top=rans:1,rest=store)", f16_rows(32)), bodies).payload;
    CHECK(a.size() == 12 + 2 + plain.size());
    CHECK(Bytes(a.end() - plain.size(), a.end()) == plain);
}

TEST_CASE("planes with records refuses partial records and crafted record parameters", "[gather]") {
    const Codec* planes = find_codec("planes");
    const uint64_t body = 10 * 64, record = body + 12;
    const Pipeline p = parse_pipeline("planes(top=rans:1,rest=store)", with_records(f16_rows(32), record, 12));
    const Bytes data = records_of(channel_floats16(30, 32, 8), body, 12, true, 1);
    REQUIRE(data.size() == 3 * record);
    // A partial last record: encode refuses (the plan never cuts one), decode refuses.
    Bytes out;
    CHECK_THROWS_AS(planes->encode(ByteSpan(data).first(data.size() - 1), p.stages[0].params, out), Error);
    const Bytes payload = encode_pipeline(p, data).payload;
    for (size_t size : {data.size() - 1, data.size() + 1, data.size() - record + 5}) {
        out.clear();
        CHECK_THROWS_AS(planes->decode(payload, p.stages[0].params, size, out), Error);
    }
    // Truncated payloads and a coded heads record.
    for (size_t cut : {size_t{0}, size_t{5}, size_t{12}, size_t{13}, payload.size() - 1}) {
        out.clear();
        CHECK_THROWS_AS(planes->decode(ByteSpan(payload).first(cut), p.stages[0].params, data.size(), out), Error);
    }
    Bytes coded = payload;
    coded[12] = 1;
    out.clear();
    CHECK_THROWS_AS(planes->decode(coded, p.stages[0].params, data.size(), out), Error);
    // Parameters: flags, 2-byte width, head, cols varint (1 byte: 32), then record varint, head.
    const Bytes good = p.stages[0].params;
    REQUIRE((good[0] & 4) == 4);
    Bytes no_records = parse_pipeline("planes(top=rans:1,rest=store)", f16_rows(32)).stages[0].params;
    Bytes flag_only = no_records;
    flag_only[0] |= 4;  // records announced, fields missing: the recipe bytes are misread
    Bytes head_65 = good;
    const size_t head_at = good.size() - (no_records.size() - 5) - 1;
    REQUIRE(good[head_at] == 12);
    head_65[head_at] = 65;
    Bytes zero_record = no_records;
    zero_record[0] |= 4;
    zero_record.insert(zero_record.begin() + 5, {0, 0});
    for (const Bytes& bad : {flag_only, head_65, zero_record}) {
        CHECK_THROWS_AS(planes->check_params(bad), Error);
        out.clear();
        CHECK_THROWS_AS(planes->decode(payload, bad, data.size(), out), Error);
    }
    // make_params refuses what it cannot store.
    CHECK_THROWS_AS(parse_pipeline("planes(all=store)", with_records(f16_rows(32), 100, 65)), Error);
    CHECK_THROWS_AS(parse_pipeline("planes(all=store)", with_records(f16_rows(32), 12, 12)), Error);
}

TEST_CASE("the plan gathers the K layers of a file into one section, and the output is the same for 1 and 2 threads",
          "[gather]") {
    for (const char* flavour : {"seq3", "session10"})
        for (ElemType k : {ElemType::F16, ElemType::Q8_0}) {
            stzsynth::Spec spec;
            spec.flavour = flavour;
            spec.k_type = k;
            spec.n_embd = 64;
            spec.cells = 260;  // q8_0 layers of 17 KB (fast gathers quant layers of 16 KiB and more)
            const Bytes file = synth(spec);
            const ParsedFile pf = parse(file);
            INFO(flavour << " " << elem_type_info(k).name);
            const Plan plan = make_plan(pf, CodecChoice{}, 4u << 20);
            const auto g = gathered(plan);
            REQUIRE(g.size() >= 1);
            CHECK(g[0]->name == "kv.k[0]..kv.k[4]");
            CHECK(g[0]->kind == SectionKind::KvKey);
            CHECK(g[0]->type == k);
            CHECK(plan.layout == PlanLayout::AsParsed);
            // The written section is the run [hdr0, K0, ..., hdr4, K4], coded as records.
            const uint32_t w = static_cast<uint32_t>(g[0] - plan.header.sections.data());
            size_t held = 0;
            for (size_t i = 0; i < pf.sections.size(); ++i)
                if (plan.written_of[i] == w) {
                    ++held;
                    CHECK((pf.sections[i].kind == SectionKind::KvKey || pf.sections[i].size <= 64));
                }
            CHECK(held == 10);
            const DataShape& sh = plan.sections[w].shape;
            CHECK(sh.record_head == 12);
            CHECK(sh.record_bytes * 5 == g[0]->size);
            CHECK((plan.sections[w].spec.rfind("planes", 0) == 0 || plan.sections[w].spec.rfind("qctx", 0) == 0));

            stztest::check_gathered_round_trip(file, pf);
        }
}

TEST_CASE("the plan gathers only equal, adjacent layers within the chunk target", "[gather]") {
    // [hdr, K] x 6 by hand: K layers of 16 rows x 32 f16 (1 KiB), each after a 12-byte header.
    auto layers = [](const std::vector<uint64_t>& rows, const std::vector<uint64_t>& heads) {
        ParsedFile pf;
        pf.format = "raw";
        SectionList list;
        list.add("header", SectionKind::Header, 40);
        for (size_t l = 0; l < rows.size(); ++l) {
            list.add("kv.k[" + std::to_string(l) + "].hdr", SectionKind::Meta, heads[l]);
            list.add_rows("kv.k[" + std::to_string(l) + "]", SectionKind::KvKey, ElemType::F16, rows[l], 32);
        }
        pf.sections = std::move(list.sections());
        return pf;
    };
    const std::vector<uint64_t> twelve(6, 12);
    SECTION("equal layers: one run") {
        const Plan p = make_plan(layers({16, 16, 16, 16, 16, 16}, twelve), CodecChoice{}, 1u << 20);
        REQUIRE(gathered(p).size() == 1);
        CHECK(gathered(p)[0]->name == "kv.k[0]..kv.k[5]");
        CHECK(p.header.sections.size() == 2);
    }
    SECTION("a layer of another size splits the run; a lone layer stays as parsed") {
        const Plan p = make_plan(layers({16, 16, 16, 20, 16, 16}, twelve), CodecChoice{}, 1u << 20);
        REQUIRE(gathered(p).size() == 2);
        CHECK(gathered(p)[0]->name == "kv.k[0]..kv.k[2]");
        CHECK(gathered(p)[1]->name == "kv.k[4]..kv.k[5]");
        const Plan q = make_plan(layers({16, 20, 16, 20, 16, 20}, twelve), CodecChoice{}, 1u << 20);
        CHECK(gathered(q).empty());
        CHECK(q.header.sections.size() == 13);
    }
    SECTION("heads of other sizes or over 64 bytes are not gathered") {
        CHECK(gathered(make_plan(layers({16, 16, 16, 16}, {12, 13, 12, 13}), CodecChoice{}, 1u << 20)).empty());
        CHECK(gathered(make_plan(layers({16, 16, 16, 16}, {65, 65, 65, 65}), CodecChoice{}, 1u << 20)).empty());
    }
    SECTION("a long run is cut into groups of at most the chunk target and 1 MiB, one chunk each") {
        // 4096-byte target (the smallest), 1996-byte records (larger layers: 31 rows): two per group.
        const Plan p = make_plan(layers({31, 31, 31, 31, 31, 31}, twelve), CodecChoice{}, 4096);
        REQUIRE(gathered(p).size() == 3);
        for (const Section* s : gathered(p)) CHECK(s->size == 2 * (12 + 31 * 64));
        for (const ChunkJob& c : p.chunks) CHECK(c.size <= 4096);
        // With the default 4 MiB target a run stops at 1 MiB: 300 KiB layers go three by three.
        const Plan big = make_plan(layers(std::vector<uint64_t>(8, 4800), std::vector<uint64_t>(8, 12)), CodecChoice{},
                                   4u << 20);
        REQUIRE(gathered(big).size() == 3);
        CHECK(gathered(big)[0]->name == "kv.k[0]..kv.k[2]");
        CHECK(gathered(big)[2]->name == "kv.k[6]..kv.k[7]");
        for (const Section* s : gathered(big)) CHECK(s->size <= (1u << 20));
    }
    SECTION("quant layers under 16 KiB are gathered only for qctx (zstd codes small quant planes better)") {
        auto q8 = [&](uint64_t rows) {
            ParsedFile pf;
            pf.format = "raw";
            SectionList list;
            for (int l = 0; l < 3; ++l) {
                list.add("kv.k[" + std::to_string(l) + "].hdr", SectionKind::Meta, 12);
                list.add_rows("kv.k[" + std::to_string(l) + "]", SectionKind::KvKey, ElemType::Q8_0, rows, 64);
            }
            pf.sections = std::move(list.sections());
            return pf;
        };
        CodecChoice fast;  // quant K planes by zstd -1
        fast.preset = Preset::Fast;
        CHECK(gathered(make_plan(q8(240), fast, 1u << 20)).empty());      // 16320 B layers
        CHECK(gathered(make_plan(q8(241), fast, 1u << 20)).size() == 1);  // 16388 B layers
        CHECK(gathered(make_plan(q8(240), CodecChoice{}, 1u << 20)).size() == 1);  // the default: qctx
    }
    SECTION("the max preset (alternatives) and pipelines not starting with planes are not gathered") {
        CodecChoice max;
        max.preset = Preset::Max;
        CHECK(gathered(make_plan(layers({16, 16, 16}, twelve), max, 1u << 20)).empty());
        CodecChoice zstd;
        zstd.all = "zstd:3";
        CHECK(gathered(make_plan(layers({16, 16, 16}, twelve), zstd, 1u << 20)).empty());
        CodecChoice fast;
        fast.preset = Preset::Fast;
        CHECK(gathered(make_plan(layers({16, 16, 16}, twelve), fast, 1u << 20)).size() == 1);
    }
    SECTION("layers back to back, without headers (pack blocks, patch sections), form one run") {
        ParsedFile pf;
        pf.format = "pack-block";
        SectionList list;
        for (int l = 0; l < 4; ++l) list.add_rows("kv.k[" + std::to_string(l) + "]", SectionKind::KvKey, ElemType::F16, 16, 32);
        list.add_rows("kv.v[0]", SectionKind::KvValue, ElemType::F16, 16, 32);
        pf.sections = std::move(list.sections());
        const Plan p = make_plan(pf, CodecChoice{}, 1u << 20);
        REQUIRE(gathered(p).size() == 1);
        CHECK(gathered(p)[0]->name == "kv.k[0]..kv.k[3]");
        CHECK(gathered(p)[0]->rows == 64);
        CHECK(p.header.sections.size() == 2);
        Bytes file = random_bytes(pf.sections.back().offset + pf.sections.back().size, 78);
        MemorySource src(file);
        MemorySink sink;
        compress_parsed(src, pf, sink, CompressOptions{});
        CHECK(stztest::decompress_bytes(sink.out) == file);
    }
    SECTION("gathered output round-trips") {
        ParsedFile pf = layers({16, 16, 16, 16, 16, 16}, twelve);
        Bytes file = random_bytes(pf.sections.back().offset + pf.sections.back().size, 77);
        MemorySource src(file);
        MemorySink sink;
        compress_parsed(src, pf, sink, CompressOptions{});
        CHECK(stztest::decompress_bytes(sink.out) == file);
    }
}

TEST_CASE("planes:rm with records splits each body in place: the bytes of planes over the bodies", "[gather]") {
    // Storage order: the planes of n bodies are each body's planes in turn, so the encoder and
    // decoder permute every body straight from and into its record; the bodies' part of the
    // payload must still be exactly planes over the concatenated bodies (the format is one).
    struct Case {
        const char* spec;
        DataShape rows;
        Bytes bodies;
        uint64_t body;
    };
    const Case cases[] = {{"planes:rm(top=zstd:1,rest=bitpack)", f16_rows(32), channel_floats16(30 * 6, 32, 4), 30 * 64},
                          {"planes:rm(hi=rans:0,rest=zstd:1)", q8_rows(8), random_bytes(34 * 8 * 20 * 6, 8), 34 * 8 * 20}};
    for (const Case& c : cases) {
        INFO(c.spec);
        const Bytes data = records_of(c.bodies, c.body, 12, true, 3);
        const Pipeline p = parse_pipeline(c.spec, with_records(c.rows, c.body + 12, 12));
        const Bytes a = encode_pipeline(p, data).payload;
        const Bytes plain = encode_pipeline(parse_pipeline(c.spec, c.rows), c.bodies).payload;
        REQUIRE(a.size() == 12 + 2 + plain.size());  // the first head, the constant deltas, the bodies
        CHECK(Bytes(a.end() - plain.size(), a.end()) == plain);
        CHECK(roundtrip(p, data) == data);
    }
}
