// The entropy stages: rans (htscodecs, guarded against its 1.3.0 defects) and the planes
// graph stage (byte planes, each through its own sub-pipeline), and the grammar that names them.
#include <htscodecs/rANS_static4x16.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "codecs/rans_codec.hpp"
#include "codecs/rans_order0_halves.hpp"
#include "codecs/pipeline.hpp"
#include "plan/policy.hpp"
#include "rans_order1_util.hpp"
#include "test_util.hpp"

using namespace stz;
using stztest::channel_floats16;
using stztest::float_specials;
using stztest::kKernelSlack;
using stztest::PaddedInput;
using stztest::random_bytes;

namespace {

std::vector<std::pair<std::string, Bytes>> hostile_inputs() {
    std::vector<std::pair<std::string, Bytes>> v;
    v.push_back({"empty", {}});
    v.push_back({"one byte", {0x42}});
    v.push_back({"three bytes", {1, 2, 3}});
    v.push_back({"constant 4096", Bytes(4096, 0x3c)});
    v.push_back({"constant odd", Bytes(100003, 0)});
    v.push_back({"random 63", random_bytes(63, 1)});
    v.push_back({"random 65", random_bytes(65, 2)});
    v.push_back({"random 65537", random_bytes(65537, 3)});
    v.push_back({"float specials", float_specials(3000)});
    v.push_back({"f16 channels", channel_floats16(700, 32, 4)});
    Bytes tail = channel_floats16(300, 32, 5);
    tail.insert(tail.end(), {1, 2, 3, 4, 5});  // a partial row (as dedup's reference list)
    v.push_back({"f16 channels + partial row", tail});
    Bytes skew(20000);
    std::mt19937_64 g(6);
    for (auto& x : skew) x = static_cast<uint8_t>(std::min<int>(255, static_cast<int>(std::abs(std::log(1e-9 + (g() % 100000) / 1e5)) * 3)));
    v.push_back({"skewed 20000", skew});
    return v;
}

std::vector<DataShape> entropy_shapes() {
    std::vector<DataShape> v;
    v.push_back({});
    DataShape f16;
    f16.kind = ElemKind::F16, f16.elem_bytes = 2, f16.row_bytes = 64;
    v.push_back(f16);
    DataShape bf = f16;
    bf.kind = ElemKind::BF16;
    v.push_back(bf);
    DataShape tv = f16;  // transposed V: rows are channels
    tv.transposed = true, tv.row_bytes = 2 * 37;
    v.push_back(tv);
    DataShape f32;
    f32.kind = ElemKind::F32, f32.elem_bytes = 4, f32.row_bytes = 128;
    v.push_back(f32);
    DataShape q8;
    q8.kind = ElemKind::Block, q8.elem_bytes = 34, q8.block_head = 2, q8.row_bytes = 34 * 4;
    v.push_back(q8);
    DataShape q5;  // q5_0: f16 scale + 4 high-bit bytes + 16 quant bytes
    q5.kind = ElemKind::Block, q5.elem_bytes = 22, q5.block_head = 6, q5.row_bytes = 22;
    v.push_back(q5);
    return v;
}

const std::vector<std::string> kEntropyPipelines = {
    "rans:0", "rans:1", "rans", "shuffle+rans:1", "planes(all=store)", "planes(all=zstd:1)",
    "planes(top=rans:1,rest=store)", "planes:rm(top=rans:0,rest=zstd:3)", "planes(top=rans:1,rest=shuffle+zstd:3)",
    "dedup+planes(all=zstd:3)", "trim+dedup+planes(top=rans:1,rest=zstd:3)", "planes(top=chanctx,rest=rle)",
    "planes(p0=rans:1,rest=store)|zstd:3"};

Bytes roundtrip(const Pipeline& p, const Bytes& data) {
    EncodedChunk e = encode_pipeline(p, data);
    return decode_pipeline(p, e.payload, e.stage_input_sizes);
}

}  // namespace

