// qctx's modes 2, 3 and 4 (every byte in rANS byte planes, where a model per channel does not pay
// or qctx:planes asks for no model; mode 3 with the values whole; mode 4 with the bytes after the
// scales in storage order, where order 0 is decided for them): round trips over every block
// layout, row width and record geometry (the tiled transpose for records of whole rows, byte
// by byte otherwise), and hostile payloads and parameters of those modes.
#include <catch2/catch.hpp>

#include "codecs/pipeline.hpp"
#include "codecs/quant_context.hpp"
#include "engine/presets.hpp"
#include "test_blocks.hpp"

using namespace stz;
using stztest::blocks_shape;
using stztest::channel_blocks;
using stztest::random_bytes;

namespace {

// Noise quants (no channel structure: mode 2) under scales that drift slowly, as real ones do.
Bytes noise_blocks(ElemType t, size_t blocks, uint64_t seed) {
    const uint64_t W = elem_type_info(t).block_bytes;
    Bytes b = random_bytes(blocks * W, seed);
    for (size_t i = 0; i < blocks; ++i) b[i * W + 1] = static_cast<uint8_t>(0x20 + (i / 50) % 4);
    return b;
}

// Encodes `data` with `p`, checks that it decodes back, and returns the payload's mode byte.
uint8_t round_trip_mode(const Pipeline& p, const Bytes& data) {
    const EncodedChunk e = encode_pipeline(p, data);
    CHECK(decode_pipeline(p, e.payload, e.stage_input_sizes) == data);
    return e.payload.at(0);
}

// A damaged payload (a flip inside a plane's coded bytes, a coded plane cut short) decodes
// to an error or to other bytes of exactly the declared size, never a crash.
void check_refused_or_sized(const Codec& q, ByteSpan payload, const Bytes& params, size_t size) {
    Bytes out;
    try {
        q.decode(payload, params, size, out);
        CHECK(out.size() == size);
    } catch (const Error&) {
    }
}

// `n` records, each a 12-byte head(r) and its blocks(r).
template <class Head, class Blocks> Bytes records_of(int n, Head head, Blocks blocks) {
    Bytes out;
    for (int r = 0; r < n; ++r) append_bytes(out, head(r)), append_bytes(out, blocks(r));
    return out;
}

}  // namespace

TEST_CASE("qctx modes 2 and 4 round-trip every layout, row width and record geometry", "[quant][qctx]") {
    const ElemType types[] = {ElemType::Q8_0, ElemType::Q4_0, ElemType::Q4_1, ElemType::Q5_0, ElemType::Q5_1, ElemType::IQ4_NL};
    for (ElemType t : types) {
        const uint64_t W = elem_type_info(t).block_bytes;
        for (uint64_t cols : {1, 3, 4}) {
            INFO(elem_type_info(t).name << ", " << cols << " blocks a row");
            const Pipeline p = parse_pipeline("qctx", blocks_shape(t, cols));
            for (size_t rows : {1, 17, 300}) {
                Bytes data = noise_blocks(t, rows * cols, rows + cols);
                const uint8_t mode = round_trip_mode(p, data);
                // (A few rows: each channel's few values look learnable.) Noise: order 0 decided
                // from the counts, in storage order (mode 4), but for q8_0's planes of up to 256 KB,
                // whose order rans:1 decides from every pair (mode 2).
                if (rows >= 300) CHECK(mode == (t == ElemType::Q8_0 ? 2 : 4));
                data.resize(data.size() + W / 2, 0x5a);  // a partial block at the end
                round_trip_mode(p, data);
            }
            // Records of whole rows (the transpose per record) and of rows cut by the record end
            // (5 blocks a record with 3 or 4 a row: byte by byte); heads that repeat and that do not.
            for (uint64_t per_record : {cols * 20, uint64_t{5}}) {
                const Pipeline pr = parse_pipeline("qctx", blocks_shape(t, cols, per_record));
                const Bytes records = records_of(
                    100, [](int r) { return r % 3 ? Bytes(12, 9) : random_bytes(12, 100 + r); },
                    [&](int r) { return noise_blocks(t, per_record, 200 + r); });
                CHECK(round_trip_mode(pr, records) == (t == ElemType::Q8_0 ? 2 : 4));
            }
        }
    }
}

