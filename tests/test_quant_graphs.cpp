// Quantised K/V graphs (qctx: block fields, a model per channel) and repeated KV heads
// (headdup, found by the plan's sample check): round trips per block type and preset,
// hostile parameters and payloads, and a synthetic 2023 file of a GQA model written with one
// KV head per query head.
#include <catch2/catch.hpp>

#include "engine/engine.hpp"
#include "plan/head_repeats.hpp"
#include "codecs/pipeline.hpp"
#include "engine/presets.hpp"
#include "test_blocks.hpp"
#include "test_synth.hpp"

using namespace stz;
using stztest::parse;
using stztest::random_bytes;
using stztest::synth;
using stztest::blocks_shape;
using stztest::channel_blocks;

namespace {

Bytes roundtrip(const Pipeline& p, const Bytes& data) {
    EncodedChunk e = encode_pipeline(p, data);
    return decode_pipeline(p, e.payload, e.stage_input_sizes);
}

const ElemType kBlockTypes[] = {ElemType::Q8_0, ElemType::Q4_0, ElemType::Q4_1,
                                ElemType::Q5_0, ElemType::Q5_1, ElemType::IQ4_NL};

}  // namespace

TEST_CASE("qctx round-trips every block layout with rows and records and partial blocks", "[quant]") {
    for (ElemType t : kBlockTypes) {
        INFO(elem_type_info(t).name);
        const uint64_t W = elem_type_info(t).block_bytes;
        for (uint64_t cols : {1, 4}) {
            const Pipeline p = parse_pipeline("qctx", blocks_shape(t, cols));
            for (size_t rows : {0, 1, 3, 200}) {
                const Bytes trained = channel_blocks(t, rows, cols, rows + cols);
                CHECK(roundtrip(p, trained) == trained);
                const Bytes noise = random_bytes(rows * cols * W, 7 + rows);
                CHECK(roundtrip(p, noise) == noise);
            }
            Bytes partial = channel_blocks(t, 5, cols, 3);
            partial.resize(partial.size() - 3);
            CHECK(roundtrip(p, partial) == partial);
        }
        // A model per channel pays on channel-dependent quants: smaller than one shared model.
        const Bytes trained = channel_blocks(t, 400, 2, 11);
        const Pipeline p = parse_pipeline("qctx", blocks_shape(t, 2));
        const EncodedChunk e = encode_pipeline(p, trained);
        CHECK(e.payload[0] == 1);
        CHECK(e.payload.size() < trained.size() * 3 / 4);
        // Records: 12-byte heads before each body of 3 rows.
        DataShape rec = blocks_shape(t, 1);
        rec.record_head = 12;
        rec.record_bytes = 12 + 3 * W;
        const Pipeline pr = parse_pipeline("qctx", rec);
        Bytes records;
        for (int r = 0; r < 6; ++r) {
            const Bytes head = r % 2 ? Bytes(12, 7) : random_bytes(12, r);
            append_bytes(records, head);
            append_bytes(records, channel_blocks(t, 3, 1, 20 + r));
        }
        CHECK(roundtrip(pr, records) == records);
        Bytes noisy;  // records whose quants do not depend on the channel: rANS planes, at order 0
                      // in storage order (mode 4; q8_0's order decided by rans:1, mode 2)
        DataShape big = rec;
        big.record_bytes = 12 + 40 * W;
        const Pipeline pb = parse_pipeline("qctx", big);
        for (int r = 0; r < 6; ++r) append_bytes(noisy, random_bytes(12 + 40 * W, 40 + r));
        CHECK(encode_pipeline(pb, noisy).payload[0] == (t == ElemType::Q8_0 ? 2 : 4));
        CHECK(roundtrip(pb, noisy) == noisy);
        Bytes out;
        CHECK_THROWS_AS(pr.stages[0].codec->encode(ByteSpan(records).first(records.size() - 1), pr.stages[0].params, out), Error);
    }
    // Not blocks (a spec for every section): copied unchanged.
    DataShape f16;
    f16.kind = ElemKind::F16;
    f16.elem_bytes = 2;
    const Bytes floats = random_bytes(1000, 5);
    CHECK(roundtrip(parse_pipeline("qctx", f16), floats) == floats);
    CHECK(parse_pipeline("qctx", blocks_shape(ElemType::Q6_0, 1)).stages[0].params[0] == 5);
}