TEST_CASE("rans and planes round-trip hostile inputs on every shape", "[entropy]") {
    for (const auto& shape : entropy_shapes())
        for (const auto& spec : kEntropyPipelines)
            for (const Pipeline& p : parse_alternatives(spec, shape))
                for (const auto& [name, data] : hostile_inputs()) {
                    INFO("pipeline " << p.describe() << ", input " << name << ", elem " << shape.elem_bytes << ", row "
                                     << shape.row_bytes);
                    REQUIRE(roundtrip(p, data) == data);
                }
}

TEST_CASE("planes orders bytes channel-major or in storage order", "[entropy]") {
    DataShape s;
    s.kind = ElemKind::F16, s.elem_bytes = 2, s.row_bytes = 4;  // 2 channels per row
    Bytes in;
    for (uint8_t r = 0; r < 3; ++r)
        for (uint8_t c = 0; c < 2; ++c) in.push_back(10 * r + c), in.push_back(100 + 10 * r + c);
    in.push_back(77);  // a partial element: the stored tail
    const Bytes cm = {0, 0, 10, 20, 1, 11, 21, 0, 100, 110, 120, 101, 111, 121, 77};
    const Bytes rm = {0, 0, 1, 10, 11, 20, 21, 0, 100, 101, 110, 111, 120, 121, 77};
    CHECK(encode_pipeline(parse_pipeline("planes(all=store)", s), in).payload == cm);
    CHECK(encode_pipeline(parse_pipeline("planes:rm(all=store)", s), in).payload == rm);
    // Quant blocks: scale low byte, scale high byte, then the quants (channel-major: byte j of
    // block column k across rows).
    DataShape q;
    q.kind = ElemKind::Block, q.elem_bytes = 4, q.block_head = 2, q.row_bytes = 4;
    Bytes blocks = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(encode_pipeline(parse_pipeline("planes(all=store)", q), blocks).payload == Bytes{0, 1, 5, 0, 2, 6, 0, 3, 7, 4, 8});
    CHECK(encode_pipeline(parse_pipeline("planes:rm(all=store)", q), blocks).payload == Bytes{0, 1, 5, 0, 2, 6, 0, 3, 4, 7, 8});
}

namespace {

// The planes of `in` byte by byte, as planes(all=store) lays them out channel-major: per
// field (each header byte, then a quant block's payload), per column, per byte of the field,
// the rows in order; then the partial row's bytes. Stored planes are a mode byte 0 and the
// bytes, constant ones (2 bytes or more, all equal) mode 2 and the byte.
Bytes planes_by_hand(const Bytes& in, uint64_t width, uint64_t head, uint64_t cols) {
    const uint64_t elems = in.size() / width;
    const uint64_t c_used = cols > 1 && elems / cols > 0 ? cols : 1, rows = elems / c_used;
    std::vector<std::pair<uint64_t, uint64_t>> fields;  // start, width
    if (head == 0) for (uint64_t b = 0; b < width; ++b) fields.push_back({b, 1});
    else {
        for (uint64_t b = 0; b < head; ++b) fields.push_back({b, 1});
        if (width > head) fields.push_back({head, width - head});
    }
    Bytes out;
    for (auto [start, w] : fields) {
        Bytes plane;
        for (uint64_t c = 0; c < c_used; ++c)
            for (uint64_t k = 0; k < w; ++k)
                for (uint64_t r = 0; r < rows; ++r) plane.push_back(in[(r * c_used + c) * width + start + k]);
        const bool constant = plane.size() >= 2 && std::all_of(plane.begin(), plane.end(), [&](uint8_t b) { return b == plane[0]; });
        if (constant) out.insert(out.end(), {2, plane[0]});
        else out.push_back(0), out.insert(out.end(), plane.begin(), plane.end());
    }
    out.insert(out.end(), in.begin() + rows * c_used * width, in.end());
    return out;
}

}  // namespace

