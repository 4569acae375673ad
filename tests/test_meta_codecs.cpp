// The metadata codec deltarun and the pipelines the presets give cell and token lists (lzp,
// the default's token coder, has its own tests in test_word_lzp.cpp):
// exact round trips on record lists and token lists, compactness where the data is an
// arithmetic run, refusal of truncated and crafted payloads, and on the corpus (when given)
// cells and tokens no larger than xz -9e makes them.
#include <catch2/catch.hpp>
#include <lzma.h>

#include <filesystem>
#include <map>

#include "codecs/codec.hpp"
#include "codecs/pipeline.hpp"
#include "plan/plan.hpp"
#include "test_util.hpp"

using namespace stz;
using namespace stztest;
namespace fs = std::filesystem;

namespace {

const Codec& deltarun() {
    const Codec* c = find_codec("deltarun");
    REQUIRE(c != nullptr);
    return *c;
}

Bytes params_of(const std::string& spec) { return parse_pipeline(spec, {}).stages.at(0).params; }

// A cell list as the state files lay it out: u32 count, per cell {i32 pos, u32 n_seq,
// `ext` bytes, n_seq x i32 seq id}, then two u32 words. `streams` sequences take turns
// every `turn` cells (1: round robin, as parallel generation writes them).
Bytes cell_list(uint32_t n_cells, unsigned streams, unsigned turn, unsigned ext = 0) {
    Bytes b;
    append_le<uint32_t>(b, n_cells);
    for (uint32_t i = 0; i < n_cells; ++i) {
        const uint32_t seq = (i / turn) % streams;
        append_le<int32_t>(b, static_cast<int32_t>(i / (turn * streams) * turn + i % turn));
        append_le<uint32_t>(b, 1);
        for (unsigned e = 0; e < ext; ++e) b.push_back(e == 0 ? 3 : 0);  // a constant flag
        append_le<int32_t>(b, static_cast<int32_t>(seq));
    }
    append_le<uint32_t>(b, 1);
    append_le<uint32_t>(b, 5);
    return b;
}

Bytes token_list(size_t n, uint32_t vocab, uint64_t seed) {
    Bytes r = random_bytes(n * 4, seed), b;
    for (size_t i = 0; i < n; ++i) append_le<uint32_t>(b, load_le<uint32_t>(&r[4 * i]) % vocab);
    return b;
}

Bytes encode_with(const Codec& c, ByteSpan params, ByteSpan in) {
    Bytes out;
    c.encode(in, params, out);
    return out;
}

// decode and decode_into agree and give `in` back.
void check_round_trip(const std::string& spec, const Bytes& in) {
    INFO("spec " << spec << ", " << in.size() << " bytes");
    const Bytes params = params_of(spec);
    const Bytes enc = encode_with(deltarun(), params, in);
    CHECK(enc.size() <= deltarun().max_encoded_size(in.size()));
    Bytes out{7};
    deltarun().decode(enc, params, in.size(), out);
    REQUIRE(out.size() == in.size() + 1);
    CHECK(out[0] == 7);
    CHECK(Bytes(out.begin() + 1, out.end()) == in);
    Bytes into(in.size(), 0xCD);
    deltarun().decode_into(enc, params, in.size(), into.data());
    CHECK(into == in);
}

// Decoding must throw stz::Error (not crash, not return).
void check_refused(ByteSpan payload, size_t out_size, const std::string& spec = "deltarun") {
    Bytes out;
    CHECK_THROWS_AS(deltarun().decode(payload, params_of(spec), out_size, out), Error);
}

Bytes coded_header(uint8_t lag, uint8_t width) { return {1, lag, width}; }

}  // namespace

