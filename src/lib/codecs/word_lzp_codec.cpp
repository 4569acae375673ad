// lzp: a coder for lists of 32-bit words drawn from a vocabulary and repeated in phrases
// (token ids). Each word is first predicted as the word that followed the latest earlier
// occurrence of its context (LZP): the previous 3 words, else 2, else 1, the longest context
// seen before; after a right prediction, as the word after its source (a repeat goes on where
// it was found). One adaptive flag, whose context is where the prediction came from and the
// run of right predictions so far, says whether it holds: a repeated phrase costs a fraction
// of a bit a word, with no match lengths or distances to code. A word not predicted is coded by
// its index among the distinct words in the order they first occur (an adaptive binary tree
// over the index's bits), or, at its first occurrence, by its value (an adaptive tree over its
// top 8 bits, the rest as plain bits). Indices, not values, keep the model as small as the
// list's vocabulary whatever the width of the ids, and the binary decisions per word few: one
// for a word predicted right, about 11 otherwise on a 512-word vocabulary, where lzma takes
// 17-18 per 2-byte literal and searches for matches besides.
//
// Parameters: none. Payload: u8 mode; 0 = the input stored; 1 = the input's last size % 4
// bytes raw, varint D (distinct words, 1..n for n words, and no more than the stream can
// spell out: max_distinct_words), u8 W (bits of the largest word, 0..32), then the range
// coder's bytes (range_coder.hpp). docs/FORMAT.md has the model step by step.
#include <algorithm>
#include <bit>
#include <memory>

#include "codec_impls.hpp"
#include "range_coder.hpp"
#include "varint.hpp"