TEST_CASE("planes' tiled byte transposition matches the byte-by-byte layout on every geometry", "[entropy]") {
    struct Kind {
        ElemKind kind;
        uint32_t width, head;
    };
    // Row and column counts around the 16-byte tiles and 64-byte blocks of the transposition.
    const std::vector<Kind> kinds = {{ElemKind::F16, 2, 0}, {ElemKind::F32, 4, 0}, {ElemKind::Block, 34, 2},
                                     {ElemKind::Block, 22, 6}, {ElemKind::Block, 18, 2}};
    for (const Kind& k : kinds)
        for (uint64_t cols : {1, 3, 8, 16, 33, 40})
            for (uint64_t rows : {1, 2, 15, 16, 17, 47}) {
                DataShape s;
                s.kind = k.kind, s.elem_bytes = k.width, s.block_head = k.head, s.row_bytes = cols * k.width;
                Bytes in = random_bytes(rows * cols * k.width + (rows % 3), rows * 100 + cols);
                INFO("width " << k.width << ", head " << k.head << ", cols " << cols << ", rows " << rows);
                const Pipeline p = parse_pipeline("planes(all=store)", s);
                EncodedChunk e = encode_pipeline(p, in);
                REQUIRE(e.payload == planes_by_hand(in, k.width, k.head, cols));
                REQUIRE(decode_pipeline(p, e.payload, e.stage_input_sizes) == in);
            }
}

TEST_CASE("planes codes the top byte, stores near-random planes and constant planes cost nothing", "[entropy]") {
    DataShape s;
    s.kind = ElemKind::F16, s.elem_bytes = 2, s.row_bytes = 64;
    Bytes data = channel_floats16(4000, 32, 7);
    EncodedChunk e = encode_pipeline(parse_pipeline("planes(top=rans:1,rest=store)", s), data);
    const size_t half = data.size() / 2;
    CHECK(e.payload.size() > half);            // the random low bytes are stored
    CHECK(e.payload.size() < half + half * 6 / 10);  // the top byte (~4.4 bits of entropy: sign, exponent, 2 mantissa bits) is coded
    // rans alone stores near-random input (mode byte + the bytes) instead of coding it.
    Bytes noise = random_bytes(100000, 8);
    CHECK(encode_pipeline(parse_pipeline("rans:1", {}), noise).payload.size() == noise.size() + 1);
    // f32 values whose two low bytes are zero (bf16 widened): those planes cost 2 bytes each.
    DataShape f32;
    f32.kind = ElemKind::F32, f32.elem_bytes = 4, f32.row_bytes = 128;
    Bytes wide;
    for (size_t i = 0; i < data.size(); i += 2) append_le<uint32_t>(wide, uint32_t{load_le<uint16_t>(&data[i])} << 16);
    EncodedChunk w = encode_pipeline(parse_pipeline("planes(top=rans:1,rest=store)", f32), wide);
    CHECK(w.payload.size() < e.payload.size() + 8);
}

