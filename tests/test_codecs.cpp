// Every codec and transform: exact round trip on adversarial inputs, and decoders that
// reject (never crash on) garbage.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "codecs/pipeline.hpp"
#include "test_util.hpp"

using namespace stz;
using stztest::random_bytes;

namespace {

std::vector<std::pair<std::string, Bytes>> adversarial_inputs() {
    std::vector<std::pair<std::string, Bytes>> v;
    v.push_back({"empty", {}});
    v.push_back({"one byte", {0x42}});
    v.push_back({"one zero", {0}});
    v.push_back({"zeros 4096", Bytes(4096, 0)});
    v.push_back({"zeros odd", Bytes(100003, 0)});
    v.push_back({"random 1", random_bytes(1, 1)});
    v.push_back({"random 7", random_bytes(7, 2)});
    v.push_back({"random 65537", random_bytes(65537, 3)});
    Bytes runs;
    for (int i = 0; i < 300; ++i) runs.insert(runs.end(), static_cast<size_t>(i * 7 % 97 + 1), static_cast<uint8_t>(i));
    v.push_back({"runs", runs});
    Bytes mixed = random_bytes(50001, 4);
    std::fill(mixed.begin() + 1000, mixed.begin() + 30000, 0);
    v.push_back({"random with zero hole", mixed});
    v.push_back({"float specials", stztest::float_specials(1000)});  // as f32 and f16 bit patterns
    Bytes ramp;
    for (uint32_t i = 0; i < 70000; ++i) append_le<uint16_t>(ramp, static_cast<uint16_t>(i * 13));
    v.push_back({"ramp", ramp});
    return v;
}

std::vector<DataShape> shapes() {
    std::vector<DataShape> v;
    v.push_back({});
    DataShape f16;
    f16.kind = ElemKind::F16, f16.elem_bytes = 2, f16.row_bytes = 64;
    v.push_back(f16);
    DataShape trim = f16;
    trim.row_bytes = 1024, trim.keep_bytes = 40;
    v.push_back(trim);
    DataShape f32;
    f32.kind = ElemKind::F32, f32.elem_bytes = 4, f32.row_bytes = 128;
    v.push_back(f32);
    DataShape q8;
    q8.kind = ElemKind::Block, q8.elem_bytes = 34, q8.block_head = 2, q8.row_bytes = 34 * 4;
    v.push_back(q8);
    DataShape tv = f16;  // transposed V: rows are channels
    tv.transposed = true, tv.row_bytes = 2 * 37;
    v.push_back(tv);
    DataShape bf = f16;
    bf.kind = ElemKind::BF16;
    v.push_back(bf);
    return v;
}

// Every registered codec's sample specs, alone and in the pipelines the presets use.
std::vector<std::string> pipelines() {
    std::vector<std::string> v;
    for (const Codec* c : all_codecs())
        for (const auto& spec : c->sample_specs()) v.push_back(spec);
    for (const char* chain : {"trim+zstd:3", "shuffle:4+zstd", "shuffle+lz4", "transpose+shuffle+zstd:3", "fields+zstd:3",
                              "fields:34:2+lzma:6", "trim+shuffle+transpose+rle", "dedup+chanctx", "trim+chanctx",
                              "trim+dedup+chanctx+zstd:1"})
        v.push_back(chain);
    return v;
}
const std::vector<std::string> kPipelines = pipelines();

}  // namespace