TEST_CASE("qctx refuses hostile parameters and payloads with an error", "[quant][hostile]") {
    const Codec* q = find_codec("qctx");
    REQUIRE(q);
    const Bytes good = parse_pipeline("qctx", blocks_shape(ElemType::Q5_1, 2)).stages[0].params;
    REQUIRE(good.size() == 4);
    auto with = [&](size_t at, uint8_t v) {
        Bytes p = good;
        p[at] = v;
        return p;
    };
    Bytes rec = good;  // records whose body (100 - 12) is not whole 24-byte blocks
    append_le<uint64_t>(rec, 100);
    rec.push_back(12);
    Bytes rec_head = good;  // a head larger than the record
    append_le<uint64_t>(rec_head, 10);
    rec_head.push_back(12);
    for (const Bytes& bad : {Bytes{}, Bytes(3, 0), Bytes(5, 0), with(0, 6), with(0, 255), with(1, 0), with(1, 129),
                             with(3, 2), with(3, 8), rec, rec_head}) {
        CHECK_THROWS_AS(q->check_params(bad), Error);
        Bytes out;
        CHECK_THROWS_AS(q->decode(Bytes{1, 2, 3}, bad, 48, out), Error);
    }
    CHECK_THROWS_AS(parse_pipeline("qctx:9", blocks_shape(ElemType::Q8_0, 1)), Error);
    CHECK_THROWS_AS(parse_pipeline("qctx:4:4", blocks_shape(ElemType::Q8_0, 1)), Error);
    // Payloads: a bad mode, truncation, garbage. Errors only; never more output than declared.
    const Bytes data = channel_blocks(ElemType::Q5_1, 50, 2, 9);
    Bytes payload;
    q->encode(data, good, payload);
    Bytes out;
    CHECK_NOTHROW(q->decode(payload, good, data.size(), out));
    CHECK(out == data);
    Bytes bad_mode = payload;
    bad_mode[0] = 3;
    for (const Bytes& bad : {Bytes{}, bad_mode, Bytes(payload.begin(), payload.begin() + payload.size() / 3)}) {
        out.clear();
        CHECK_THROWS_AS(q->decode(bad, good, data.size(), out), Error);
    }
    // Mode 4 (noise: no model per channel, its bytes at order 0 in storage order): a plane length
    // past the payload, truncations.
    const Bytes noise = random_bytes(50 * 2 * 24, 3);
    Bytes noise_payload;
    q->encode(noise, good, noise_payload);
    REQUIRE(noise_payload[0] == 4);
    out.clear();
    CHECK_NOTHROW(q->decode(noise_payload, good, noise.size(), out));
    CHECK(out == noise);
    Bytes long_plane = noise_payload;
    store_le<uint32_t>(long_plane.data() + 1, static_cast<uint32_t>(long_plane.size()));
    for (const Bytes& bad : {long_plane, Bytes(noise_payload.begin(), noise_payload.begin() + 3),
                             Bytes(noise_payload.begin(), noise_payload.end() - 5), Bytes{2}, Bytes{4}}) {
        out.clear();
        CHECK_THROWS_AS(q->decode(bad, good, noise.size(), out), Error);
    }
    // Mode 0 (what degenerate data still gets: all-zero blocks, whose rANS planes would be
    // smaller than the decoder's size bound allows): a range-coder length past the payload.
    const Bytes zeros(4 << 20, 0);
    Bytes zero_payload;
    q->encode(zeros, good, zero_payload);
    REQUIRE(zero_payload[0] == 0);
    CHECK(zeros.size() <= q->max_decoded_size(good, zero_payload.size()));
    out.clear();
    CHECK_NOTHROW(q->decode(zero_payload, good, zeros.size(), out));
    CHECK(out == zeros);
    Bytes long_rc = zero_payload;
    store_le<uint32_t>(long_rc.data() + 1, static_cast<uint32_t>(long_rc.size()));
    for (const Bytes& bad : {long_rc, Bytes(zero_payload.begin(), zero_payload.begin() + 3),
                             Bytes(zero_payload.begin(), zero_payload.end() - 5)}) {
        out.clear();
        CHECK_THROWS_AS(q->decode(bad, good, zeros.size(), out), Error);
    }
    for (uint64_t seed = 0; seed < 20; ++seed) {
        out.clear();
        const Bytes junk = random_bytes(40, seed);
        try {
            q->decode(junk, good, data.size(), out);
        } catch (const Error&) {
        }
        CHECK(out.size() <= data.size());
    }
    CHECK(q->max_decoded_size(good, 10) >= 10 * 128 * 24);
}