TEST_CASE("rans: streams from every CPU path decode on every allowed one, never by the SSE4 decoder", "[entropy]") {
    // htscodecs 1.3.0's SSE4 order-1 X32 decoder mis-decodes this valid stream (upstream fix 1.5.2).
    Bytes repro(0xff0, 0);
    for (char ch : std::string("AAABAA")) repro.push_back(static_cast<uint8_t>(ch));
    repro.push_back(0);
    rans_init_cpu_once();  // statezip's own mask is in place; this test then overrides it per machine
    const int allowed = rans_allowed_cpu_mask();
    REQUIRE((allowed & (RANS_CPU_DEC_SSE4 | RANS_CPU_ENC_SSE4)) == 0);
    __builtin_cpu_init();
    struct Path { const char* name; int bits; bool present; };
    const Path paths[] = {{"avx512", RANS_CPU_ENC_AVX512 | RANS_CPU_DEC_AVX512, bool(__builtin_cpu_supports("avx512f"))},
                          {"avx2", RANS_CPU_ENC_AVX2 | RANS_CPU_DEC_AVX2, bool(__builtin_cpu_supports("avx2"))},
                          {"sse4", RANS_CPU_ENC_SSE4 | RANS_CPU_DEC_SSE4, bool(__builtin_cpu_supports("sse4.1"))},
                          {"scalar", 0, true}};
    std::vector<Bytes> inputs = {repro, channel_floats16(3000, 32, 9), hostile_inputs().back().second};
    const Codec* rans = find_codec("rans");
    REQUIRE(rans != nullptr);
    int sse4_wrong = 0;
    for (const Bytes& in : inputs)
        for (int order : {RANS_ORDER_X32 | 0, RANS_ORDER_X32 | 1})
            for (const Path& enc : paths) {
                if (!enc.present) continue;
                rans_set_cpu(enc.bits & 0xff);
                Bytes stream(rans_compress_bound_4x16(static_cast<unsigned>(in.size()), order) + 64);
                unsigned len = static_cast<unsigned>(stream.size());
                PaddedInput src(in, kKernelSlack);
                REQUIRE(rans_compress_to_4x16(src.data(), static_cast<unsigned>(in.size()), stream.data(), &len,
                                              order) != nullptr);
                stream.resize(len);
                Bytes framed{1};  // the codec's own format: mode byte 1, then the htscodecs stream
                append_bytes(framed, stream);
                for (const Path& machine : paths) {
                    if (!machine.present) continue;
                    INFO("order " << order << ", encoded on " << enc.name << ", decoding machine " << machine.name);
                    // A machine whose best kernel is `machine` runs statezip's mask limited to what it has.
                    rans_select_cpu(allowed & (machine.bits | RANS_CPU_ENC_SSE4 | RANS_CPU_DEC_SSE4));
                    Bytes out;
                    rans->decode(framed, Bytes{static_cast<uint8_t>(order)}, in.size(), out);
                    REQUIRE(out == in);
                    // The unguarded library on that machine, for comparison.
                    rans_set_cpu(machine.bits >> 8 << 8);
                    Bytes raw(in.size());
                    unsigned got = static_cast<unsigned>(raw.size());
                    bool ok = rans_uncompress_to_4x16(stream.data(), len, raw.data(), &got) && got == in.size() && raw == in;
                    if (!ok && std::string(machine.name) == "sse4") ++sse4_wrong;
                    else CHECK(ok);
                }
            }
    rans_select_cpu(allowed);
    if (paths[2].present)
        WARN("htscodecs SSE4 decoder mis-decoded " << sse4_wrong << " stream(s) here (1.3.0 defect; statezip never uses it)");
}

