// Two planes' small order-0 rANS streams decoded together (rans_decode_two_streams, the codecs'
// decodes_in_pairs / decode_pair_into, decode_planes_in_pairs): the same bytes as each stream
// decoded alone, nothing written outside the outputs, damaged streams refused or decoded inside
// their buffers, and every other pair of payloads decoded one by one.
#include <htscodecs/rANS_static4x16.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "codecs/codec.hpp"
#include "codecs/rans_codec.hpp"
#include "codecs/rans_order0_halves.hpp"
#include "rans_order1_util.hpp"
#include "test_util.hpp"

using namespace stz;

namespace {

constexpr uint8_t kGuard = 0xA5;
constexpr size_t kGuardBytes = 64;

const Codec& rans() { return *find_codec("rans"); }
Bytes rans_params(const char* order) { return rans().make_params({order}, DataShape{}); }

Bytes encoded(const Codec& codec, const Bytes& params, const Bytes& in) {
    Bytes out;
    codec.encode(in, params, out);
    return out;
}

// An output of n bytes followed by guard bytes: what a decoder wrote past the end shows.
struct Guarded {
    explicit Guarded(size_t n) : n(n), bytes(n + kGuardBytes, kGuard) {}
    uint8_t* data() { return bytes.data(); }
    Bytes out() const { return Bytes(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n)); }
    bool guard_intact() const {
        for (size_t i = n; i < bytes.size(); ++i)
            if (bytes[i] != kGuard) return false;
        return true;
    }
    size_t n;
    Bytes bytes;
};

// The sizes of a plane a small stream takes (1001 is the smallest X32 stream; below 32 KB one
// stream, not halves), with different numbers of whole steps and tails.
const std::vector<size_t> kSizes = {1001, 1033, 2032, 4113, 16256, order0_halves::kMinBytes - 1};

}  // namespace

TEST_CASE("rans: two small order-0 planes decode together to the bytes each decodes to alone", "[entropy][pairs]") {
    rans_init_cpu_once();
    const Bytes order0 = rans_params("0");
    int paired = 0;
    uint64_t seed = 300;
    for (size_t na : kSizes)
        for (size_t nb : kSizes)
            for (int kind : {0, 2, 3, 6, 9}) {
                const Bytes a = stztest::plane(kind, na, seed++), b = stztest::plane(kind == 3 ? 6 : 9, nb, seed++);
                INFO(na << " and " << nb << " bytes, kind " << kind);
                const Bytes ea = encoded(rans(), order0, a), eb = encoded(rans(), order0, b);
                const bool pairs = rans().decodes_in_pairs(ea, order0, na) && rans().decodes_in_pairs(eb, order0, nb);
                // Where this CPU steps two streams together, every coded small stream pairs.
                if (rans_order0_pairs_available() && ea[0] != 0 && eb[0] != 0) CHECK(pairs);
                if (!rans_order0_pairs_available()) CHECK_FALSE(pairs);
                paired += pairs;
                Guarded da(na), db(nb);
                rans().decode_pair_into(ea, order0, na, da.data(), eb, order0, nb, db.data());
                CHECK(da.out() == a);
                CHECK(db.out() == b);
                CHECK(da.guard_intact());
                CHECK(db.guard_intact());
            }
    if (rans_order0_pairs_available()) CHECK(paired >= 100);
}

TEST_CASE("rans: stored, order-1 and large payloads do not pair, and decode one by one", "[entropy][pairs]") {
    rans_init_cpu_once();
    const Bytes order0 = rans_params("0"), order1 = rans_params("1");
    Bytes noise(5000);
    for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
    const Bytes chained = stztest::plane(1, 20000, 2), large = stztest::plane(6, 100000, 3);
    const Bytes small = stztest::plane(6, 3000, 4);
    const Bytes e_small = encoded(rans(), order0, small);
    REQUIRE(e_small[0] != 0);
    const Bytes e_stored = encoded(rans(), order0, noise);
    const Bytes e_order1 = encoded(rans(), order1, chained);
    const Bytes e_large = encoded(rans(), order0, large);
    CHECK_FALSE(rans().decodes_in_pairs(e_stored, order0, noise.size()));
    CHECK_FALSE(rans().decodes_in_pairs(e_order1, order1, chained.size()));
    CHECK_FALSE(rans().decodes_in_pairs(e_large, order0, large.size()));
    CHECK_FALSE(rans().decodes_in_pairs(e_small, order0, small.size() + 1));  // not the size it was written for
    struct Case {
        const Bytes* payload;
        const Bytes* params;
        const Bytes* plane;
    };
    const std::vector<Case> cases = {{&e_stored, &order0, &noise}, {&e_order1, &order1, &chained},
                                     {&e_large, &order0, &large}, {&e_small, &order0, &small}};
    for (const Case& x : cases)
        for (const Case& y : cases) {
            Guarded dx(x.plane->size()), dy(y.plane->size());
            rans().decode_pair_into(*x.payload, *x.params, x.plane->size(), dx.data(), *y.payload, *y.params,
                                    y.plane->size(), dy.data());
            CHECK(dx.out() == *x.plane);
            CHECK(dy.out() == *y.plane);
        }
}

