// Lossy modes (src/lib/lossy/lossy.hpp): the rounding itself on adversarial values of every type,
// f16-exact against the compiler's own IEEE f32 -> f16 conversion, reads through the rounding
// at any offset, and the engine: lossy only when asked, the rounded file round-trips.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "../tools/synth.hpp"
#include "lossy/lossy.hpp"
#include "test_util.hpp"

using namespace stz;
using namespace stztest;

namespace {

float f32_of(uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}
uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

// Value of a float of `width` bits with `mant` mantissa bits (f16, bf16, f32), in double.
double value_of(uint32_t bits, unsigned width, unsigned mant) {
    if (width == 32) return f32_of(bits);
    if (mant == 7) return f32_of(bits << 16);
    return f32_of(f16_to_f32_bits(static_cast<uint16_t>(bits)));
}

// Reference for round_low_mantissa, by value: of the two finite neighbours with the low bits
// zero, the nearer; a tie goes to the even one; above the largest such finite value, that value.
uint32_t reference_round(uint32_t bits, unsigned width, unsigned mant, unsigned drop) {
    const uint32_t sign = 1u << (width - 1), mag = bits & (sign - 1);
    const uint32_t exp_mask = (sign - 1) & ~((1u << mant) - 1);
    if ((mag & exp_mask) == exp_mask || drop == 0) return bits;
    const uint32_t step = 1u << drop, down = mag & ~(step - 1), up = down + step;
    const uint32_t max_finite = (exp_mask - 1) & ~(step - 1);
    if (up > max_finite) return (bits & sign) | down;  // the next value up is not finite
    const double x = value_of(mag, width, mant), a = value_of(down, width, mant), b = value_of(up, width, mant);
    const double da = x - a, db = b - x;
    const bool pick_up = db < da || (db == da && (down & step));
    return (bits & sign) | (pick_up ? up : down);
}

// Specials of every float type in the low `width` bits: ±0, ±Inf, NaNs with payloads,
// subnormals, max finite, and the values around them.
std::vector<uint32_t> adversarial(unsigned width, unsigned mant) {
    const uint32_t sign = 1u << (width - 1), exp_mask = (sign - 1) & ~((1u << mant) - 1);
    const uint32_t mant_mask = (1u << mant) - 1;
    std::vector<uint32_t> v = {0, 1, 2, 3, mant_mask, mant_mask - 1, mant_mask + 1, exp_mask, exp_mask | 1,
                               exp_mask | mant_mask, exp_mask | (1u << (mant - 1)), exp_mask - 1, exp_mask - 2,
                               (exp_mask - 1) & ~0xfu, 1u << mant, (1u << mant) | 0x55};
    const size_t n = v.size();
    for (size_t i = 0; i < n; ++i) v.push_back(v[i] | sign);
    return v;
}

}  // namespace

TEST_CASE("lossy: mantissa rounding of f16 and bf16 is nearest-even, finite and idempotent for every value",
          "[lossy]") {
    for (unsigned mant : {10u, 7u}) {
        for (unsigned drop = 1; drop <= mant; ++drop) {
            for (uint32_t b = 0; b < 0x10000; ++b) {
                const uint32_t r = round_low_mantissa(b, 16, mant, drop);
                INFO("mant " << mant << " drop " << drop << " bits " << b);
                REQUIRE(r == reference_round(b, 16, mant, drop));
                REQUIRE(round_low_mantissa(r, 16, mant, drop) == r);
                const bool low_zero = (r & ((1u << drop) - 1)) == 0, special = (r & 0x7fff) >= (0x7fffu & ~((1u << mant) - 1));
                REQUIRE((low_zero || special));
            }
        }
    }
}

TEST_CASE("lossy: mantissa rounding of f32 on adversarial and random values", "[lossy]") {
    std::vector<uint32_t> vals = adversarial(32, 23);
    std::mt19937 g(7);
    for (int i = 0; i < 200000; ++i) vals.push_back(g());
    for (uint32_t b : adversarial(32, 23)) vals.push_back(b ^ 0x1000), vals.push_back(b | 0x3f);
    for (unsigned drop : {1u, 2u, 6u, 13u, 22u, 23u}) {
        for (uint32_t b : vals) {
            const uint32_t r = round_low_mantissa(b, 32, 23, drop);
            INFO("drop " << drop << " bits " << b);
            REQUIRE(r == reference_round(b, 32, 23, drop));
            REQUIRE(round_low_mantissa(r, 32, 23, drop) == r);
            if (std::isfinite(f32_of(b))) REQUIRE(std::isfinite(f32_of(r)));
            if (std::isnan(f32_of(b)) || std::isinf(f32_of(b))) REQUIRE(r == b);  // payload kept
        }
    }
    CHECK(round_low_mantissa(0x7f7fffffu, 32, 23, 8) == 0x7f7fff00u);  // max finite: clamped, not Inf
    CHECK(round_low_mantissa(0x00000080u, 32, 23, 8) == 0x00000000u);  // subnormal tie to even (zero)
    CHECK(round_low_mantissa(0x00000180u, 32, 23, 8) == 0x00000200u);  // tie to even (up)
    CHECK(round_low_mantissa(0x007fff80u, 32, 23, 8) == 0x00800000u);  // subnormal rounds up to normal
    CHECK(round_low_mantissa(0x80000000u, 32, 23, 23) == 0x80000000u);  // -0 stays -0
}