TEST_CASE("rans: the kernels called directly write and read htscodecs' own streams", "[entropy]") {
    // rans_encode_stream / rans_decode_stream skip the wrapper's per-call CPU detection; the
    // bytes must stay the wrapper's, on every allowed CPU path and around the X32 threshold,
    // except where an order-1 stream with grouped contexts is smaller, or an order-0 plane is
    // large enough for two halves (statezip's own forms, flagged: then they must decode, and
    // grouped order 1 be smaller than the wrapper's).
    rans_init_cpu_once();
    const int allowed = rans_allowed_cpu_mask();
    const int masks[] = {allowed, allowed & ~(RANS_CPU_ENC_AVX512 | RANS_CPU_DEC_AVX512), 0};
    std::vector<Bytes> inputs;
    for (size_t n : {64, 999, 1000, 1001, 1002, 4096, 70001}) inputs.push_back(channel_floats16(n / 2 + 1, 32, 3));
    for (Bytes& in : inputs) in.resize(in.size() & ~size_t{1});
    inputs.push_back(hostile_inputs().back().second);
    constexpr size_t pad = kKernelSlack;  // (the streams' room: the kernels read and write a little past)
    int grouped = 0;
    for (int mask : masks)
        for (const Bytes& in : inputs)
            for (int flags : {RANS_ORDER_X32 | 0, RANS_ORDER_X32 | 1}) {
                INFO("mask " << mask << ", " << in.size() << " bytes, flags " << flags);
                rans_select_cpu(mask);
                const auto n = static_cast<unsigned>(in.size());
                PaddedInput src(in, kKernelSlack);
                const unsigned bound = rans_compress_bound_4x16(n, flags);
                Bytes lib(bound + pad), direct(bound + pad);
                unsigned lib_len = bound, direct_len = bound;
                REQUIRE(rans_compress_to_4x16(src.data(), n, lib.data(), &lib_len, flags) != nullptr);
                const bool coded = rans_encode_stream(src.data(), n, direct.data(), &direct_len, flags);
                if (!coded) {  // only where the wrapper stores the bytes raw
                    CHECK((lib[0] & RANS_ORDER_CAT) != 0);
                    continue;
                }
                lib.resize(lib_len + pad), direct.resize(direct_len + pad);
                if (direct[0] & kRansOrderGrouped) {
                    // Order 1 grouped where smaller; order 0 in two halves from their size on (the
                    // second half's table costs a little: bounded here by a whole table's size).
                    const bool halves = direct[0] == (RANS_ORDER_X32 | kRansOrderGrouped);
                    CHECK((halves ? n >= order0_halves::kMinBytes : direct[0] == (RANS_ORDER_X32 | 1 | kRansOrderGrouped)));
                    CHECK(direct_len < lib_len + (halves ? 1000 : 0));
                    Bytes back(in.size() + pad);
                    REQUIRE(rans_decode_stream(direct.data(), direct_len, back.data(), n));
                    CHECK(std::equal(in.begin(), in.end(), back.begin()));
                    CHECK_FALSE(rans_decode_stream(direct.data(), direct_len, back.data(), n - 1));
                    CHECK_FALSE(rans_decode_stream(direct.data(), 2, back.data(), n));
                    ++grouped;
                    continue;
                }
                REQUIRE(direct_len == lib_len);
                CHECK(std::equal(lib.begin(), lib.begin() + lib_len, direct.begin()));
                Bytes back(in.size() + pad);
                REQUIRE(rans_decode_stream(lib.data(), lib_len, back.data(), n));
                CHECK(std::equal(in.begin(), in.end(), back.begin()));
                // A stream claiming another size, or cut short, is refused, never decoded past its end.
                CHECK_FALSE(rans_decode_stream(lib.data(), lib_len, back.data(), n - 1));
                CHECK_FALSE(rans_decode_stream(lib.data(), 2, back.data(), n));
            }
    rans_select_cpu(allowed);
    // The f16 planes' exponents group (their two mantissa bits say little of the next value),
    // on every mask alike.
    CHECK(grouped > 0);
    CHECK(grouped % std::size(masks) == 0);
}

TEST_CASE("rans: every encoder kernel writes the same stream", "[entropy]") {
    // The kernel that encodes is picked for speed per CPU (rans_kernels.cpp: AVX2's order-0
    // encoder on AMD), so the bytes of a .stz must not depend on which one ran.
    __builtin_cpu_init();
    std::vector<int> masks = {0};
    if (__builtin_cpu_supports("avx2")) masks.push_back(RANS_CPU_ENC_AVX2);
    if (__builtin_cpu_supports("avx512f")) masks.push_back(RANS_CPU_ENC_AVX512);
    std::mt19937 rng(11);
    std::normal_distribution<double> quant(0, 30);
    Bytes quants(300000);
    for (auto& q : quants) q = static_cast<uint8_t>(static_cast<int>(std::clamp(quant(rng), -127.0, 127.0)));
    for (const Bytes& in : {quants, channel_floats16(40000, 32, 6)})
        for (int flags : {RANS_ORDER_X32 | 0, RANS_ORDER_X32 | 1}) {
            std::vector<Bytes> streams;
            constexpr size_t pad = kKernelSlack;  // (the streams' room: the kernels write a little past)
            PaddedInput src(in, kKernelSlack);
            for (int mask : masks) {
                rans_set_cpu(mask);
                const unsigned bound = rans_compress_bound_4x16(static_cast<unsigned>(in.size()), flags);
                Bytes stream(bound + pad);
                unsigned len = bound;
                REQUIRE(rans_compress_to_4x16(src.data(), static_cast<unsigned>(in.size()), stream.data(), &len,
                                              flags) != nullptr);
                stream.resize(len);
                streams.push_back(stream);
            }
            INFO(in.size() << " bytes, flags " << flags << ", " << masks.size() << " encoders");
            for (const Bytes& s : streams) CHECK(s == streams.front());
        }
    rans_select_cpu(rans_allowed_cpu_mask());
}