TEST_CASE("rans: damaged streams decoded in pairs are refused or stay inside their buffers", "[entropy][pairs]") {
    rans_init_cpu_once();
    if (!rans_order0_pairs_available()) stztest::skip_test("this CPU does not step two order-0 streams together");
    const Bytes order0 = rans_params("0");
    const Bytes a = stztest::plane(6, 9000, 50), b = stztest::plane(9, 7001, 51);
    const Bytes ea = encoded(rans(), order0, a), eb = encoded(rans(), order0, b);
    REQUIRE(rans().decodes_in_pairs(ea, order0, a.size()));
    REQUIRE(rans().decodes_in_pairs(eb, order0, b.size()));
    int refused = 0, decoded = 0;
    stztest::for_each_damaged(ea, 3, 300, [&](const Bytes& bad) {
        Guarded da(a.size()), db(b.size());
        try {
            rans().decode_pair_into(bad, order0, a.size(), da.data(), eb, order0, b.size(), db.data());
            ++decoded;
        } catch (const Error&) {
            ++refused;
        }
        CHECK(da.guard_intact());
        CHECK(db.guard_intact());
    });
    CHECK(refused > 0);
    CHECK(refused + decoded == 300);
}

TEST_CASE("lzrans: decode_into writes nothing after its output, and pairs decode as one by one", "[codec][lzrans][pairs]") {
    rans_init_cpu_once();
    const Codec& lzrans = *find_codec("lzrans");
    const Bytes params = lzrans.make_params({"1"}, DataShape{});
    const int allowed = rans_allowed_cpu_mask();
    for (int mask : {allowed, allowed & ~(RANS_CPU_ENC_AVX512 | RANS_CPU_DEC_AVX512), 0}) {
        rans_select_cpu(mask);
        INFO("mask " << mask);
        for (size_t n : {size_t{3000}, size_t{40000}, size_t{200000}}) {
            const Bytes plane = stztest::plane(6, n, n), other = stztest::plane(2, n / 2 + 7, n + 1);
            const Bytes e = encoded(lzrans, params, plane), e_other = encoded(lzrans, params, other);
            REQUIRE(e[0] == 0);  // by rANS (no repeated probes)
            Guarded d(n);
            lzrans.decode_into(e, params, n, d.data());
            CHECK(d.out() == plane);
            CHECK(d.guard_intact());
            Guarded pa(n), pb(other.size());
            lzrans.decode_pair_into(e, params, n, pa.data(), e_other, params, other.size(), pb.data());
            CHECK(pa.out() == plane);
            CHECK(pb.out() == other);
            CHECK(pa.guard_intact());
            CHECK(pb.guard_intact());
        }
    }
    rans_select_cpu(allowed);
}

// The order decode_planes_in_pairs decodes planes in, those that may pair marked '1' in `may`:
// "(ab)" a pair, "p" a plane alone, "p!" one alone after the planes behind it.
std::string decoding_order(const std::string& may) {
    std::string events;
    decode_planes_in_pairs(
        may.size(), [&](size_t p) { return may[p] == '1'; },
        [&](size_t a, size_t b) { events += "(" + std::to_string(a) + std::to_string(b) + ")"; },
        [&](size_t p, bool later_done) { events += std::to_string(p) + (later_done ? "!" : ""); });
    return events;
}

TEST_CASE("decode_planes_in_pairs: pairs in order, the rest alone in order, a plane left over last", "[codec][pairs]") {
    // Each plane that may pair waits for the next such plane; the others go by.
    CHECK(decoding_order("0110101001") == "0(12)35(46)789");
    CHECK(decoding_order("1101") == "(01)23");
    CHECK(decoding_order("1000") == "1230!");  // plane 0 decoded last, after the planes behind it
    CHECK(decoding_order("") == "");
}