TEST_CASE("qctx mode 4 moves the scales of wide rows through strips of whole tiles", "[quant][qctx]") {
    // Rows of 16 and 40 blocks: each strip's scale bytes are 32-160 bytes wide, moved by the
    // wider tiles, 64 rows a strip; 69 and 200 rows leave a last strip of fewer rows than a tile
    // (5) or more (8). Rows of 300 blocks: 600-1,200 bytes wide, strips of 16-27 rows.
    for (ElemType t : {ElemType::Q4_0, ElemType::Q5_1}) {
        for (uint64_t cols : {16, 40, 300}) {
            for (size_t rows : {69, 200}) {
                INFO(elem_type_info(t).name << ", " << cols << " blocks a row, " << rows << " rows");
                const Pipeline p = parse_pipeline("qctx", blocks_shape(t, cols));
                CHECK(round_trip_mode(p, noise_blocks(t, rows * cols, rows * cols)) == 4);
            }
            // Records of 7 blocks: rows cut by every record's end.
            const Pipeline pr = parse_pipeline("qctx", blocks_shape(t, cols, 7));
            const Bytes records = records_of(300, [](int r) { return random_bytes(12, 500 + r); },
                                             [&](int r) { return noise_blocks(t, 7, 600 + r); });
            CHECK(round_trip_mode(pr, records) == 4);
        }
    }
}

TEST_CASE("qctx mode 4 (storage order) on a q8_0 chunk whose order is decided from its counts", "[quant][qctx]") {
    // Over 256 KB of q8_0 quant bytes, the order comes from qctx's own counts: noise gets mode 4.
    for (uint64_t cols : {1, 4}) {
        INFO(cols << " blocks a row");
        const size_t blocks = 9000 * cols;
        const Pipeline p = parse_pipeline("qctx", blocks_shape(ElemType::Q8_0, cols));
        CHECK(round_trip_mode(p, noise_blocks(ElemType::Q8_0, blocks, 31)) == 4);
        const Pipeline pr = parse_pipeline("qctx", blocks_shape(ElemType::Q8_0, cols, 300 * cols));
        const Bytes records = records_of(30, [](int r) { return random_bytes(12, 300 + r); },
                                         [&](int r) { return noise_blocks(ElemType::Q8_0, 300 * cols, 400 + r); });
        CHECK(round_trip_mode(pr, records) == 4);
    }
}

TEST_CASE("qctx modes 2 and 4 refuse hostile payloads with an error", "[quant][qctx][hostile]") {
    const Codec* q = find_codec("qctx");
    REQUIRE(q);
    // Noise q4_1 in records: mode 4; q8_0's small chunk: mode 2.
    for (ElemType t : {ElemType::Q4_1, ElemType::Q8_0}) {
        INFO(elem_type_info(t).name);
        const Bytes params = parse_pipeline("qctx", blocks_shape(t, 2, 40)).stages[0].params;
        const Bytes data = records_of(8, [](int r) { return random_bytes(12, r); },
                                      [&](int r) { return noise_blocks(t, 40, r); });
        Bytes payload;
        q->encode(data, params, payload);
        REQUIRE(payload[0] == (t == ElemType::Q8_0 ? 2 : 4));
        Bytes out;
        q->decode(payload, params, data.size(), out);
        CHECK(out == data);
        // A declared output over the size bound is refused before anything is allocated for it.
        out.clear();
        const uint64_t huge = (uint64_t{1} << 40) / data.size() * data.size();
        CHECK_THROWS_AS(q->decode(payload, params, static_cast<size_t>(huge), out), Error);
        // Lengths past the end, truncations, flipped bytes: an error or (a flip inside a plane's
        // coded bytes) other bytes of exactly the declared size, never a crash.
        Bytes long_heads = payload;
        store_le<uint32_t>(long_heads.data() + 1, UINT32_MAX);
        for (const Bytes& bad :
             {long_heads, Bytes(payload.begin(), payload.begin() + 5), Bytes(payload.begin(), payload.end() - 1)}) {
            out.clear();
            CHECK_THROWS_AS(q->decode(bad, params, data.size(), out), Error);
        }
        for (size_t at = 1; at < payload.size(); at += 7) {
            Bytes flipped = payload;
            flipped[at] ^= 0x41;
            check_refused_or_sized(*q, flipped, params, data.size());
        }
        // The other of the two modes' byte on the same planes: other bytes or an error; a mode past 4:
        // an error.
        for (uint8_t mode : {uint8_t(payload[0] == 2 ? 4 : 2), uint8_t(5), uint8_t(0xff)}) {
            Bytes other = payload;
            other[0] = mode;
            out.clear();
            if (mode > 4) CHECK_THROWS_AS(q->decode(other, params, data.size(), out), Error);
            else check_refused_or_sized(*q, other, params, data.size());
        }
    }
}

