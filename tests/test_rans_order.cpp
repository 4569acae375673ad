// rans:1 codes order-1 only where it pays: on bytes independent of their predecessor it falls
// back to order-0 (its larger tables would cost more than they save), on bytes that follow
// their predecessor it keeps order-1.
#include <catch2/catch.hpp>
#include <htscodecs/rANS_static4x16.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "codecs/codec.hpp"
#include "codecs/pipeline.hpp"
#include "codecs/rans_codec.hpp"
#include "codecs/rans_order0_halves.hpp"
#include "test_util.hpp"

using namespace stz;

namespace {

size_t coded_size(const char* spec, const Bytes& in) {
    Pipeline p = parse_pipeline(spec, DataShape{});
    EncodedChunk e = encode_pipeline(p, in);
    REQUIRE(decode_pipeline(p, e.payload, e.stage_input_sizes) == in);
    return e.payload.size();
}

}  // namespace

TEST_CASE("rans:1 falls back to order-0 where order-1 tables do not pay, and keeps order-1 where they do", "[codec]") {
    // Skewed bytes, each drawn independently (a quant plane of an untrained model): 200 KB.
    Bytes noise = stztest::random_bytes(200000, 5), independent(200000);
    for (size_t i = 0; i < independent.size(); ++i) independent[i] = static_cast<uint8_t>((noise[i] % 64) * (noise[i] % 3));
    const size_t o0 = coded_size("rans:0", independent), o1 = coded_size("rans:1", independent);
    CHECK(o1 <= o0 + 16);  // order-1's tables for 256 contexts would add kilobytes
    // Bytes that depend on the previous one (a channel's run of similar values): a random walk
    // over 64 values (order-0 about 6 bits a byte, order-1 about 2.3).
    Bytes chained(200000);
    chained[0] = 32;
    for (size_t i = 1; i < chained.size(); ++i)
        chained[i] = static_cast<uint8_t>(std::clamp(int(chained[i - 1]) + int(noise[i] % 5) - 2, 0, 63));
    CHECK(coded_size("rans:1", chained) < coded_size("rans:0", chained) * 3 / 4);
}

TEST_CASE("rans codes into and decodes into the caller's buffer after what it holds, at every sampling step", "[codec]") {
    // The coder writes its stream into `out` after the bytes already there and decodes the
    // same way (with slack it cuts off after): sizes on both sides of the estimates' sampling
    // steps (16, 32, 64, 256 KB), a skewed plane and a chained one, both orders.
    const Codec* rans = find_codec("rans");
    REQUIRE(rans);
    const Bytes noise = stztest::random_bytes(600000, 9);
    for (size_t n : {size_t{100}, size_t{16384}, size_t{16385}, size_t{40000}, size_t{65537}, size_t{300000}, size_t{600000}}) {
        Bytes skewed(n), chained(n);
        for (size_t i = 0; i < n; ++i) {
            skewed[i] = static_cast<uint8_t>((noise[i] % 32) * (noise[i] % 2));
            chained[i] = static_cast<uint8_t>(i ? std::clamp(int(chained[i - 1]) + int(noise[i] % 5) - 2, 0, 63) : 32);
        }
        for (const Bytes* plane : {&skewed, &chained})
            for (const char* order : {"0", "1"}) {
                const Bytes params = rans->make_params({order}, DataShape{});
                Bytes coded = {0xAB, 0xCD};
                rans->encode(*plane, params, coded);
                REQUIRE(coded.size() > 3);
                CHECK(coded[0] == 0xAB);
                CHECK(coded[1] == 0xCD);
                if (n >= 16384) {  // coded, not stored: these planes compress (100 bytes may not)
                    CHECK(coded[2] == 1);
                    CHECK(coded.size() - 2 < plane->size());
                }
                const ByteSpan body(coded.data() + 2, coded.size() - 2);
                Bytes decoded = {0x11};
                rans->decode(body, params, plane->size(), decoded);
                REQUIRE(decoded.size() == plane->size() + 1);
                CHECK(decoded[0] == 0x11);
                CHECK(std::equal(plane->begin(), plane->end(), decoded.begin() + 1));
                Bytes into(plane->size());
                rans->decode_into(body, params, plane->size(), into.data());
                CHECK(into == *plane);
            }
    }
}