TEST_CASE("deltarun round-trips cell lists, token lists and arbitrary words", "[meta]") {
    std::vector<Bytes> inputs = {Bytes{}, Bytes{1}, Bytes{1, 2, 3}, Bytes(4, 0), Bytes(4099, 0), random_bytes(4001, 1),
                                 cell_list(1, 1, 1), cell_list(254, 1, 1), cell_list(4000, 1, 1), cell_list(1996, 3, 170),
                                 cell_list(900, 3, 1), cell_list(777, 2, 1, 12), token_list(4000, 512, 2),
                                 token_list(1000, 32000, 3), token_list(300, 1u << 31, 4)};
    // Extremes: differences that wrap around 32 bits, every literal width, a ragged tail.
    Bytes wrap;
    for (int32_t v : {INT32_MIN, INT32_MAX, 0, -1, INT32_MIN, INT32_MAX, 1, 255, 256, 65535, 65536, 1 << 24, -(1 << 24)})
        append_le<int32_t>(wrap, v);
    inputs.push_back(wrap);
    Bytes ragged = cell_list(100, 1, 1);
    ragged.push_back(0x5A), ragged.push_back(0xA5);
    inputs.push_back(ragged);
    for (const Bytes& in : inputs)
        for (const std::string spec : {"deltarun", "deltarun:0", "deltarun:1", "deltarun:3", "deltarun:64"}) check_round_trip(spec, in);
    for (const std::string chain : {"deltarun+zstd:19", "deltarun:0+lzma:6", "deltarun+lzma:9e"}) {
        const Pipeline p = parse_pipeline(chain, {});
        for (const Bytes& in : inputs) {
            INFO(chain << ", " << in.size() << " bytes");
            EncodedChunk e = encode_pipeline(p, in);
            CHECK(decode_pipeline(p, e.payload, e.stage_input_sizes) == in);
        }
    }
}

TEST_CASE("deltarun codes an arithmetic record list as a few bytes and finds its record width", "[meta]") {
    const Bytes params = params_of("deltarun");
    const Bytes cells = cell_list(4000, 1, 1);  // 48 KB: positions 0..3999 of one sequence
    const Bytes enc = encode_with(deltarun(), params, cells);
    CHECK(enc.size() < 40);
    REQUIRE(enc.size() > 1);
    CHECK(enc[0] == 1);
    CHECK(enc[1] == 3);  // the lag: 3 words per cell
    // With the 12-byte extension a cell is 6 words.
    const Bytes ext = encode_with(deltarun(), params, cell_list(4000, 1, 1, 12));
    CHECK(ext.size() < 60);
    CHECK(ext[1] == 6);
    // Three sequences in blocks of 170 cells: a few literals per block.
    CHECK(encode_with(deltarun(), params, cell_list(1996, 3, 170)).size() < 300);
    // Without deltarun the best general coder here needs far more (it must learn the counter).
    CHECK(encode_pipeline(parse_pipeline("deltarun+zstd:19", {}), cells).payload.size() * 4 <
          encode_pipeline(parse_pipeline("zstd:19", {}), cells).payload.size());
}

TEST_CASE("deltarun keeps token lists undifferenced and narrows them to their bytes in use", "[meta]") {
    const Bytes tokens = token_list(4000, 512, 7);
    const Bytes enc = encode_with(deltarun(), params_of("deltarun"), tokens);
    REQUIRE(enc.size() > 3);
    CHECK(enc[1] == 0);  // lag 0: differences of tokens save nothing
    CHECK(enc[2] == 2);  // ids below 512: two bytes each
    CHECK(enc.size() < tokens.size() / 2 + 16);
    // Random words do not shrink: stored, one byte more.
    const Bytes noise = random_bytes(4096, 8);
    const Bytes stored = encode_with(deltarun(), params_of("deltarun"), noise);
    CHECK(stored.size() == noise.size() + 1);
    CHECK(stored[0] == 0);
}

// The stored form is part of the container format (docs/FORMAT.md): a payload written by hand
// from that description must keep decoding to the same words, whatever the encoder becomes.
TEST_CASE("deltarun decodes a payload written from the format description", "[meta]") {
    // Four cells at positions 0-3 of sequence 0, then v_trans 0 and 5 layers: 15 words. Lag 3:
    // differences 4 0 1 -4 1 0 0 | 1 0 0 1 0 0 (each the one 3 words back) | -3 4.
    const Bytes payload = {1, 3, 1,                             // coded, lag 3, 1-byte literals
                           2, 7, 6, 2, 0,                       // pairs {7 literals, 6 repeats}, {2, 0}
                           8, 0, 2, 7, 2, 0, 0, 5, 8};          // the literals, zigzagged
    Bytes want;
    for (int32_t v : {4, 0, 1, 0, 1, 1, 0, 2, 1, 0, 3, 1, 0, 0, 5}) append_le<int32_t>(want, v);
    Bytes out;
    deltarun().decode(payload, params_of("deltarun"), want.size(), out);
    CHECK(out == want);
    check_refused(payload, want.size(), "deltarun:2");  // lag 3 is above this parameter
}