TEST_CASE("headdup keeps one copy of each group of equal segments and copies anything else", "[quant][heads]") {
    const Codec* h = find_codec("headdup");
    REQUIRE(h);
    const Pipeline p = parse_pipeline("headdup:16:2", DataShape{});
    Bytes repeated;
    for (int i = 0; i < 40; ++i) {
        const Bytes seg = random_bytes(16, i);
        append_bytes(repeated, seg);
        append_bytes(repeated, seg);
    }
    const EncodedChunk e = encode_pipeline(p, repeated);
    CHECK(e.payload.size() == repeated.size() / 2);
    CHECK(roundtrip(p, repeated) == repeated);
    Bytes broken = repeated;
    broken[200] ^= 1;
    CHECK(encode_pipeline(p, broken).payload == broken);
    CHECK(roundtrip(p, broken) == broken);
    const Bytes odd(repeated.begin(), repeated.end() - 16);
    CHECK(roundtrip(p, odd) == odd);
    CHECK(roundtrip(p, Bytes{}) == Bytes{});
    // Rows after it shrink by the group (K rows of 8 heads of 16 bytes -> 64 bytes).
    DataShape k;
    k.kind = ElemKind::F16;
    k.elem_bytes = 2;
    k.row_bytes = 128;
    CHECK(h->output_shape(k, p.stages[0].params).row_bytes == 64);
    // Hostile parameters and sizes.
    for (const Bytes& bad : {Bytes{}, Bytes{16, 0, 0, 0}, Bytes{0, 0, 0, 0, 2}, Bytes{16, 0, 0, 0, 1},
                             Bytes{16, 0, 0, 0, 65}, Bytes{0, 0, 0, 0x10, 2}}) {
        CHECK_THROWS_AS(h->check_params(bad), Error);
        Bytes out;
        CHECK_THROWS_AS(h->decode(Bytes(32, 1), bad, 64, out), Error);
    }
    for (const std::string& spec : {"headdup", "headdup:16", "headdup:0:2", "headdup:16:1", "headdup:16:65"})
        CHECK_THROWS_AS(parse_pipeline(spec, DataShape{}), Error);
    Bytes out;
    for (size_t size : {size_t{63}, size_t{65}, size_t{96}, size_t{0}}) {
        out.clear();
        CHECK_THROWS_AS(h->decode(Bytes(32, 1), p.stages[0].params, size, out), Error);
    }
    CHECK(h->max_decoded_size(p.stages[0].params, 100) == 200);
}

TEST_CASE("every block type round-trips with every preset and the default codes quant K with qctx", "[quant]") {
    for (const char* flavour : {"session10", "seq3"})
        for (ElemType t : kBlockTypes) {
            stzsynth::Spec spec;
            spec.flavour = flavour;
            spec.k_type = spec.v_type = t;
            spec.v_trans = false;  // quantised V needs flash attention: row-major
            spec.n_embd = 64;
            spec.cells = 300;  // K layers of 10-19 KB: some gathered, some not
            const Bytes file = synth(spec);
            const ParsedFile pf = parse(file);
            for (Preset preset : {Preset::Fast, Preset::Default, Preset::Max}) {
                INFO(flavour << " " << elem_type_info(t).name << " " << preset_name(preset));
                const CompressOptions opt = preset_options(preset, 0, "");
                MemorySource src(file);
                MemorySink sink;
                const CompressResult r = compress_parsed(src, pf, sink, opt);
                CHECK(stztest::decompress_bytes(sink.out) == file);
                CHECK(sink.out.size() < file.size());
                for (size_t i = 0; i < pf.sections.size(); ++i)
                    if (pf.sections[i].kind == SectionKind::KvKey && preset != Preset::Fast)
                        CHECK(r.sections[i].pipeline.find("qctx") != std::string::npos);
            }
        }
}

