// The presets' K/V graphs, spelled out where a measurement chose them (bench/RESULTS.md): a
// change of a preset shows up here as one, and a slip in the policy's branches cannot hand
// one element type another type's graph unnoticed.
#include <catch2/catch.hpp>

#include <string>

#include "codecs/codec.hpp"
#include "codecs/pipeline.hpp"
#include "plan/plan.hpp"
#include "plan/policy.hpp"
#include "sections/section.hpp"
#include "test_util.hpp"

using namespace stz;

namespace {

Section kv(SectionKind kind, ElemType type, uint64_t rows, bool transposed = false) {
    SectionList l;
    const uint64_t channels = 2 * elem_type_info(type).block_elems;  // 64 values a row for blocks
    l.add_rows(kind == SectionKind::KvKey ? "k" : "v", kind, type, rows, transposed ? rows : channels, transposed);
    return l.sections()[0];
}

std::string spec(Preset p, const Section& s, bool patch_rows = false) {
    CodecChoice c;
    c.preset = p;
    c.patch_rows = patch_rows;
    return choose_pipeline(s, c);
}

}  // namespace

TEST_CASE("policy: the K/V graph of each preset and element type", "[plan]") {
    using K = SectionKind;
    // fast: the top plane (quant blocks: the scale's high byte) by order-0 rANS whatever its
    // size, except f16's (two mantissa bits in it) by zstd -1; quants by zstd -1.
    const uint64_t big = 64 << 10, small = 8 << 10;  // rows: a top plane of 128 KiB / 16 KiB
    CHECK(spec(Preset::Fast, kv(K::KvKey, ElemType::F16, big)) == "planes:rm(top=zstd:1,rest=bitpack)");
    CHECK(spec(Preset::Fast, kv(K::KvKey, ElemType::F16, small)) == "planes:rm(top=zstd:1,rest=bitpack)");
    CHECK(spec(Preset::Fast, kv(K::KvKey, ElemType::BF16, big)) == "planes:rm(top=rans:0,rest=bitpack)");
    CHECK(spec(Preset::Fast, kv(K::KvKey, ElemType::BF16, small)) == "planes:rm(top=rans:0,rest=bitpack)");
    CHECK(spec(Preset::Fast, kv(K::KvValue, ElemType::F32, big)) == "dedup+planes:rm(top=rans:0,rest=bitpack)");
    CHECK(spec(Preset::Fast, kv(K::KvValue, ElemType::F32, 100)) == "dedup+planes:rm(top=rans:0,rest=bitpack)");
    CHECK(spec(Preset::Fast, kv(K::KvValue, ElemType::F32, 100, true)) == "celldedup+planes:rm(top=rans:0,rest=bitpack)");
    CHECK(spec(Preset::Fast, kv(K::KvValue, ElemType::Q8_0, 100)) == "dedup+planes:rm(hi=rans:0,rest=lzrans:1)");
    CHECK(spec(Preset::Fast, kv(K::KvKey, ElemType::Q8_0, big)) == "planes:rm(hi=rans:0,rest=lzrans:1)");
    CHECK(spec(Preset::Fast, kv(K::KvKey, ElemType::Q4_0, small)) == "planes:rm(hi=rans:0,rest=lzrans:1)");
    // default: quant V keeps its own graph whatever the K rules around it say.
    CHECK(spec(Preset::Default, kv(K::KvValue, ElemType::Q8_0, 4000)) == "dedup+planes:rm(all=lzrans:1)");
    CHECK(spec(Preset::Default, kv(K::KvValue, ElemType::Q8_0, 100)) == "dedup+planes:rm(all=lzrans:1)");
    // default: float V's top plane by order-0 rANS in storage order (f16's by zstd -1), the
    // mantissa bytes by order-0 rANS too (zstd -3's matches did not pay for their time).
    CHECK(spec(Preset::Default, kv(K::KvValue, ElemType::F16, 100)) == "dedup+planes:rm(top=zstd:1,rest=rans:0)");
    CHECK(spec(Preset::Default, kv(K::KvValue, ElemType::F16, 100, true)) == "celldedup+planes:rm(top=zstd:1,rest=rans:0)");
    CHECK(spec(Preset::Default, kv(K::KvValue, ElemType::BF16, 100, true)) == "celldedup+planes:rm(all=rans:0)");
    CHECK(spec(Preset::Default, kv(K::KvKey, ElemType::F16, 100)) == "planes(top=rans:1,rest=bitpack)");
    // Quant K: qctx's rANS planes (no model per channel; 5-bit values whole in a plane of their
    // own, mode 3, where that pays); max keeps the model for all. The few new rows of a patch also try zstd
    // on them (per chunk, the smaller), whole files never.
    const Section big_q8k = kv(K::KvKey, ElemType::Q8_0, 4000), small_q8k = kv(K::KvKey, ElemType::Q8_0, 100);
    REQUIRE(big_q8k.size >= 64 << 10);
    REQUIRE(small_q8k.size < 64 << 10);
    const std::string quant_k = "qctx:planes";
    CHECK(spec(Preset::Default, kv(K::KvKey, ElemType::Q4_0, 100)) == quant_k);
    CHECK(spec(Preset::Default, kv(K::KvKey, ElemType::Q5_0, 100)) == quant_k);
    CHECK(spec(Preset::Default, kv(K::KvKey, ElemType::Q5_1, 100)) == quant_k);
    CHECK(spec(Preset::Max, big_q8k).rfind("qctx|", 0) == 0);
    CHECK(spec(Preset::Default, big_q8k) == quant_k);
    CHECK(spec(Preset::Default, small_q8k) == quant_k);
    CHECK(spec(Preset::Default, big_q8k, true) == quant_k);
    CHECK(spec(Preset::Default, small_q8k, true) == quant_k + "|planes(top=rans:1,q=zstd:6,rest=zstd:3)");
    CHECK(spec(Preset::Default, kv(K::KvValue, ElemType::Q8_0, 100), true) == "dedup+planes:rm(all=lzrans:1)");
    // Every graph above parses into alternatives the plan can run.
    for (Preset p : {Preset::Fast, Preset::Default, Preset::Max})
        for (const Section& s : {big_q8k, small_q8k, kv(K::KvValue, ElemType::BF16, 100, true)})
            CHECK_FALSE(parse_alternatives(spec(p, s), s.shape()).empty());
}

TEST_CASE("policy: quant K layers with alternatives are still gathered across layers", "[plan]") {
    // [hdr, K] x 6 layers of 300 rows of q8_0 (20 KB): each K layer is small, so it has two
    // alternatives, both lone planes graphs: the run is one gathered section.
    ParsedFile pf;
    SectionList l;
    for (int layer = 0; layer < 6; ++layer) {
        l.add("hdr", SectionKind::Meta, 12);
        l.add_rows("k", SectionKind::KvKey, ElemType::Q8_0, 300, 64, false);
    }
    pf.sections = std::move(l.sections());
    CodecChoice c;
    c.patch_rows = true;
    Plan p = make_plan(pf, c, 1 << 20);
    size_t gathered = 0;
    for (const auto& s : p.sections)
        if (s.shape.record_bytes) {
            ++gathered;
            CHECK(s.alternatives.size() == 2);
        }
    CHECK(gathered == 1);
}