TEST_CASE("lossy: f16-exact is the IEEE round-to-nearest-even f32 -> f16 -> f32 ggml does", "[lossy]") {
    // Every f16 value is a fixed point; the midpoints between neighbours and one f32 ulp either
    // side of them are where a conversion goes wrong.
    std::vector<uint32_t> vals = adversarial(32, 23);
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const uint32_t f = f16_to_f32_bits(static_cast<uint16_t>(h));
        if (((h >> 10) & 0x1f) != 0x1f) REQUIRE(f32_to_f16_bits(f) == h);
        const float x = f32_of(f), next = f32_of(f16_to_f32_bits(static_cast<uint16_t>(h + 1)));
        if (!std::isfinite(x) || !std::isfinite(next) || (h & 0x7fff) == 0x7bff || h == 0x7fff || h == 0xffff) continue;
        const uint32_t mid = bits_of(x + (next - x) / 2);
        for (uint32_t d : {0u, 1u, 2u}) vals.push_back(mid + d), vals.push_back(mid - d);
    }
    for (float big : {65504.0f, 65519.0f, 65519.996f, 65520.0f, 65536.0f, 1e30f, 5.9604645e-08f, 2.9802322e-08f,
                      2.9802326e-08f, 1e-10f})
        vals.push_back(bits_of(big)), vals.push_back(bits_of(-big));
    std::mt19937 g(3);
    for (int i = 0; i < 300000; ++i) vals.push_back(g());
    for (uint32_t b : vals) {
        const float x = f32_of(b);
        const uint32_t r = round_f32_through_f16(b);
        INFO("bits " << b);
        REQUIRE(round_f32_through_f16(r) == r);  // idempotent
        if (std::isnan(x)) {
            REQUIRE(std::isnan(f32_of(r)));
            REQUIRE((r >> 31) == (b >> 31));
            continue;
        }
#ifdef __FLT16_MAX__
        const _Float16 h = static_cast<_Float16>(x);  // the compiler's IEEE conversion (F16C or libgcc)
        REQUIRE(r == bits_of(static_cast<float>(h)));
#endif
    }
    CHECK(f32_of(round_f32_through_f16(bits_of(65519.0f))) == 65504.0f);
    CHECK(std::isinf(f32_of(round_f32_through_f16(bits_of(65520.0f)))));  // overflow to Inf, as ggml
    CHECK(round_f32_through_f16(bits_of(-0.0f)) == bits_of(-0.0f));
    CHECK(f32_of(round_f32_through_f16(bits_of(2.9802322e-08f))) == 0.0f);  // 2^-25: tie to even zero
}

TEST_CASE("lossy: specs parse, and bad ones are refused", "[lossy]") {
    CHECK(parse_lossy_spec("f16-exact").mode == LossyMode::F16Exact);
    LossySpec d = parse_lossy_spec("drop:K=2,V=6");
    CHECK((d.mode == LossyMode::DropBits && d.k == 2 && d.v == 6));
    CHECK(parse_lossy_spec(d.text()).text() == "drop:K=2,V=6");
    LossySpec k = parse_lossy_spec("keep:V=4");
    CHECK((k.mode == LossyMode::KeepBits && k.k == 23 && k.v == 4));
    for (const char* bad : {"", "f16", "drop", "drop:", "drop:K=", "drop:K=24", "drop:X=1", "drop:K=1,K=2", "drop:K=-1",
                            "keep:V=1x", "bits:V=6"})
        CHECK_THROWS_AS(parse_lossy_spec(bad), Error);
}