TEST_CASE("the default finds repeated KV heads of a 2023 GQA file on a sample and codes one copy", "[quant][heads]") {
    // session v1 (2023): K rows of 64 f16 (8 heads of 8), V transposed (64 channel rows).
    stzsynth::Spec spec;
    spec.flavour = "session1";
    spec.n_embd = 64;
    spec.n_layer = 4;
    spec.cells = 200;
    Bytes file = synth(spec);
    const ParsedFile pf = parse(file);
    size_t k_layers = 0, v_layers = 0;
    for (const Section& s : pf.sections) {  // heads 2i + 1 := heads 2i, as the 2023 code wrote them
        if (s.kind == SectionKind::KvKey && !s.transposed) {
            REQUIRE(s.row_bytes() == 128);
            ++k_layers;
            for (uint64_t r = 0; r < s.rows; ++r)
                for (int h = 0; h < 8; h += 2)
                    std::memcpy(&file[s.offset + r * 128 + (h + 1) * 16], &file[s.offset + r * 128 + h * 16], 16);
        } else if (s.kind == SectionKind::KvValue && s.transposed) {
            REQUIRE(s.rows == 64);
            ++v_layers;
            const uint64_t R = s.row_bytes();
            for (int h = 0; h < 8; h += 2)
                std::memcpy(&file[s.offset + (h + 1) * 8 * R], &file[s.offset + h * 8 * R], 8 * R);
        }
    }
    REQUIRE(k_layers == 4);
    REQUIRE(v_layers == 4);
    MemorySource src(file);
    const std::optional<ParsedFile> found = find_head_repeats(src, pf);
    REQUIRE(found);
    for (const Section& s : found->sections)
        if (s.kind == SectionKind::KvKey) {
            CHECK(s.repeat_seg == 16);
            CHECK(s.repeat_group == 2);
        } else if (s.kind == SectionKind::KvValue) {
            CHECK(s.repeat_seg == 8 * s.row_bytes());
            CHECK(s.repeat_group == 2);
        }
    // The original file (no repeats) is left alone, and found out cheaply: K reads its 8
    // sampled rows, transposed V a few channel rows per candidate segment, not every one of
    // its 64 (a read per row was most of the planning time on a large file).
    {
        const Bytes plain = synth(spec);
        struct CountingSource final : InputSource {
            MemorySource inner;
            size_t reads = 0;
            explicit CountingSource(const Bytes& b) : inner(b) {}
            uint64_t size() const override { return inner.size(); }
            void read_at(uint64_t off, uint8_t* dst, size_t n) override { ++reads, inner.read_at(off, dst, n); }
        } psrc(plain);
        CHECK_FALSE(find_head_repeats(psrc, pf));
        CHECK(psrc.reads <= 4 * 8 + 4 * 64 / 2);
    }
    const Bytes packed = stztest::compress_bytes(file);
    CHECK(stztest::decompress_bytes(packed) == file);
    // One differing byte in a sampled row (row 0 of every K layer) hides the repeats from the
    // check: the same data then compresses far worse.
    Bytes hidden = file;
    for (const Section& s : pf.sections)
        if (s.kind == SectionKind::KvKey) hidden[s.offset + 16] ^= 0x40;
    const Bytes unfound = stztest::compress_bytes(hidden);
    CHECK(stztest::decompress_bytes(unfound) == hidden);
    uint64_t kv = 0;
    for (const Section& s : pf.sections) kv += s.kind == SectionKind::KvKey ? s.size : 0;
    INFO("with repeats found " << packed.size() << ", hidden " << unfound.size() << ", K bytes " << kv);
    CHECK(packed.size() + kv / 4 < unfound.size());
    // Every preset finds them.
    for (Preset preset : {Preset::Fast, Preset::Max}) {
        const Bytes p = stztest::compress_bytes(file, preset_options(preset, 0, ""));
        CHECK(stztest::decompress_bytes(p) == file);
        CHECK(p.size() < stztest::compress_bytes(hidden, preset_options(preset, 0, "")).size());
    }
}