TEST_CASE("every codec pipeline round-trips adversarial inputs", "[codec]") {
    for (const auto& shape : shapes())
        for (const auto& spec : kPipelines) {
            Pipeline p = parse_pipeline(spec, shape);
            for (const auto& [name, data] : adversarial_inputs()) {
                INFO("pipeline " << spec << ", input " << name << ", row " << shape.row_bytes);
                EncodedChunk e = encode_pipeline(p, data);
                Bytes back = decode_pipeline(p, e.payload, e.stage_input_sizes);
                REQUIRE(back == data);
                // Into a caller's memory: the same bytes, nothing written past them.
                Bytes into(data.size() + 64, 0xee);
                decode_pipeline_into(p, e.payload, e.stage_input_sizes, into.data(), data.size());
                REQUIRE(std::equal(data.begin(), data.end(), into.begin()));
                REQUIRE(std::all_of(into.begin() + ptrdiff_t(data.size()), into.end(), [](uint8_t x) { return x == 0xee; }));
                CHECK_THROWS_AS(decode_pipeline_into(p, e.payload, e.stage_input_sizes, into.data(), data.size() + 1), Error);
                // As a chunk's own recipe (stages that changed nothing left out): still exact.
                StagePrefix none;
                EncodedChunk own = encode_pipeline(p, data, none, 0, true);
                const Pipeline recipe = chunk_recipe(p, own);
                REQUIRE(!recipe.stages.empty());
                REQUIRE(decode_pipeline(recipe, own.payload, own.stage_input_sizes) == data);
            }
        }
}

// Codec::encode_unless_unchanged is encode, or says "nothing to do" having written nothing.
TEST_CASE("every codec's encode_unless_unchanged writes what encode writes, or nothing", "[codec]") {
    for (const auto& shape : shapes())
        for (const Codec* c : all_codecs())
            for (const auto& spec : c->sample_specs()) {
                const Pipeline p = parse_pipeline(spec, shape);
                const Bytes& params = p.stages[0].params;
                for (const auto& [name, data] : adversarial_inputs()) {
                    INFO("spec " << spec << ", input " << name << ", row " << shape.row_bytes);
                    Bytes unless{7}, plain{7};  // appended to, as every encode does
                    const bool changed = c->encode_unless_unchanged(data, params, unless);
                    c->encode(data, params, plain);
                    if (changed) CHECK(unless == plain);
                    else CHECK(unless == Bytes{7});
                }
            }
}

TEST_CASE("trim drops only verified zeros", "[codec]") {
    DataShape s;
    s.kind = ElemKind::F16, s.elem_bytes = 2, s.row_bytes = 16, s.keep_bytes = 4;
    Pipeline p = parse_pipeline("trim", s);
    Bytes rows(16 * 100, 0);
    for (size_t r = 0; r < 100; ++r) rows[r * 16] = static_cast<uint8_t>(r + 1);
    EncodedChunk e = encode_pipeline(p, rows);
    CHECK(e.payload.size() == 100 * 4 + 1);  // rows trimmed to their filled prefix
    rows[5 * 16 + 10] = 7;                   // a non-zero byte where a zero was expected
    e = encode_pipeline(p, rows);
    CHECK(decode_pipeline(p, e.payload, e.stage_input_sizes) == rows);
}

TEST_CASE("dedup replaces repeated rows and chanctx models channels", "[codec]") {
    DataShape s;
    s.kind = ElemKind::F16, s.elem_bytes = 2, s.row_bytes = 64;
    Bytes rows;
    Bytes a = random_bytes(64, 1), b = random_bytes(64, 2);
    for (int r = 0; r < 100; ++r) append_bytes(rows, r % 3 ? a : b);
    Pipeline p = parse_pipeline("dedup", s);
    EncodedChunk e = encode_pipeline(p, rows);
    CHECK(e.payload.size() < 2 * 64 + 300);
    CHECK(decode_pipeline(p, e.payload, e.stage_input_sizes) == rows);
    // Noisy values whose magnitude depends on the channel: the context model must beat plain
    // byte planes + zstd (which sees the mix of all channels' exponents).
    Bytes smooth;
    Bytes noise = random_bytes(2000 * 32 * 2, 3);
    for (int r = 0; r < 2000; ++r)
        for (int c = 0; c < 32; ++c)
            append_le<uint16_t>(smooth, static_cast<uint16_t>(((c * 5 % 31) << 10) + load_le<uint16_t>(&noise[(r * 32 + c) * 2]) % 1024));
    Pipeline cm = parse_pipeline("chanctx", s), sz = parse_pipeline("shuffle+zstd:3", s);
    CHECK(encode_pipeline(cm, smooth).payload.size() < encode_pipeline(sz, smooth).payload.size());
}