// A graph stage decodes its rANS planes straight into its plane buffer (slack after each
// plane: the planes after it) and reads the streams where they lie when records follow: the
// same bytes as the padded decode, whatever the slack holds, and a corrupt stream is still
// refused.
TEST_CASE("rans codes planes where they lie, decodes into the caller's slack buffer and reads streams in place", "[codec]") {
    const Codec& rans = *find_codec("rans");
    Bytes noise = stztest::random_bytes(100000, 11), skewed(100000);
    for (size_t i = 0; i < skewed.size(); ++i) skewed[i] = static_cast<uint8_t>(noise[i] % 7 * (noise[i] % 5));
    for (const char* spec : {"rans:0", "rans:1"}) {
        INFO(spec);
        const Bytes params = parse_pipeline(spec, DataShape{}).stages[0].params;
        Bytes coded;
        rans.encode(skewed, params, coded);
        REQUIRE(coded[0] == 1);  // coded, not stored
        // Coded where it lies, between junk slack on both sides: the same stream.
        Bytes framed(Codec::kSlack, 0xC3);
        append_bytes(framed, skewed);
        framed.resize(framed.size() + Codec::kSlack, 0x3C);
        Bytes coded_in_place;
        rans.encode_in_slack(ByteSpan(framed).subspan(Codec::kSlack, skewed.size()), params, coded_in_place);
        CHECK(coded_in_place == coded);
        for (bool in_slack : {false, true}) {
            Bytes stream = coded;
            stream.resize(coded.size() + Codec::kSlack, 0xA5);  // the later records
            Bytes out(skewed.size() + Codec::kSlack, 0x5A);
            rans.decode_into_slack(ByteSpan(stream).first(coded.size()), params, skewed.size(), out.data(), in_slack);
            CHECK(std::equal(skewed.begin(), skewed.end(), out.begin()));
            stream[coded.size() / 2] ^= 0x40;
            Bytes again(out.size());
            try {  // a flipped byte either fails to decode or decodes to other bytes: never the same
                rans.decode_into_slack(ByteSpan(stream).first(coded.size()), params, skewed.size(), again.data(), in_slack);
                CHECK_FALSE(std::equal(skewed.begin(), skewed.end(), again.begin()));
            } catch (const Error&) {
            }
        }
    }
}

// Streams that statezip's own decoders read (every form they take on this CPU) are decoded
// where they lie and into the caller's memory without slack: each stream is copied into a buffer
// of exactly its size and decoded into one of exactly the output's (the sanitizer build faults
// on any byte read or written past either); under a mask whose library kernels read past the
// stream, the codec still decodes it (from its padded copy).
TEST_CASE("rans streams that statezip's decoders read are decoded where they lie, with no slack on either side", "[codec]") {
    rans_init_cpu_once();
    const Codec& rans = *find_codec("rans");
    Bytes noise = stztest::random_bytes(300000, 12);
    auto skewed = [&](size_t n) {
        Bytes b(n);
        for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(noise[i] % 7 * (noise[i] % 5));
        return b;
    };
    auto walk = [&](size_t n) {  // order 1 pays
        Bytes b(n);
        b[0] = 32;
        for (size_t i = 1; i < n; ++i) b[i] = static_cast<uint8_t>(std::clamp(int(b[i - 1]) + int(noise[i] % 5) - 2, 0, 63));
        return b;
    };
    // A small order-0 4x16 stream, one X32 stream, two halves; order-1 small and in two halves.
    const std::pair<const char*, Bytes> cases[] = {{"rans:0", skewed(900)},    {"rans:0", skewed(20000)},
                                                   {"rans:0", skewed(200000)}, {"rans:1", walk(20000)},
                                                   {"rans:1", walk(300000)}};
    const int allowed = rans_allowed_cpu_mask();
    int within = 0;
    for (int mask : {allowed, allowed & ~(RANS_CPU_ENC_AVX512 | RANS_CPU_DEC_AVX512), 0}) {
        rans_select_cpu(mask);
        for (const auto& [spec, in] : cases) {
            INFO(spec << ", " << in.size() << " bytes, mask " << mask);
            const Bytes params = parse_pipeline(spec, DataShape{}).stages[0].params;
            Bytes coded;
            rans.encode(in, params, coded);
            REQUIRE(coded[0] == 1);
            const Bytes exact(coded.begin(), coded.end());  // (a vector of exactly its size)
            within += rans_decodes_within(exact.data() + 1, static_cast<unsigned>(exact.size() - 1),
                                          static_cast<unsigned>(in.size()));
            std::vector<uint8_t> out(in.size());
            rans.decode_into(exact, params, in.size(), out.data());
            CHECK(std::equal(in.begin(), in.end(), out.begin()));
            Bytes appended;
            rans.decode(exact, params, in.size(), appended);
            CHECK(appended == in);
        }
    }
    rans_select_cpu(allowed);
    // Where order 0's halves are stepped in pairs (AVX-512 VBMI2), every form here is statezip's own.
    if (rans_order0_pairs_available()) CHECK(within >= 5);
}