TEST_CASE("rans and planes reject crafted parameters and payloads", "[entropy]") {
    const Codec* rans = find_codec("rans");
    const Codec* planes = find_codec("planes");
    REQUIRE(rans->id() == 12);
    REQUIRE(planes->id() == 13);
    Bytes out;
    for (Bytes bad : {Bytes{}, Bytes{0}, Bytes{1}, Bytes{6}, Bytes{5, 5}})
        CHECK_THROWS_AS(rans->decode(Bytes{0, 1, 2}, bad, 2, out), Error);
    const Bytes r1{RANS_ORDER_X32 | 1};
    CHECK_THROWS_AS(rans->decode(Bytes{}, r1, 0, out), Error);
    CHECK_THROWS_AS(rans->decode(Bytes{2, 0}, r1, 1, out), Error);                           // unknown mode
    CHECK_THROWS_AS(rans->decode(Bytes{1, 0x08, 1, 1}, r1, 100, out), Error);                // STRIPE flag refused
    CHECK_THROWS_AS(rans->decode(Bytes{1, 0x05, 0x80, 0x80, 0x80}, r1, 100, out), Error);    // size mismatch
    CHECK_THROWS_AS(rans->decode(Bytes{0, 1, 2}, r1, 3, out), Error);                        // stored size mismatch

    DataShape f16;
    f16.kind = ElemKind::F16, f16.elem_bytes = 2, f16.row_bytes = 64;
    const Bytes good = parse_pipeline("planes(top=rans:1,rest=zstd:3)", f16).stages[0].params;
    Bytes data = channel_floats16(200, 32, 10);
    EncodedChunk e = encode_pipeline(parse_pipeline("planes(top=rans:1,rest=zstd:3)", f16), data);
    auto with = [&](size_t at, uint8_t v) { Bytes p = good; p.at(at) = v; return p; };
    std::vector<Bytes> bad_params = {
        {}, with(0, 0x80),                            // unknown flag
        with(1, 0), with(1, 17),                      // width 0, scalar width over 16
        with(3, 1),                                   // a header on scalar planes
        with(4, 0),                                   // zero columns
        with(5, 0), with(5, 3),                       // recipe count 0, more recipes than planes
        with(6, 0), with(6, 5),                       // sub-pipeline of 0 or 5 stages
        with(7, 99), with(7, 13),                     // unknown codec id; planes inside planes
        with(good.size() - 1, 7),                     // plane's recipe index out of range
        Bytes(good.begin(), good.end() - 1)};         // truncated
    Bytes trailing = good;
    trailing.push_back(0);
    bad_params.push_back(trailing);
    for (const Bytes& p : bad_params) {
        INFO("params " << p.size() << " bytes");
        CHECK_THROWS_AS(planes->decode(e.payload, p, data.size(), out), Error);
    }
    // Payloads: truncated, a plane mode that does not exist, garbage.
    for (size_t cut : {size_t(0), size_t(1), e.payload.size() / 2, e.payload.size() - 1}) {
        Bytes t(e.payload.begin(), e.payload.begin() + cut);
        CHECK_THROWS_AS(planes->decode(t, good, data.size(), out), Error);
    }
    Bytes wrong_mode = e.payload;
    wrong_mode[0] = 9;
    CHECK_THROWS_AS(planes->decode(wrong_mode, good, data.size(), out), Error);
    for (uint64_t seed = 0; seed < 50; ++seed) {
        Bytes g = random_bytes(e.payload.size(), seed);
        g[0] = seed % 3;
        try {
            Bytes o;
            planes->decode(g, good, data.size(), o);
            CHECK(o.size() == data.size());
        } catch (const Error&) {
        }
    }
}