namespace {

// A made-up layout: 3 header bytes (so every K/V section starts at an odd offset), f32 K,
// f16 V, bf16 K, a q8_0 section and a transposed option.
ParsedFile test_layout(bool v_transposed) {
    ParsedFile p;
    SectionList l;
    l.add("head", SectionKind::Header, 3);
    l.add_rows("k0", SectionKind::KvKey, ElemType::F32, 10, 7);
    l.add_rows("v0", SectionKind::KvValue, ElemType::F16, v_transposed ? 9 : 10, v_transposed ? 10 : 9, v_transposed);
    l.add_rows("k1", SectionKind::KvKey, ElemType::BF16, 5, 5);
    l.add_rows("q", SectionKind::KvValue, ElemType::Q8_0, 2, 32);
    l.add("tail", SectionKind::Meta, 5);
    p.sections = l.sections();
    return p;
}

}  // namespace

TEST_CASE("lossy: plans say what is left exact and why", "[lossy]") {
    LossyPlan f = plan_lossy(test_layout(false), parse_lossy_spec("f16-exact"));
    CHECK(f.sections[1].op == RoundOp::F16Exact);
    CHECK(f.sections[2].op == RoundOp::None);  // f16 V: already f16
    CHECK(f.note.find("f32 caches only") != std::string::npos);
    CHECK(f.note.find("quantised") != std::string::npos);
    LossyPlan t = plan_lossy(test_layout(true), parse_lossy_spec("f16-exact"));
    CHECK_FALSE(t.changes_anything());
    CHECK(t.note.find("transposed") != std::string::npos);
    LossyPlan b = plan_lossy(test_layout(true), parse_lossy_spec("drop:K=3,V=12"));
    CHECK((b.sections[1].op == RoundOp::Mantissa && b.sections[1].drop == 3));
    CHECK(b.sections[2].drop == 10);  // capped at f16's 10 mantissa bits, with a note
    CHECK(b.note.find("10 mantissa bits") != std::string::npos);
    CHECK(b.sections[4].op == RoundOp::None);
    LossyPlan k = plan_lossy(test_layout(false), parse_lossy_spec("keep:K=23,V=4"));
    CHECK(k.sections[1].op == RoundOp::None);  // f32 K keeps all 23
    CHECK(k.sections[2].drop == 6);
    CHECK(k.sections[3].op == RoundOp::None);
}

TEST_CASE("lossy: reads through the rounding are the same at any offset and length", "[lossy]") {
    for (bool transposed : {false, true}) {
        ParsedFile p = test_layout(transposed);
        const uint64_t size = p.sections.back().offset + p.sections.back().size;
        Bytes file = random_bytes(size, 11);
        MemorySource src(file);
        LossyPlan plan = plan_lossy(p, parse_lossy_spec("drop:K=5,V=4"));
        RoundingSource rounded(src, p, plan);
        Bytes whole(size);
        rounded.read_at(0, whole.data(), size);
        // The reference: each section rounded on its own.
        Bytes ref = file;
        for (size_t i = 0; i < p.sections.size(); ++i)
            round_elements(ref.data() + p.sections[i].offset, p.sections[i].size, p.sections[i].type, plan.sections[i]);
        REQUIRE(whole == ref);
        CHECK(whole != file);
        std::mt19937 g(5);
        for (int i = 0; i < 2000; ++i) {
            const uint64_t off = g() % size, n = g() % (size - off + 1);
            Bytes part(n);
            rounded.read_at(off, part.data(), n);
            REQUIRE(std::equal(part.begin(), part.end(), ref.begin() + off));
        }
        LossyReport rep = measure_lossy(src, p, plan);
        CHECK(rep.k.values == 70 + 25);
        CHECK(rep.v.values == 90);
        CHECK(rep.k.changed > 0);
        CHECK(rep.summary().find("drop:K=5,V=4; K: max abs") == 0);
    }
}

namespace {

Bytes synth_state(stz::ElemType t, bool v_trans, uint32_t cells = 300) {
    stzsynth::Spec s;
    s.flavour = "seq3";
    s.k_type = s.v_type = t;
    s.v_trans = v_trans;
    s.cells = cells;
    MemorySink sink;
    stzsynth::write_state(s, sink);
    return sink.out;
}

}  // namespace