TEST_CASE("rle codes long zero runs compactly", "[codec]") {
    Pipeline p = parse_pipeline("rle", {});
    Bytes z(1 << 20, 0);
    CHECK(encode_pipeline(p, z).payload.size() < 8);
}

TEST_CASE("a 64 MiB input round-trips through the heavy pipelines", "[codec][huge]") {
    Bytes big = random_bytes(64u << 20, 9);
    std::fill(big.begin() + (10u << 20), big.begin() + (30u << 20), 0);
    for (std::string spec : {"zstd:3", "lz4", "rle", "shuffle+zstd:1"}) {
        Pipeline p = parse_pipeline(spec, {});
        EncodedChunk e = encode_pipeline(p, big);
        REQUIRE(decode_pipeline(p, e.payload, e.stage_input_sizes) == big);
    }
}

TEST_CASE("decoders reject garbage and wrong sizes without crashing", "[codec]") {
    Bytes sample = random_bytes(5000, 5);
    std::fill(sample.begin(), sample.begin() + 2000, 0);
    for (const auto& spec : kPipelines) {
        Pipeline p = parse_pipeline(spec, shapes()[1]);
        EncodedChunk e = encode_pipeline(p, sample);
        // Truncations, garbage and a wrong declared size must throw or give other bytes, never crash.
        for (size_t cut : {size_t(0), size_t(1), e.payload.size() / 2, e.payload.size() > 0 ? e.payload.size() - 1 : 0}) {
            Bytes t(e.payload.begin(), e.payload.begin() + std::min(cut, e.payload.size()));
            try {
                (void)decode_pipeline(p, t, e.stage_input_sizes);
            } catch (const Error&) {
            }
        }
        for (uint64_t seed = 0; seed < 20; ++seed) {
            Bytes g = random_bytes(e.payload.size() ? e.payload.size() : 8, seed);
            try {
                (void)decode_pipeline(p, g, e.stage_input_sizes);
            } catch (const Error&) {
            }
        }
        auto sizes = e.stage_input_sizes;
        sizes[0] += 1;
        try {
            Bytes out = decode_pipeline(p, e.payload, sizes);
            CHECK(out != sample);
        } catch (const Error&) {
        }
    }
    SUCCEED("no crash");
}

TEST_CASE("bad codec names and arguments are refused", "[codec]") {
    CHECK_THROWS_AS(parse_pipeline("nosuch", {}), Error);
    CHECK_THROWS_AS(parse_pipeline("zstd:99", {}), Error);
    CHECK_THROWS_AS(parse_pipeline("lzma:x", {}), Error);
    CHECK_THROWS_AS(parse_pipeline("", {}), Error);
    CHECK_THROWS_AS(parse_pipeline("zstd+", {}), Error);
}

TEST_CASE("every registered codec declares sample specs that parse", "[codec]") {
    for (const Codec* c : all_codecs()) {
        INFO("codec " << c->name());
        REQUIRE(!c->sample_specs().empty());
        for (const auto& spec : c->sample_specs()) {
            Pipeline p = parse_pipeline(spec, shapes()[1]);
            REQUIRE(p.stages.size() == 1);
            CHECK(p.stages[0].codec == c);
            CHECK_NOTHROW(c->check_params(p.stages[0].params));
        }
    }
}