TEST_CASE("the pipeline grammar nests planes' sub-pipelines and refuses bad ones", "[entropy]") {
    DataShape f16;
    f16.kind = ElemKind::F16, f16.elem_bytes = 2, f16.row_bytes = 64;
    auto alts = parse_alternatives("dedup+planes(top=rans:1,rest=shuffle+zstd:3)|planes:rm(all=zstd:1)|zstd:3", f16);
    REQUIRE(alts.size() == 3);
    CHECK(alts[0].stages.size() == 2);
    CHECK(alts[0].describe() == "dedup+planes(p0=shuffle:1+zstd:3,p1=rans:1)");
    CHECK(alts[1].describe() == "planes:rm(all=zstd:1)");
    // describe() is a spec that parses back to the same parameters.
    for (const auto& p : alts)
        CHECK(parse_pipeline(p.describe(), f16).stages.back().params == p.stages.back().params);
    for (const char* bad : {"planes", "planes()", "planes(all=zstd:3", "planes(all=zstd:3))", "planes(all=nosuch)",
                            "planes(top=rans:1)", "planes(p=store,rest=store)", "planes(p12345=store,rest=store)", "planes(top=rans:1,top=store,rest=store)",
                            "planes(all=planes(all=store))", "planes(qq=store,rest=store)", "planes(q=store)", "planes(all=zstd:3)x",
                            "planes:xx(all=store)", "planes(all=store+store+store+store+store)", "rans:2", "rans:1:1",
                            "planes(bad)", "zstd:3(all=store)"})
        CHECK_THROWS_AS(parse_alternatives(bad, f16), Error);
    CodecChoice c;
    parse_codec_option("kv=planes(top=rans:1,rest=store),meta=zstd:3", c);
    CHECK(c.groups["kv"] == "planes(top=rans:1,rest=store)");
    CHECK(c.groups["meta"] == "zstd:3");
    CodecChoice all;
    parse_codec_option("planes(top=rans:1,rest=store)|zstd:3", all);
    CHECK(all.all == "planes(top=rans:1,rest=store)|zstd:3");
}

TEST_CASE("every preset's pipeline parses for every section kind and element type", "[entropy]") {
    for (Preset preset : {Preset::Fast, Preset::Default, Preset::Max})
        for (int level : {0, 1, 9})
            for (uint8_t kind = 0; kind <= 11; ++kind)
                for (uint8_t type = 0; type <= 13; ++type)
                    for (bool transposed : {false, true}) {
                        Section s;
                        s.kind = *section_kind_from_u8(kind);
                        s.type = *elem_type_from_u8(type);
                        const auto& t = elem_type_info(s.type);
                        s.rows = 8, s.row_elems = 4 * t.block_elems, s.transposed = transposed;
                        s.size = s.rows * 4 * t.block_bytes;
                        CodecChoice c;
                        c.preset = preset, c.level = level;
                        std::string spec = choose_pipeline(s, c);
                        INFO("preset " << preset_name(preset) << " level " << level << " kind " << int(kind) << " type "
                                       << t.name << ": " << spec);
                        Bytes data = random_bytes(s.size, kind * 100 + type);
                        for (const Pipeline& p : parse_alternatives(spec, s.shape())) REQUIRE(roundtrip(p, data) == data);
                    }
}