TEST_CASE("lossy: the engine stores the rounded file, says so in the header, and only when asked", "[lossy]") {
    const Bytes file = synth_state(ElemType::F32, false);
    CHECK(decompress_bytes(compress_bytes(file)) == file);  // no lossy without the option
    const Bytes plain_stz = compress_bytes(file);  // the stream reads it in place: keep it alive
    MemoryStream plain(plain_stz);
    CHECK(ContainerReader(plain).header().property(kLossyProperty) == nullptr);
    CompressOptions opt;
    opt.lossy = parse_lossy_spec("f16-exact");
    const Bytes stz = compress_bytes(file, opt);
    const Bytes back = decompress_bytes(stz);
    REQUIRE(back.size() == file.size());
    CHECK(back != file);
    // The restored file is the rounded one: every value is an f16 value, the rest unchanged.
    MemorySource src(file);
    ParsedFile parsed = parse_state_file(src, {});
    RoundingSource rounded(src, parsed, plan_lossy(parsed, opt.lossy));
    Bytes expect(file.size());
    rounded.read_at(0, expect.data(), expect.size());
    CHECK(back == expect);
    MemoryStream ms(stz);
    ContainerReader reader(ms);
    const HeaderProperty* p = reader.header().property(kLossyProperty);
    REQUIRE(p);
    CHECK_FALSE(p->required);
    INFO(p->value);
    CHECK(p->value.rfind("f16-exact; K: max abs", 0) == 0);
    // Lossy again over the restored file changes nothing (idempotent): the output is the exact one
    // and stored without the property; the transposed-V file of the same data is left exact.
    const Bytes again = compress_bytes(back, opt);
    CHECK(decompress_bytes(again) == back);
    CHECK(again == compress_bytes(back));
    const Bytes trans = synth_state(ElemType::F32, true);
    CHECK(compress_bytes(trans, opt) == compress_bytes(trans));
    // The same output whatever the thread count (the rounding happens where the chunks are read).
    CompressOptions threaded = opt;
    threaded.threads = 4;
    threaded.chunk_bytes = 64 << 10;
    CompressOptions single = threaded;
    single.threads = 1;
    CHECK(compress_bytes(file, threaded) == compress_bytes(file, single));
}

TEST_CASE("lossy: zeroed low bits become saved bytes in every preset", "[lossy]") {
    struct Case {
        ElemType t;
        const char* spec;
        double at_most;  // lossy size / lossless size
    };
    for (const Case& c : {Case{ElemType::F32, "f16-exact", 0.75}, Case{ElemType::F16, "drop:K=4,V=6", 0.85},
                          Case{ElemType::BF16, "drop:K=3,V=3", 0.9}}) {
        const Bytes file = synth_state(c.t, false, 600);
        for (Preset p : {Preset::Fast, Preset::Default, Preset::Max}) {
            CompressOptions opt;
            opt.codec.preset = p;
            const size_t exact = compress_bytes(file, opt).size();
            opt.lossy = parse_lossy_spec(c.spec);
            const size_t lossy = compress_bytes(file, opt).size();
            INFO(c.spec << " preset " << preset_name(p) << ": " << exact << " -> " << lossy);
            CHECK(double(lossy) <= c.at_most * double(exact));
        }
    }
}

TEST_CASE("lossy: bitpack keeps only the varying bits and refuses inconsistent payloads", "[lossy][codec]") {
    const Codec* c = find_codec("bitpack");
    REQUIRE(c);
    Bytes in = random_bytes(1001, 9);
    for (auto& b : in) b = static_cast<uint8_t>((b & 0xe0) | 0x05);  // 3 varying bits
    Bytes enc;
    c->encode(in, {}, enc);
    CHECK(enc.size() == 2 + (1001 * 3 + 7) / 8);
    Bytes dec;
    c->decode(enc, {}, in.size(), dec);
    CHECK(dec == in);
    Bytes rnd = random_bytes(500, 2), enc2;
    c->encode(rnd, {}, enc2);
    CHECK(enc2.size() == rnd.size() + 2);  // nothing to gain: planes then stores the plane
    CHECK_FALSE(c->may_shrink(rnd, {}));     // ... and knows it without encoding
    CHECK(c->may_shrink(in, {}));
    in[1000] = static_cast<uint8_t>(in[1000] ^ 0x1f);  // the last byte makes every bit vary
    CHECK_FALSE(c->may_shrink(in, {}));
    in[1000] = static_cast<uint8_t>(in[1000] ^ 0x1f);
    Bytes out;
    CHECK_THROWS_AS(c->decode(enc, {}, in.size() + 8, out), Error);  // size does not match
    Bytes overlap = enc;
    overlap[1] |= 0x20;  // a fixed bit among the varying ones
    CHECK_THROWS_AS(c->decode(overlap, {}, in.size(), out), Error);
    CHECK_THROWS_AS(c->decode(Bytes{0x01}, {}, 1, out), Error);
    CHECK(c->max_decoded_size({}, enc.size()) >= in.size());
}