TEST_CASE("rans_encode_decided keeps the caller's order where the codec's estimate would not, and decodes as rans", "[codec]") {
    // The independent skewed bytes on which rans:1's own estimate falls back to order-0.
    Bytes noise = stztest::random_bytes(200000, 7), independent(200000);
    for (size_t i = 0; i < independent.size(); ++i) independent[i] = static_cast<uint8_t>((noise[i] % 64) * (noise[i] % 3));
    const Codec& rans = *find_codec("rans");
    const Bytes order1 = rans.make_params({"1"}, DataShape{});
    Bytes estimated, decided0, decided1;
    rans.encode(independent, order1, estimated);
    rans_encode_decided(independent, 0, decided0);
    rans_encode_decided(independent, 1, decided1);
    CHECK(decided0 == estimated);  // the estimate chose order-0: the same stream
    // Byte 0: the codec's mode (1, coded); byte 1: the stream's flags, whose bit 0 is the order.
    REQUIRE(decided1.size() > 2);
    CHECK(decided1[0] == 1);
    CHECK((decided1[1] & 1) == 1);
    CHECK((estimated[1] & 1) == 0);
    CHECK(decided1.size() > decided0.size());  // what the estimate saved
    for (const Bytes* coded : {&decided0, &decided1}) {
        Bytes back;
        rans.decode(*coded, order1, independent.size(), back);
        CHECK(back == independent);
    }
    // A plane too small to code is stored, whatever the caller decided.
    Bytes tiny(20, 3), stored;
    rans_encode_decided(tiny, 1, stored);
    CHECK(stored.size() == tiny.size() + 1);
    CHECK(stored[0] == 0);
}

TEST_CASE("rans:1 keeps order-0 on megabytes of independent bytes of many values", "[codec]") {
    // A sample of pairs spreads over every context of ~200 values: its order-1 entropy is far
    // below the plane's (few samples per context), so a quick look must correct for that or
    // choose order-1 tables that cost more than they save.
    std::mt19937 gen(5);
    std::normal_distribution<double> normal(0, 30);
    for (size_t n : {size_t{1} << 20, size_t{4} << 20}) {
        Bytes independent(n);
        for (auto& b : independent) b = static_cast<uint8_t>(static_cast<int>(std::lround(normal(gen))));
        const size_t o0 = coded_size("rans:0", independent), o1 = coded_size("rans:1", independent);
        CHECK(o1 <= o0 + 16);
    }
}

TEST_CASE("rans:1 chooses its order from the same counts on every CPU path, so a .stz does not depend on the CPU", "[codec]") {
    // Up to kRansExactOrderBytes the order is chosen from every pair (statezip's order-1 encoder
    // counts them anyway; without that encoder on a CPU the same pairs are counted); above, from
    // a sample.
    rans_init_cpu_once();
    const int allowed = rans_allowed_cpu_mask();
    const int wide = RANS_CPU_ENC_AVX512 | RANS_CPU_DEC_AVX512, avx2 = RANS_CPU_ENC_AVX2 | RANS_CPU_DEC_AVX2;
    const int masks[] = {allowed, allowed & ~wide, allowed & ~(wide | avx2)};
    Bytes noise = stztest::random_bytes((4u << 20) + 1, 9);
    auto walk = [&](size_t n) {  // order 1 pays
        Bytes b(n);
        b[0] = 32;
        for (size_t i = 1; i < n; ++i) b[i] = static_cast<uint8_t>(std::clamp(int(b[i - 1]) + int(noise[i] % 5) - 2, 0, 63));
        return b;
    };
    Bytes skewed(30000);  // independent bytes: order 0 (one stream: below order0_halves::kMinBytes)
    for (size_t i = 0; i < skewed.size(); ++i) skewed[i] = static_cast<uint8_t>((noise[i] % 64) * (noise[i] % 3));
    const Bytes uniform(noise.begin(), noise.begin() + 50000);  // not worth coding: stored
    struct Case {
        Bytes in;
        int mode, flags;  // what the codec writes: mode byte (0 stored, 1 rANS), then the stream's flags
    };
    // (From kTwoHalvesMinBytes statezip's own order-1 form: the plane in two halves. The walk of
    // 9000 bytes in grouped rows: its 64 rows cost more to decode than grouping costs in bytes.)
    const Case cases[] = {{walk(9000), 1, RANS_ORDER_X32 | 1 | kRansOrderGrouped}, {walk(300000), 1, RANS_ORDER_X32 | 1 | kRansOrderGrouped},
                          {skewed, 1, RANS_ORDER_X32}, {uniform, 0, -1}, {walk((4u << 20) + 1), 1, RANS_ORDER_X32 | 1}};
    const Codec& rans = *find_codec("rans");
    const Bytes params = rans.make_params({"1"}, DataShape{});
    for (const Case& c : cases) {
        std::vector<Bytes> outs;
        for (int mask : masks) {
            INFO(c.in.size() << " bytes, mask " << mask);
            rans_select_cpu(mask);
            Bytes out;
            rans.encode(c.in, params, out);
            REQUIRE(out.size() >= 2);
            CHECK(out[0] == c.mode);
            if (c.mode == 1) CHECK(out[1] == c.flags);
            Bytes back;
            rans.decode(out, params, c.in.size(), back);
            CHECK(back == c.in);
            outs.push_back(out);
        }
        for (const Bytes& o : outs) CHECK(o == outs.front());
    }
    rans_select_cpu(allowed);
}
