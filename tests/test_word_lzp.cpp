// The word coder (lzp): exact round trips on token-like lists (a skewed vocabulary, repeated
// phrases, ids of any width, a tail of 1-3 bytes), repeats coded in a fraction of a bit a word,
// a payload written by hand from docs/FORMAT.md, and refusal of truncated, damaged and
// crafted payloads.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "codecs/codec.hpp"
#include "codecs/range_coder.hpp"
#include "test_util.hpp"

using namespace stz;
using namespace stztest;

namespace {

const Codec& lzp() {
    const Codec* c = find_codec("lzp");
    REQUIRE(c != nullptr);
    return *c;
}

Bytes words_bytes(const std::vector<uint32_t>& w) {
    Bytes b;
    for (uint32_t v : w) append_le<uint32_t>(b, v);
    return b;
}

// Ids with a skewed frequency (rank r drawn about as often as 1/r), as text's tokens are.
std::vector<uint32_t> skewed_ids(size_t n, uint32_t vocab, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<double> weight(vocab);
    for (uint32_t r = 0; r < vocab; ++r) weight[r] = 1.0 / (r + 1);
    std::discrete_distribution<uint32_t> pick(weight.begin(), weight.end());
    std::vector<uint32_t> w(n);
    for (auto& v : w) v = pick(rng);
    return w;
}

Bytes encoded(ByteSpan in) {
    Bytes out;
    lzp().encode(in, {}, out);
    return out;
}

// decode and decode_into agree and give `in` back; the payload respects the codec's bounds.
void check_round_trip(const Bytes& in) {
    INFO(in.size() << " bytes");
    const Bytes enc = encoded(in);
    CHECK(enc.size() <= lzp().max_encoded_size(in.size()));
    CHECK(in.size() <= lzp().max_decoded_size({}, enc.size()));
    Bytes out{7};
    lzp().decode(enc, {}, in.size(), out);
    REQUIRE(out.size() == in.size() + 1);
    CHECK(out[0] == 7);
    CHECK(Bytes(out.begin() + 1, out.end()) == in);
    Bytes into(in.size(), 0xCD);
    lzp().decode_into(enc, {}, in.size(), into.data());
    CHECK(into == in);
}

// Decoding must throw stz::Error (not crash, not return).
void check_refused(ByteSpan payload, size_t out_size) {
    Bytes out;
    CHECK_THROWS_AS(lzp().decode(payload, {}, out_size, out), Error);
}

}  // namespace

TEST_CASE("lzp round-trips token lists, ids of every width and arbitrary bytes", "[lzp]") {
    check_round_trip({});
    check_round_trip({1, 2, 3});  // a tail alone
    check_round_trip(words_bytes({42}));
    check_round_trip(words_bytes(std::vector<uint32_t>(5000, 0)));  // one word, width 0
    check_round_trip(words_bytes(std::vector<uint32_t>(300, 0xFFFFFFFFu)));
    for (uint32_t vocab : {2u, 512u, 32000u, 262144u}) {
        std::vector<uint32_t> w = skewed_ids(3000, vocab, vocab);
        // A phrase repeated later, as prompts and generated text repeat.
        w.insert(w.end(), w.begin() + 100, w.begin() + 700);
        Bytes b = words_bytes(w);
        for (size_t tail = 0; tail < 4; ++tail) {
            check_round_trip(b);
            b.push_back(static_cast<uint8_t>(0xA0 + tail));
        }
    }
    // Ids spread over 32 bits (the top bits through the tree, the rest plain), and words that
    // are no ids at all.
    std::vector<uint32_t> wide = skewed_ids(2000, 700, 5);
    for (auto& v : wide) v = v * 0x9E3779B1u;
    check_round_trip(words_bytes(wide));
    for (uint64_t seed = 1; seed <= 4; ++seed) check_round_trip(random_bytes(4096 + seed, seed));
}

TEST_CASE("lzp codes a repeated phrase in a fraction of a bit a word and stores what it cannot shrink", "[lzp]") {
    const std::vector<uint32_t> phrase = skewed_ids(1000, 512, 9);
    std::vector<uint32_t> twice = phrase;
    twice.insert(twice.end(), phrase.begin(), phrase.end());
    const size_t once_bytes = encoded(words_bytes(phrase)).size(), twice_bytes = encoded(words_bytes(twice)).size();
    // The second copy: the first word or two as literals, then right predictions at a
    // fraction of a bit each.
    CHECK(twice_bytes < once_bytes + 1000 / 8);
    // Skewed ids cost less than their width: under 9 bits a word for a 512-word vocabulary.
    CHECK(once_bytes * 8 < phrase.size() * 9);
    // Random words: stored, one mode byte more than the input.
    const Bytes noise = random_bytes(4000, 3);
    const Bytes enc = encoded(noise);
    CHECK(enc.size() == noise.size() + 1);
    CHECK(enc[0] == 0);
}