// parse_alternatives remembers its parses: asked again, for shapes that differ in one field at a
// time, it must give what a fresh parse gives (a shape field missing from what it remembers by
// would hand one shape's parameters to another).
TEST_CASE("remembered parses are the parses of their own spec and shape", "[codec]") {
    std::vector<DataShape> variants = shapes();
    DataShape records = variants[4];  // q8_0 rows, three to a record after a 12-byte head
    records.record_bytes = 12 + records.row_bytes * 3, records.record_head = 12;
    variants.push_back(records);
    // Each field changed alone, from the f16, q8_0 and record shapes.
    for (const DataShape& base : {variants[1], variants[4], records}) {
        DataShape v = base;
        v.row_bytes *= 2, v.record_bytes = v.record_bytes ? v.record_head + v.row_bytes * 3 : 0;
        variants.push_back(v);
        v = base, v.keep_bytes = base.row_bytes / 2;
        variants.push_back(v);
        v = base, v.transposed = !base.transposed;
        variants.push_back(v);
        v = base, v.block_head = base.block_head + 2;
        variants.push_back(v);
        v = base, v.elem_bytes = base.elem_bytes * 2;
        variants.push_back(v);
        v = base, v.kind = base.kind == ElemKind::F16 ? ElemKind::BF16 : ElemKind::Bytes;
        variants.push_back(v);
        v = base, v.record_head = base.record_head ? base.record_head + 4 : 0;
        variants.push_back(v);
        v = base, v.record_bytes = base.record_bytes ? base.record_head + base.row_bytes * 4 : 0;
        variants.push_back(v);
    }
    std::vector<std::string> specs = pipelines();
    specs.push_back("planes:rm(top=zstd:1,rest=rans:0)|trim+planes(all=zstd:1)");
    for (int round = 0; round < 2; ++round)
        for (const auto& spec : specs)
            for (const auto& shape : variants) {
                INFO("spec " << spec << ", round " << round);
                std::vector<Pipeline> fresh;
                try {
                    for (const auto& alt : split_top_level(spec, '|')) fresh.push_back(parse_pipeline(alt, shape));
                } catch (const Error&) {
                    CHECK_THROWS_AS(parse_alternatives(spec, shape), Error);
                    continue;
                }
                const std::vector<Pipeline> got = parse_alternatives(spec, shape);
                REQUIRE(got.size() == fresh.size());
                for (size_t a = 0; a < got.size(); ++a) {
                    REQUIRE(got[a].stages.size() == fresh[a].stages.size());
                    for (size_t i = 0; i < got[a].stages.size(); ++i) {
                        CHECK(got[a].stages[i].codec == fresh[a].stages[i].codec);
                        CHECK(got[a].stages[i].params == fresh[a].stages[i].params);
                    }
                }
            }
}

// The reader rejects a stage whose sizes break Codec::max_encoded_size / max_decoded_size, so
// these bounds must hold for everything the encoders produce, including the extreme inputs.
TEST_CASE("every codec's declared size bounds hold for its own output", "[codec]") {
    auto inputs = adversarial_inputs();
    inputs.push_back({"zeros 4 MiB", Bytes(4u << 20, 0)});
    for (const auto& shape : shapes())
        for (const Codec* c : all_codecs())
            for (const auto& spec : c->sample_specs()) {
                Pipeline p = parse_pipeline(spec, shape);
                const Bytes& params = p.stages[0].params;
                for (const auto& [name, data] : inputs) {
                    INFO("spec " << spec << ", input " << name << ", row " << shape.row_bytes);
                    EncodedChunk e = encode_pipeline(p, data);
                    CHECK(e.payload.size() <= c->max_encoded_size(data.size()));
                    CHECK(data.size() <= c->max_decoded_size(params, e.payload.size()));
                }
            }
}

TEST_CASE("codec ids are stable and unique", "[codec]") {
    std::vector<int> seen;
    for (const Codec* c : all_codecs()) {
        CHECK(std::find(seen.begin(), seen.end(), c->id()) == seen.end());
        seen.push_back(c->id());
        CHECK(find_codec(c->id()) == c);
        CHECK(find_codec(c->name()) == c);
    }
    CHECK(find_codec("zstd")->id() == 4);
    CHECK(find_codec("lzma")->id() == 5);
}