TEST_CASE("deltarun refuses truncated and crafted payloads with a clear error", "[meta][hostile]") {
    const Bytes params = params_of("deltarun");
    const Bytes cells = cell_list(500, 3, 1);
    const Bytes enc = encode_with(deltarun(), params, cells);
    REQUIRE(enc[0] == 1);
    for (size_t cut = 0; cut < enc.size(); ++cut) check_refused(ByteSpan(enc.data(), cut), cells.size());
    // Bytes after the last word, a wrong declared size.
    Bytes longer = enc;
    longer.push_back(0);
    check_refused(longer, cells.size());
    check_refused(enc, cells.size() + 4);
    check_refused(enc, cells.size() - 4);
    // Modes, widths and lags outside what the encoder writes.
    check_refused(Bytes{9, 0, 1, 0}, 0);
    check_refused(Bytes{0, 1, 2}, 3);  // stored: size differs
    for (uint8_t width : {0, 5, 255}) {
        Bytes b = coded_header(0, width);
        b.insert(b.end(), {1, 1, 0, 0, 0, 0, 0});
        check_refused(b, 4);
    }
    {
        Bytes b = coded_header(4, 1);  // lag 4 above the parameter's 3
        b.insert(b.end(), {1, 1, 0, 7});
        check_refused(b, 4, "deltarun:3");
    }
    // Pairs: an empty one, one past the end, a repeat before the first period, more pairs
    // than the payload could hold, counts of 2^40 words.
    auto pairs = [](uint8_t lag, std::initializer_list<uint8_t> tail) {
        Bytes b = coded_header(lag, 1);
        b.insert(b.end(), tail);
        return b;
    };
    check_refused(pairs(0, {1, 0, 0}), 4);                 // L = R = 0
    check_refused(pairs(0, {1, 2, 0, 5, 6}), 4);           // 2 literals for 1 word
    check_refused(pairs(0, {1, 1, 5, 9}), 8);              // repeats 5 words of 2
    check_refused(pairs(3, {1, 1, 1, 9}), 8);              // a repeat at word 1, lag 3
    check_refused(pairs(0, {0xff, 0xff, 0xff, 0x7f}), 4);  // 2^28 pairs in 4 bytes
    check_refused(pairs(0, {1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0, 0}), 4);
    check_refused(pairs(0, {1, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 7}), 8);
    check_refused(pairs(0, {1, 1, 1}), 8);                 // the literal's byte missing
    check_refused(pairs(0, {1, 1, 1, 7, 8}), 8);           // a literal byte too many
    check_refused(pairs(0, {2, 1, 0, 0, 0, 7}), 8);        // second pair empty
    // A huge declared output with a tiny payload is refused before anything is allocated:
    // a few pairs cannot cover 2^40 words unless their counts say so, and these do not.
    check_refused(pairs(0, {1, 1, 1, 7}), size_t{1} << 40);
    // Parameters: one byte, at most 64.
    for (const Bytes& p : {Bytes{}, Bytes{65}, Bytes{1, 2}}) {
        CHECK_THROWS_AS(deltarun().check_params(p), Error);
        Bytes out;
        CHECK_THROWS_AS(deltarun().decode(enc, p, cells.size(), out), Error);
    }
    CHECK_THROWS_AS(parse_pipeline("deltarun:65", {}), Error);
    CHECK_THROWS_AS(parse_pipeline("deltarun:x", {}), Error);
}

TEST_CASE("deltarun is in the registry that the codec tests and the fuzz target enumerate", "[meta]") {
    const auto all = all_codecs();
    CHECK(std::find(all.begin(), all.end(), &deltarun()) != all.end());
    CHECK(find_codec(uint8_t{17}) == &deltarun());
    CHECK(deltarun().sample_specs().size() >= 2);
}