TEST_CASE("lzp follows a repeat where it was found, though its phrases occur elsewhere too", "[lzp]") {
    // Three lists over a small vocabulary share many three-word phrases; repeated whole, each
    // is predicted word after word from its own earlier copy, not from the latest occurrence
    // of each phrase.
    std::vector<uint32_t> once;
    for (uint64_t seed : {21, 22, 23}) {
        const std::vector<uint32_t> part = skewed_ids(2000, 40, seed);
        once.insert(once.end(), part.begin(), part.end());
    }
    std::vector<uint32_t> twice = once;
    twice.insert(twice.end(), once.begin() + 2000, once.end());
    twice.insert(twice.end(), once.begin(), once.begin() + 2000);
    const size_t once_bytes = encoded(words_bytes(once)).size(), twice_bytes = encoded(words_bytes(twice)).size();
    INFO(once_bytes << " bytes once, " << twice_bytes << " repeated");
    CHECK(twice_bytes < once_bytes + 6000 / 8 / 4);  // under a quarter of a bit a repeated word
}

TEST_CASE("lzp decodes payloads written from the format description", "[lzp]") {
    // Stored: mode 0, then the input.
    Bytes out;
    lzp().decode(Bytes{0, 1, 2, 3, 4, 5}, {}, 5, out);
    CHECK(out == Bytes{1, 2, 3, 4, 5});
    // Coded, one word 0 with a tail byte 9: mode 1, the tail, D = 1, W = 0, then the range
    // coder's stream for one decision (the new-word flag, 1 at probability 1/2): its first
    // byte 0 (the coder's carry cache), then bytes whose value is at least half the range.
    out.clear();
    lzp().decode(Bytes{1, 9, 1, 0, 0, 0x80, 0, 0, 0}, {}, 5, out);
    CHECK(out == Bytes{0, 0, 0, 0, 9});
    // The same stream with the code below half the range decodes the flag as 0: an index
    // into an empty dictionary, refused.
    check_refused(Bytes{1, 9, 1, 0, 0, 0x10, 0, 0, 0}, 5);
}

TEST_CASE("lzp refuses truncated, damaged and crafted payloads with a clear error", "[lzp][hostile]") {
    std::vector<uint32_t> w = skewed_ids(2000, 512, 11);
    w.insert(w.end(), w.begin(), w.begin() + 500);
    const Bytes in = words_bytes(w);
    const Bytes enc = encoded(in);
    REQUIRE(enc[0] == 1);
    // Every cut inside the header is refused. Inside the stream the coder reads at most
    // RangeDecoder::kFlushBytes past the end, as zeros, and a word index past the words seen, a
    // new word beyond the declared count or a count short of it is refused: nearly every cut
    // fails one of these; one that does not decodes to other words, which the chunk's
    // checksum catches.
    size_t refused = 0;
    const size_t header = 1 + 2 + 1;  // mode, D (2 bytes for 512 words), W
    for (size_t cut = 0; cut < enc.size(); ++cut) {
        Bytes out;
        try {
            lzp().decode(ByteSpan(enc.data(), cut), {}, in.size(), out);
            CHECK(cut > header);
            CHECK(out.size() == in.size());
        } catch (const Error&) {
            ++refused;
        }
    }
    CHECK(refused + RangeDecoder::kFlushBytes + enc.size() / 100 >= enc.size());
    // Damage anywhere: an error or other words, never a crash (run under the sanitizers).
    std::mt19937_64 rng(1);
    for (int trial = 0; trial < 300; ++trial) {
        Bytes bad = enc;
        bad[rng() % bad.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        Bytes out;
        try {
            lzp().decode(bad, {}, in.size(), out);
            CHECK(out.size() == in.size());
        } catch (const Error&) {
        }
    }
    // Header fields outside what the encoder writes.
    check_refused(Bytes{}, 4);
    check_refused(Bytes{2, 0, 0, 0, 0}, 4);            // unknown mode
    check_refused(Bytes{0, 1, 2}, 3);                  // stored size differs
    check_refused(Bytes{1, 0, 0, 0, 0, 0, 0}, 4);      // D = 0
    check_refused(Bytes{1, 2, 0, 0, 0, 0, 0, 0}, 4);   // D = 2 > 1 word
    check_refused(Bytes{1, 1, 33, 0, 0, 0, 0, 0}, 4);  // W = 33
    check_refused(Bytes{1, 1}, 4);                     // W missing
    check_refused(Bytes{1}, 5);                        // the tail missing
    check_refused(Bytes{1, 0x80}, 4);                  // D truncated
    // More distinct words than the stream could spell out (its tree would be allocated for
    // them): 50,000 of 50,000 words declared in a stream of 5 bytes (a size the payload's
    // length allows).
    const Bytes many{1, 0xD0, 0x86, 0x03, 20, 0, 0x80, 0, 0, 0};
    REQUIRE(lzp().max_decoded_size({}, many.size()) >= 4 * 50000);
    check_refused(many, 4 * 50000);
    // Two words, D = 1, and a stream that says both are new.
    check_refused(Bytes{1, 1, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, 8);
    // A tiny payload claiming a huge output is refused before anything is allocated.
    check_refused(Bytes{1, 1, 0, 0, 0x80, 0, 0, 0}, size_t{1} << 40);
    // Parameters: none.
    Bytes out;
    CHECK_THROWS_AS(lzp().decode(enc, Bytes{1}, in.size(), out), Error);
    CHECK_THROWS_AS(lzp().make_params({"3"}, {}), Error);
}