TEST_CASE("lzma codes a small block to the same bytes whatever the thread's encoder coded before", "[codec]") {
    // Small blocks share an encoder kept per thread: what it coded before (another preset,
    // another dictionary size, a large block coded apart) must not change a block's bytes.
    const Codec* lzma = find_codec("lzma");
    REQUIRE(lzma);
    const Bytes p6 = lzma->make_params({"6"}, DataShape{}), p9e = lzma->make_params({"9e"}, DataShape{});
    Bytes small = stztest::random_bytes(3000, 21);
    for (size_t i = 0; i < small.size(); ++i) small[i] %= 7;  // compressible: matches and literals
    Bytes other = stztest::random_bytes(40000, 22), large = stztest::random_bytes(200000, 23);
    for (auto& b : other) b %= 3;
    auto code = [&](const Bytes& in, const Bytes& params) {
        Bytes out;
        lzma->encode(in, params, out);
        Bytes back;
        lzma->decode(out, params, in.size(), back);
        REQUIRE(back == in);
        return out;
    };
    const Bytes first = code(small, p6);
    CHECK(first.size() < small.size() / 2);
    code(other, p9e);
    code(large, p6);
    code(other, p6);
    CHECK(code(small, p6) == first);
    CHECK(code(small, p9e).size() <= first.size() + 16);
    CHECK(code(small, p6) == first);
}

TEST_CASE("lzma's kept decoder refuses a small block cut short, padded or of another size", "[codec]") {
    // Small blocks share a decoder kept per thread: a block that fails must not change how the
    // next one decodes, and a block's exact length and size are still checked.
    const Codec* lzma = find_codec("lzma");
    REQUIRE(lzma);
    const Bytes params = lzma->make_params({"1"}, DataShape{});
    Bytes small = stztest::random_bytes(3000, 31);
    for (auto& b : small) b %= 5;
    Bytes coded;
    lzma->encode(small, params, coded);
    auto decodes = [&](const Bytes& block, size_t size) {
        Bytes back;
        lzma->decode(block, params, size, back);
        return back == small;
    };
    CHECK(decodes(coded, small.size()));
    for (size_t cut : {size_t{1}, size_t{2}, coded.size() / 2}) {
        const Bytes shorter(coded.begin(), coded.end() - static_cast<ptrdiff_t>(cut));
        CHECK_THROWS_AS(decodes(shorter, small.size()), Error);
        CHECK(decodes(coded, small.size()));
    }
    Bytes padded = coded;
    padded.push_back(0);
    CHECK_THROWS_AS(decodes(padded, small.size()), Error);
    CHECK_THROWS_AS(decodes(coded, small.size() - 1), Error);
    CHECK_THROWS_AS(decodes(coded, small.size() + 1), Error);
    CHECK(decodes(coded, small.size()));
}

TEST_CASE("lzma's literal model: parsed, validated, and not needed to decode", "[codec]") {
    const Codec* lzma = find_codec("lzma");
    REQUIRE(lzma);
    const Bytes model = lzma->make_params({"1", "lc0lp1pb1"}, DataShape{});
    CHECK(model == Bytes{1, 0, 0, 1, 1});
    CHECK(lzma->describe(model) == "lzma:1:lc0lp1pb1");
    CHECK(lzma->describe(lzma->make_params({"9e", "lc1lp3pb4"}, DataShape{})) == "lzma:9e:lc1lp3pb4");
    for (const char* bad : {"lc0lp1", "lc0lp1pb1x", "lc5lp0pb0", "lc3lp2pb0", "lc0lp0pb5", "lc-1lp1pb1", "lp1pb1lc0", ""})
        CHECK_THROWS_AS(lzma->make_params({"1", bad}, DataShape{}), Error);
    for (Bytes bad : {Bytes{1, 0, 0, 1}, Bytes{1, 0, 5, 0, 0}, Bytes{1, 0, 2, 3, 0}, Bytes{1, 0, 0, 0, 5}, Bytes{1, 0, 0, 1, 1, 0}})
        CHECK_THROWS_AS(lzma->check_params(bad), Error);
    // 2-byte words whose halves differ in kind: the parity model is smaller than the default one.
    Bytes words;
    for (int i = 0; i < 3000; ++i) words.push_back(static_cast<uint8_t>((i * 37 + i / 7) % 251)), words.push_back(static_cast<uint8_t>(i % 3 == 0));
    Bytes with_model, plain;
    lzma->encode(words, model, with_model);
    lzma->encode(words, lzma->make_params({"1"}, DataShape{}), plain);
    CHECK(with_model != plain);
    // LZMA2 chunks carry lc/lp/pb: a stream decodes under either form of the parameters.
    for (const Bytes& params : {model, lzma->make_params({"1"}, DataShape{})}) {
        Bytes back;
        lzma->decode(with_model, params, words.size(), back);
        CHECK(back == words);
    }
}