namespace stz {

namespace {

constexpr uint8_t kLzpId = 21;
constexpr const char* kName = "lzp";
constexpr uint8_t kModeStored = 0, kModeCoded = 1;
constexpr unsigned kRate = 4;           // fast adaptation: lists are short
constexpr unsigned kMaxOrder = 3;       // contexts of 3, 2 and 1 words
constexpr unsigned kRunBuckets = 16;    // runs of right predictions 0..15+
constexpr unsigned kValueTreeBits = 8;  // a new word's top bits through a tree; the rest plain
// Context tables: open addressing, at least two slots per word (so at most half full) up to
// 2^21 slots (8 MB) an order; a lookup gives up after kMaxProbes slots (only in a table over
// half full: chunks of more than 2^20 words).
constexpr unsigned kMinTableBits = 8, kMaxTableBits = 21, kMaxProbes = 64;

// The model both sides keep: predictions from the words so far, and every probability.
class Model {
public:
    Model(size_t n, size_t distinct, unsigned width)
        : table_bits_(std::clamp<unsigned>(std::bit_width(n) + 1, kMinTableBits, kMaxTableBits)),
          index_bits_(std::bit_width(distinct - 1)),
          width_(width),
          value_bits_(std::min(width, kValueTreeBits)) {
        for (auto& t : last_) t.assign(size_t{1} << table_bits_, 0);
        index_tree_.assign(size_t{2} << index_bits_, kProbInit);
        std::fill(std::begin(value_tree_), std::end(value_tree_), kProbInit);
        for (auto& f : flags_) std::fill(std::begin(f), std::end(f), kProbInit);
    }
    // The prediction for word i from words [0, i): sets `pred` and returns the flag's
    // probability, or nullptr when there is none. After a right prediction, the word after its
    // source: a repeat goes on where it was found (two phrases that share a few words do not
    // pull it elsewhere), and its words are not recorded (their contexts are, at the source:
    // a repeat then costs a flag a word and no table work). Otherwise the word after the
    // latest earlier occurrence of the longest context that has one; i is recorded as the
    // latest word after each of its contexts.
    uint16_t* predict(const uint32_t* words, size_t i, uint32_t& pred) {
        const unsigned run = std::min(run_, kRunBuckets - 1);
        if (follow_) {
            source_ = follow_ - 1, pred = words[source_];
            return &flags_[kMaxOrder][run];
        }
        uint16_t* flag = nullptr;
        uint64_t h = 0, hashes[kMaxOrder];
        const unsigned orders = static_cast<unsigned>(std::min<size_t>(kMaxOrder, i));
        for (unsigned k = 1; k <= orders; ++k) hashes[k - 1] = h = (h ^ (words[i - k] + k)) * 0x9E3779B97F4A7C15ull;
        for (unsigned k = orders; k >= 1; --k) {
            const uint32_t at = record(words, i, k, hashes[k - 1]);
            if (!flag && at) source_ = at - 1, flag = &flags_[k - 1][run];
        }
        if (flag) pred = words[source_];
        return flag;
    }
    void predicted(bool right) {
        run_ = right ? run_ + 1 : 0;
        follow_ = right ? source_ + 2 : 0;
    }
    void not_predicted() { run_ = 0, follow_ = 0; }
    uint16_t& new_flag() { return new_flag_; }
    uint16_t* index_tree() { return index_tree_.data(); }
    uint16_t* value_tree() { return value_tree_; }
    unsigned index_bits() const { return index_bits_; }
    unsigned value_bits() const { return value_bits_; }
    unsigned plain_bits() const { return width_ - value_bits_; }

private:
    // The slot of the k words before word i (their latest earlier occurrence's, or a free one),
    // found by comparing the words themselves: contexts never share a slot. Returns what it
    // held (the position after that occurrence + 1, 0 for none) and puts i + 1 there.
    uint32_t record(const uint32_t* words, size_t i, unsigned k, uint64_t hash) {
        std::vector<uint32_t>& table = last_[k - 1];
        const size_t mask = table.size() - 1;
        size_t s = static_cast<size_t>(hash >> (64 - table_bits_));
        for (unsigned probe = 0; probe < kMaxProbes; ++probe, s = (s + 1) & mask) {
            const uint32_t at = table[s];
            if (at && !same_context(words, at - 1, i, k)) continue;
            table[s] = static_cast<uint32_t>(i + 1);
            return at;
        }
        return 0;
    }
    static bool same_context(const uint32_t* words, size_t at, size_t i, unsigned k) {
        for (unsigned j = 1; j <= k; ++j)
            if (words[at - j] != words[i - j]) return false;
        return true;
    }
    unsigned table_bits_, index_bits_, width_, value_bits_;
    unsigned run_ = 0;
    uint32_t source_ = 0;  // the position the prediction came from
    uint32_t follow_ = 0;  // after a right prediction: the position after its source + 1; else 0
    std::vector<uint32_t> last_[kMaxOrder];  // per order: context -> position of the word after it + 1
    uint16_t flags_[kMaxOrder + 1][kRunBuckets];  // by context length 1-3, then a repeat going on
    uint16_t new_flag_ = kProbInit;
    std::vector<uint16_t> index_tree_;
    uint16_t value_tree_[2u << kValueTreeBits];
};

void encode_tree(RangeEncoder& rc, uint16_t* tree, uint32_t v, unsigned bits) {
    unsigned node = 1;
    while (bits--) {
        const unsigned b = (v >> bits) & 1;
        rc.bit_unpredictable(tree[node], b, kRate);
        node = (node << 1) | b;
    }
}
// Both children's probabilities are read before the bit that picks one is known: the reads
// leave the chain of dependent decisions (the tree has room for the last level's children).
uint32_t decode_tree(RangeDecoder& rc, uint16_t* tree, unsigned bits) {
    unsigned node = 1;
    uint16_t p = tree[1];
    for (unsigned k = 0; k < bits; ++k) {
        const uint16_t p0 = tree[2 * node], p1 = tree[2 * node + 1];
        const unsigned b = rc.bit_unpredictable(p, kRate);
        tree[node] = p;
        node = (node << 1) | b;
        p = b ? p1 : p0;
    }
    return node - (1u << bits);
}

// Each word's index among the distinct words in first-occurrence order (open addressing on
// the word, 2-4 slots a word); returns the number of distinct words.
size_t first_occurrence_indices(const uint32_t* words, size_t n, std::vector<uint32_t>& index) {
    const unsigned bits = std::bit_width(2 * n - 1);
    std::vector<uint32_t> keys(size_t{1} << bits), values(size_t{1} << bits, 0);  // value: index + 1
    const size_t mask = keys.size() - 1;
    size_t distinct = 0;
    index.resize(n);
    for (size_t i = 0; i < n; ++i) {
        size_t s = static_cast<size_t>((words[i] * 0x9E3779B97F4A7C15ull) >> (64 - bits));
        while (values[s] && keys[s] != words[i]) s = (s + 1) & mask;
        if (!values[s]) keys[s] = words[i], values[s] = static_cast<uint32_t>(++distinct);
        index[i] = values[s] - 1;
    }
    return distinct;
}

void encode_words(const uint32_t* words, size_t n, Bytes& out) {
    std::vector<uint32_t> index;
    const size_t distinct = first_occurrence_indices(words, n, index);
    uint32_t top = 0;
    for (size_t i = 0; i < n; ++i) top |= words[i];
    const unsigned width = std::bit_width(top);
    put_varint(out, distinct);
    out.push_back(static_cast<uint8_t>(width));
    Model m(n, distinct, width);
    RangeEncoder rc(out);
    size_t seen = 0;
    for (size_t i = 0; i < n; ++i) {
        uint32_t pred = 0;
        if (uint16_t* flag = m.predict(words, i, pred)) {
            const bool right = pred == words[i];
            rc.bit(*flag, right, kRate);
            m.predicted(right);
            if (right) continue;
        } else {
            m.not_predicted();
        }
        const bool is_new = index[i] == seen;
        rc.bit(m.new_flag(), is_new, kRate);
        if (!is_new) {
            encode_tree(rc, m.index_tree(), index[i], m.index_bits());
            continue;
        }
        ++seen;
        encode_tree(rc, m.value_tree(), words[i] >> m.plain_bits(), m.value_bits());
        rc.direct_bits(words[i] & ((uint64_t{1} << m.plain_bits()) - 1), m.plain_bits());
    }
    rc.finish();
}

// Decodes n words into `dst` (4n bytes). Every index refers to a word already decoded, and
// exactly `distinct` words are new, or the payload is refused.
void decode_words(ByteSpan stream, size_t n, size_t distinct, unsigned width, uint8_t* dst) {
    const std::unique_ptr<uint32_t[]> words(new uint32_t[n]);  // each written before it is read
    std::vector<uint32_t> dictionary;
    dictionary.reserve(distinct);
    Model m(n, distinct, width);
    RangeDecoder rc(stream);
    for (size_t i = 0; i < n; ++i) {
        uint32_t pred = 0;
        if (uint16_t* flag = m.predict(words.get(), i, pred)) {
            const bool right = rc.bit(*flag, kRate);
            m.predicted(right);
            if (right) {
                words[i] = pred;
                continue;
            }
        } else {
            m.not_predicted();
        }
        if (!rc.bit(m.new_flag(), kRate)) {
            const uint32_t j = decode_tree(rc, m.index_tree(), m.index_bits());
            if (j >= dictionary.size()) throw Error("lzp: a word's index refers to no earlier word (corrupt stream)");
            words[i] = dictionary[j];
            continue;
        }
        if (dictionary.size() == distinct) throw Error("lzp: more distinct words than declared (corrupt stream)");
        const uint32_t high = decode_tree(rc, m.value_tree(), m.value_bits());
        const uint32_t low = rc.direct_bits(m.plain_bits());
        words[i] = static_cast<uint32_t>((uint64_t{high} << m.plain_bits()) | low);
        dictionary.push_back(words[i]);
    }
    if (rc.overran() || dictionary.size() != distinct) throw Error("lzp: corrupt stream");
    for (size_t i = 0; i < n; ++i) store_le<uint32_t>(dst + 4 * i, words[i]);
}

uint64_t max_distinct_words(size_t stream_bytes) { return 256 + 8 * uint64_t{stream_bytes} + 64; }

class WordLzpCodec final : public Codec {
public:
    uint8_t id() const override { return kLzpId; }
    std::string_view name() const override { return kName; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape&) const override {
        if (!args.empty()) throw Error("lzp takes no arguments");
        return {};
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        check_params(params);
        const size_t n = in.size() / 4, base = out.size();
        if (n) {
            const std::unique_ptr<uint32_t[]> words(new uint32_t[n]);
            for (size_t i = 0; i < n; ++i) words[i] = load_le<uint32_t>(in.data() + 4 * i);
            out.push_back(kModeCoded);
            append_bytes(out, in.subspan(4 * n));
            encode_words(words.get(), n, out);
            if (out.size() - base <= in.size()) return;
            out.resize(base);
        }
        out.push_back(kModeStored);  // nothing to code, or no shorter coded
        append_bytes(out, in);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        decode_appending(in, params, out_size, out);
    }
    bool writes_into() const override { return true; }
    void decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* dst) const override {
        check_params(params);
        if (in.empty()) throw Error("lzp: empty payload");
        if (in[0] == kModeStored) {
            if (in.size() - 1 != out_size) throw Error("lzp: stored size does not match");
            if (out_size) std::memcpy(dst, in.data() + 1, out_size);
            return;
        }
        if (in[0] != kModeCoded) throw Error("lzp: unknown mode " + std::to_string(in[0]));
        const size_t n = out_size / 4, tail = out_size % 4;
        if (!n) throw Error("lzp: a coded payload for fewer than 4 bytes");
        if (in.size() < 1 + tail) throw Error("lzp: truncated header");
        if (out_size > max_decoded_size(params, in.size())) throw Error("lzp: declared size over the bound");
        std::memcpy(dst + 4 * n, in.data() + 1, tail);
        size_t pos = 1 + tail;
        const uint64_t distinct = get_varint(in, pos, kName);
        if (pos >= in.size() || in[pos] > 32) throw Error("lzp: bad word width");
        const unsigned width = in[pos++];
        // D distinct words of W bits: at most 256 when W <= 8; otherwise each new word takes at
        // least W - 8 >= 1 plain bit, and the stream holds at most 8 per byte (+ 32 for the
        // coder's first range, + 32 for the bytes read past the end). So the model's tree is
        // bounded by the payload, not by the declared count.
        if (distinct < 1 || distinct > n || distinct > max_distinct_words(in.size() - pos))
            throw Error("lzp: distinct word count out of range");
        decode_words(in.subspan(pos), n, distinct, width, dst);
    }
    size_t max_encoded_size(size_t n) const override { return n + 1; }
    // Probabilities stay within [15, 4081] of 4096, so a decision shrinks the coder's range
    // by at least 0.0053 bits, and a word takes at least one decision: the range coder's bytes
    // (at most 4 read past them) hold fewer than 40 / 0.0053 < 7600 words per byte, at 4
    // bytes each, plus the raw tail.
    uint64_t max_decoded_size(ByteSpan, uint64_t encoded) const override {
        return saturating_mul_add(encoded, 4 * 8192, 64);
    }
};

}  // namespace

std::unique_ptr<Codec> make_word_lzp_codec() { return std::make_unique<WordLzpCodec>(); }

}  // namespace stz