TEST_CASE("qctx:planes writes rANS planes where qctx takes the model per channel", "[quant][qctx]") {
    const ElemType types[] = {ElemType::Q8_0, ElemType::Q4_0, ElemType::Q4_1, ElemType::Q5_0, ElemType::Q5_1, ElemType::IQ4_NL};
    for (ElemType t : types) {
        INFO(elem_type_info(t).name);
        // Channel-dependent values: whole (mode 3) where they are narrower than a byte.
        const uint8_t planes_mode = t == ElemType::Q8_0 ? 2 : 3;
        const Bytes trained = channel_blocks(t, 400, 2, 7);
        const Pipeline model = parse_pipeline("qctx", blocks_shape(t, 2));
        const Pipeline planes = parse_pipeline("qctx:planes", blocks_shape(t, 2));
        CHECK(planes.describe() == "qctx:planes");
        CHECK(round_trip_mode(model, trained) == 1);
        CHECK(round_trip_mode(planes, trained) == planes_mode);
        // With records: the 14-byte form.
        const Bytes records = records_of(20, [](int r) { return random_bytes(12, r); },
                                         [&](int r) { return channel_blocks(t, 40, 2, r); });
        const Pipeline pr = parse_pipeline("qctx:planes", blocks_shape(t, 2, 80));
        CHECK(pr.stages[0].params.size() == 14);
        CHECK(round_trip_mode(pr, records) == planes_mode);
    }
}

TEST_CASE("qctx refuses a flags byte it does not know, and 'planes' with a rate", "[quant][qctx][hostile]") {
    const Codec* q = find_codec("qctx");
    REQUIRE(q);
    Bytes params = parse_pipeline("qctx:planes", blocks_shape(ElemType::Q8_0, 2)).stages[0].params;
    REQUIRE(params.size() == 5);
    CHECK_NOTHROW(q->check_params(params));
    for (uint8_t flags : {0, 2, 0xff}) {
        params.back() = flags;
        CHECK_THROWS_AS(q->check_params(params), Error);
    }
    CHECK_THROWS_AS(parse_pipeline("qctx:planes:4", blocks_shape(ElemType::Q8_0, 2)), Error);
}

TEST_CASE("qctx mode 3 (whole values) round-trips and is smaller than mode 2 where it is chosen", "[quant][qctx]") {
    const ElemType types[] = {ElemType::Q4_0, ElemType::Q4_1, ElemType::Q5_0, ElemType::Q5_1, ElemType::IQ4_NL};
    for (ElemType t : types) {
        const uint64_t W = elem_type_info(t).block_bytes;
        for (uint64_t cols : {1, 3, 4}) {
            INFO(elem_type_info(t).name << ", " << cols << " blocks a row");
            const Pipeline p = parse_pipeline("qctx:planes", blocks_shape(t, cols));
            for (size_t rows : {17, 300}) {
                Bytes data = channel_blocks(t, rows, cols, rows * 7 + cols);
                CHECK(round_trip_mode(p, data) == 3);
                data.resize(data.size() + W / 2, 0x33);  // a partial block at the end
                CHECK(round_trip_mode(p, data) == 3);
            }
            for (uint64_t per_record : {cols * 20, uint64_t{5}}) {
                const Pipeline pr = parse_pipeline("qctx:planes", blocks_shape(t, cols, per_record));
                const Bytes records = records_of(
                    30, [](int r) { return random_bytes(12, 300 + r); },
                    [&](int r) { return per_record % cols == 0 ? channel_blocks(t, per_record / cols, cols, r)
                                                               : channel_blocks(t, per_record, 1, r); });
                CHECK(round_trip_mode(pr, records) == 3);
            }
        }
        // Noise: its bytes at order 0 in storage order (mode 4; q8_0's order decided by rans:1,
        // mode 2); q8_0 keeps mode 2; values that depend on their channel compress (a random
        // scale of 2 or 4 bytes a block, a bit of noise in each value; order 1 from 8 KiB).
        const Bytes trained = channel_blocks(t, 600, 1, 5);
        const Bytes noise = noise_blocks(t, 2000, 9);
        const Pipeline p = parse_pipeline("qctx:planes", blocks_shape(t, 1));
        CHECK(round_trip_mode(p, noise) == (t == ElemType::Q8_0 ? 2 : 4));
        const Bytes q8_trained = channel_blocks(ElemType::Q8_0, 200, 1, 5);
        CHECK(round_trip_mode(parse_pipeline("qctx:planes", blocks_shape(ElemType::Q8_0, 1)), q8_trained) == 2);
        CHECK(encode_pipeline(p, trained).payload.size() * 10 < trained.size() * 6);
    }
}