// Alternatives that begin alike share their first stages' output (encode_chunk); each must
// still get exactly the payload and stage sizes it gets on its own, whatever the pattern of
// sharing: a whole alternative as the prefix, the same prefix over three, a prefix that
// shrinks, alternatives that share nothing.
TEST_CASE("alternatives continued from a shared stage prefix code as they do alone", "[codec]") {
    const char* specs[] = {"deltarun|deltarun+zstd:19|deltarun+lzma:6",
                           "deltarun:0+lzma:6|deltarun:0",
                           "shuffle:4+rle+zstd:3|shuffle:4+rle+lz4|shuffle:4+zstd:1|zstd:1|zstd:1+lz4",
                           "trim+shuffle:2|trim|trim+shuffle:2+zstd:3|shuffle:2"};
    Bytes words;
    for (uint32_t i = 0; i < 5000; ++i) append_le<uint32_t>(words, i / 3 * 7 + (i % 3 == 2 ? i % 11 : 0));
    for (const Bytes& in : {words, random_bytes(30000, 9), Bytes(4096, 0), Bytes{}}) {
        for (const char* spec : specs) {
            const std::vector<Pipeline> alts = parse_alternatives(spec, {});
            StagePrefix prefix;
            size_t reused = 0;
            for (size_t a = 0; a < alts.size(); ++a) {
                INFO(spec << " alternative " << a);
                reused += prefix.stages;
                const size_t keep = a + 1 < alts.size() ? shared_stages(alts[a], alts[a + 1]) : 0;
                const EncodedChunk shared = encode_pipeline(alts[a], in, prefix, keep);
                const EncodedChunk alone = encode_pipeline(alts[a], in);
                CHECK(shared.payload == alone.payload);
                CHECK(shared.stage_input_sizes == alone.stage_input_sizes);
                CHECK(decode_pipeline(alts[a], shared.payload, shared.stage_input_sizes) == in);
            }
            CHECK(reused > 0);
        }
    }
    // A prefix longer than the pipeline it is handed to is refused, not read past.
    const Pipeline one = parse_pipeline("zstd:1", {});
    StagePrefix two{2, Bytes(10, 1), {10, 10}};
    CHECK_THROWS(encode_pipeline(one, Bytes(10, 1), two, 0));
}

// A dedup that finds no repeat marks its block unchanged, and the pipeline then decodes it on
// the previous stage's buffer: only such a block (of the declared size) is taken in place;
// a block with references, or a mark with the wrong size, goes to decode (which refuses it).
TEST_CASE("dedup blocks without repeats decode in place, others are left to decode", "[codec]") {
    const Bytes unique = random_bytes(64 * 50, 21);
    for (const char* name : {"dedup", "celldedup"}) {
        INFO(name);
        const bool cells = std::string(name) == "celldedup";  // columns of transposed data
        DataShape rows;
        rows.row_bytes = 64, rows.elem_bytes = 2, rows.transposed = cells;
        Bytes repeats = unique;
        if (cells) {  // column 5 = column 0 in every row
            for (size_t r = 0; r < 50; ++r) std::copy_n(repeats.begin() + 64 * r, 2, repeats.begin() + 64 * r + 10);
        } else {  // row 7 = row 0
            std::copy(repeats.begin(), repeats.begin() + 64, repeats.begin() + 64 * 7);
        }
        const Pipeline p = parse_pipeline(std::string(name) + "+zstd:1", rows);
        const Stage& dedup = p.stages[0];
        Bytes block;
        dedup.codec->encode(unique, dedup.params, block);
        Bytes buf = block;
        REQUIRE(dedup.codec->decode_in_place(buf, dedup.params, unique.size()));
        CHECK(buf == unique);
        buf = block;
        CHECK_FALSE(dedup.codec->decode_in_place(buf, dedup.params, unique.size() + 1));
        CHECK_THROWS(dedup.codec->decode(block, dedup.params, unique.size() + 1, buf));
        Bytes with_refs;
        dedup.codec->encode(repeats, dedup.params, with_refs);
        CHECK(with_refs.size() < repeats.size());
        buf = with_refs;
        CHECK_FALSE(dedup.codec->decode_in_place(buf, dedup.params, repeats.size()));
        for (const Bytes* in : std::initializer_list<const Bytes*>{&unique, &repeats}) {
            const EncodedChunk e = encode_pipeline(p, *in);
            CHECK(decode_pipeline(p, e.payload, e.stage_input_sizes) == *in);
        }
    }
}