TEST_CASE("the presets code cells with deltarun, tokens with lzp (fast: deltarun), and --codec meta= still overrides them", "[meta][policy]") {
    Section cells, tokens, header;
    cells.kind = SectionKind::Cells, cells.size = 3060;
    tokens.kind = SectionKind::Tokens, tokens.type = ElemType::I32, tokens.rows = 1, tokens.row_elems = 255, tokens.size = 1020;
    header.kind = SectionKind::Header, header.size = 12;
    for (Preset p : {Preset::Fast, Preset::Default, Preset::Max}) {
        CodecChoice c;
        c.preset = p;
        INFO(preset_name(p));
        CHECK(choose_pipeline(cells, c).find("deltarun") == 0);
        CHECK(choose_pipeline(tokens, c).find(p == Preset::Fast ? "deltarun:0" : "lzp") == 0);
        CHECK(choose_pipeline(header, c).find("deltarun") == std::string::npos);
    }
    CodecChoice level;
    level.level = 7;
    CHECK(choose_pipeline(cells, level) == "deltarun+zstd:7");
    CodecChoice forced;
    parse_codec_option("meta=zstd:3", forced);
    CHECK(choose_pipeline(cells, forced) == "zstd:3");
    CHECK(choose_pipeline(tokens, forced) == "zstd:3");
}

namespace {

// What `xz -9e` writes for `data`: an .xz stream (CRC64) of LZMA2 preset 9e. (The xz tool
// leaves the sizes out of the block header: its file is a few bytes shorter than this.) The
// dictionary is capped to the input, which changes no output byte but spares allocating 64 MiB
// per section.
size_t xz9e_bytes(ByteSpan data) {
    lzma_options_lzma opt;
    REQUIRE(!lzma_lzma_preset(&opt, 9 | LZMA_PRESET_EXTREME));
    opt.dict_size = std::max<uint32_t>(LZMA_DICT_SIZE_MIN, static_cast<uint32_t>(data.size()));
    lzma_filter filters[2] = {{LZMA_FILTER_LZMA2, &opt}, {LZMA_VLI_UNKNOWN, nullptr}};
    Bytes out(data.size() + data.size() / 2 + 4096);
    size_t pos = 0;
    REQUIRE(lzma_stream_buffer_encode(filters, LZMA_CHECK_CRC64, nullptr, data.data(), data.size(), out.data(), &pos,
                                      out.size()) == LZMA_OK);
    return pos;
}

}  // namespace

TEST_CASE("corpus: cells and tokens are no larger than xz -9e makes them, in every preset", "[meta][corpus]") {
    auto dirs = corpus_folders();
    if (dirs.empty()) skip_test("no corpus folder (set STATEZIP_CORPUS=../shared/corpus:../shared/corpus-legacy)");
    size_t sections = 0;
    for (const auto& d : dirs)
        for (const auto& e : fs::recursive_directory_iterator(d)) {
            if (!e.is_regular_file() || e.path().extension() != ".bin") continue;
            const Bytes b = read_file(e.path().string());
            MemorySource src(b);
            const ParsedFile pf = parse_state_file(src, {});
            std::map<uint64_t, size_t> xz_of;  // section offset -> xz -9e bytes, once per section
            for (Preset p : {Preset::Fast, Preset::Default, Preset::Max}) {
                CodecChoice c;
                c.preset = p;
                const Plan plan = make_plan(pf, c, CompressOptions{}.chunk_bytes);
                for (size_t si = 0; si < plan.sections.size(); ++si) {
                    const Section& s = plan.header.sections[si];
                    if ((s.kind != SectionKind::Cells && s.kind != SectionKind::Tokens) || s.size < 8) continue;
                    const ByteSpan raw(b.data() + s.offset, s.size);
                    size_t best = raw.size();  // what the writer keeps: the smallest alternative, or store
                    for (const Pipeline& alt : plan.sections[si].alternatives)
                        best = std::min(best, encode_pipeline(alt, raw).payload.size());
                    INFO(e.path().string() << " " << s.name << " " << preset_name(p) << ": " << best << " bytes");
                    // The fast preset trades tokens for speed (zstd, not lzma): cells only there.
                    if (!xz_of.count(s.offset)) xz_of[s.offset] = xz9e_bytes(raw);
                    if (p != Preset::Fast || s.kind == SectionKind::Cells) CHECK(best <= xz_of[s.offset]);
                    ++sections;
                }
            }
        }
    CHECK(sections > 0);
}