TEST_CASE("qctx mode 3 refuses hostile payloads with an error", "[quant][qctx][hostile]") {
    const Codec* q = find_codec("qctx");
    REQUIRE(q);
    const Bytes params = parse_pipeline("qctx:planes", blocks_shape(ElemType::Q5_1, 2, 40)).stages[0].params;
    const Bytes data = records_of(8, [](int r) { return random_bytes(12, r); },
                                  [](int r) { return channel_blocks(ElemType::Q5_1, 20, 2, r); });
    Bytes payload;
    q->encode(data, params, payload);
    REQUIRE(payload[0] == 3);
    Bytes out;
    q->decode(payload, params, data.size(), out);
    CHECK(out == data);
    out.clear();
    const uint64_t huge = (uint64_t{1} << 40) / data.size() * data.size();
    CHECK_THROWS_AS(q->decode(payload, params, static_cast<size_t>(huge), out), Error);
    Bytes long_heads = payload;
    store_le<uint32_t>(long_heads.data() + 1, UINT32_MAX);
    for (const Bytes& bad : {long_heads, Bytes(payload.begin(), payload.begin() + 5)}) {
        out.clear();
        CHECK_THROWS_AS(q->decode(bad, params, data.size(), out), Error);
    }
    // Truncations and flipped bytes (a coded plane one byte short can still decode).
    for (size_t cut = 1; cut < 40 && cut < payload.size(); cut += 3)
        check_refused_or_sized(*q, ByteSpan(payload).first(payload.size() - cut), params, data.size());
    for (size_t at = 1; at < payload.size(); at += 5) {
        Bytes flipped = payload;
        flipped[at] ^= 0x24;
        check_refused_or_sized(*q, flipped, params, data.size());
    }
    // Mode 3 for q8_0, whose values are its bytes, is not a stream any encoder writes.
    const Bytes q8_params = parse_pipeline("qctx:planes", blocks_shape(ElemType::Q8_0, 1)).stages[0].params;
    const Bytes q8 = channel_blocks(ElemType::Q8_0, 50, 1, 3);
    Bytes q8_payload;
    q->encode(q8, q8_params, q8_payload);
    REQUIRE(q8_payload[0] == 2);
    q8_payload[0] = 3;
    out.clear();
    CHECK_THROWS_AS(q->decode(q8_payload, q8_params, q8.size(), out), Error);
}

TEST_CASE("qctx unpacks a block's values as read one at a time, and packs them back", "[quant][qctx]") {
    // Value j: the low nibble of quant byte j (j < 16) or the high nibble of byte j - 16, and
    // for q5 bit j of qh (the 4 bytes before the quants) as its bit 4.
    for (const qctx::BlockLayout& L : qctx::kLayouts) {
        for (uint64_t seed = 1; seed <= 64; ++seed) {
            const Bytes block = random_bytes(L.bytes, seed * 7919 + L.bytes);
            const uint8_t* qs = block.data() + L.quants_at();
            uint8_t values[qctx::kElems];
            qctx::unpack(L, block.data(), values);
            for (unsigned j = 0; j < qctx::kElems; ++j) {
                unsigned expected = L.bits == 8 ? qs[j] : j < 16 ? qs[j] & 15u : qs[j - 16] >> 4;
                if (L.has_high) expected |= ((load_le<uint32_t>(qs - 4) >> j) & 1u) << 4;
                INFO("block of " << L.bytes << " bytes, seed " << seed << ", value " << j);
                CHECK(values[j] == expected);
            }
            Bytes packed(L.bytes, 0);
            std::copy_n(block.data(), L.quants_at() - (L.has_high ? 4 : 0), packed.data());  // the scales
            qctx::pack(L, values, packed.data());
            CHECK(packed == block);
        }
    }
    for (uint32_t bits = 0; bits < 256; ++bits) {
        const uint64_t bytes = qctx::high_bits_as_bytes(bits | 0xff00u);  // (bits above the low 8 ignored)
        for (unsigned i = 0; i < 8; ++i) CHECK(((bytes >> 8 * i) & 0xff) == (((bits >> i) & 1u) << 4));
    }
}