// A chunk's own recipe leaves out a dedup that found no repeat (its output would be its input
// and a mark): the payload is what the stages after it make of the chunk itself, the record
// lists those stages only, and they decode to the chunk. A dedup with repeats stays; so does a
// last stage, and every stage where alternatives share a prefix (those run in full).
TEST_CASE("a chunk's recipe leaves out a stage that changed nothing", "[codec]") {
    const Bytes unique = random_bytes(64 * 50, 23);
    Bytes repeats = unique;
    std::copy(repeats.begin(), repeats.begin() + 64, repeats.begin() + 64 * 7);  // row 7 = row 0
    DataShape rows;
    rows.row_bytes = 64, rows.elem_bytes = 2;
    const Pipeline p = parse_pipeline("dedup+zstd:1", rows);
    StagePrefix none;
    EncodedChunk e = encode_pipeline(p, unique, none, 0, true);
    REQUIRE(e.unchanged_stages == std::vector<size_t>{0});
    const Pipeline recipe = chunk_recipe(p, e);
    REQUIRE(recipe.stages.size() == 1);
    CHECK(recipe.stages[0].codec->name() == "zstd");
    CHECK(e.stage_input_sizes == std::vector<uint64_t>{unique.size()});
    CHECK(e.unchanged_stages.empty());
    CHECK(e.payload == encode_pipeline(parse_pipeline("zstd:1", rows), unique).payload);
    CHECK(decode_pipeline(recipe, e.payload, e.stage_input_sizes) == unique);
    // Not where the recipe is fixed (a plane's), nor with repeats, nor as the last stage.
    CHECK(encode_pipeline(p, unique).unchanged_stages.empty());
    EncodedChunk with_refs = encode_pipeline(p, repeats, none, 0, true);
    CHECK(with_refs.unchanged_stages.empty());
    CHECK(chunk_recipe(p, with_refs).stages.size() == 2);
    CHECK(decode_pipeline(p, with_refs.payload, with_refs.stage_input_sizes) == repeats);
    const Pipeline alone = parse_pipeline("dedup", rows);
    EncodedChunk last = encode_pipeline(alone, unique, none, 0, true);
    CHECK(last.unchanged_stages.empty());
    CHECK(decode_pipeline(alone, last.payload, last.stage_input_sizes) == unique);
    // Alternatives that share the dedup: it runs in full for both.
    const std::vector<Pipeline> alts = parse_alternatives("dedup+zstd:1|dedup+lz4", rows);
    StagePrefix prefix;
    EncodedChunk first = encode_pipeline(alts[0], unique, prefix, shared_stages(alts[0], alts[1]), true);
    EncodedChunk second = encode_pipeline(alts[1], unique, prefix, 0, true);
    CHECK(first.unchanged_stages.empty());
    CHECK(second.unchanged_stages.empty());
    CHECK(decode_pipeline(alts[1], second.payload, second.stage_input_sizes) == unique);
    // Two unchanged stages in a row: both out, their sizes with them.
    const Pipeline twice = parse_pipeline("dedup+dedup+zstd:1", rows);
    EncodedChunk both = encode_pipeline(twice, unique, none, 0, true);
    CHECK(both.unchanged_stages == std::vector<size_t>{0, 1});
    const Pipeline only_zstd = chunk_recipe(twice, both);
    CHECK(only_zstd.stages.size() == 1);
    CHECK(decode_pipeline(only_zstd, both.payload, both.stage_input_sizes) == unique);
}
