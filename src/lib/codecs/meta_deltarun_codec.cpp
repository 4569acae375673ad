// deltarun: a transform for arrays of 32-bit words that are nearly arithmetic sequences,
// field by field: records of a few int32 fields (a position that grows by one, a count, an
// id that stays the same for a run of records) or a list of small integers (token ids).
// Each word becomes its difference from the word `lag` places earlier (the same field of the
// previous record when `lag` is the record's width in words; lag 0: the word itself), and
// every run of differences that equal the difference one period earlier (the period is
// `lag`, or 1 when lag is 0) is one repeat count. So a record list whose fields each follow
// an arithmetic sequence codes as a few literals and one count, whatever its length. The
// encoder takes the lag up to the parameter under which most words repeat, or lag 0 unless
// that saves an eighth of the output (see encode). What is left (the literals, the jumps
// where a field starts a new run) goes to the next stage of the pipeline (e.g.
// deltarun+zstd:19), whose matches catch the periodic patterns.
//
// Parameter: u8 max_lag (0..64; "deltarun:N", default 16): the largest lag the encoder tries.
// Payload: u8 mode; mode 0 = the input stored; mode 1 = u8 lag (<= max_lag), u8 width (1..4,
// bytes per literal), the input's last size % 4 bytes raw, varint P, P pairs {varint L,
// varint R} that cover the words in order (L literals, then R words whose difference repeats
// the one a period earlier), then every literal, width bytes little-endian each (the
// difference zigzagged; for lag 0 the word itself). Literals after the counts, not between
// them, so that the next stage sees them as one aligned array (token lists: matches of
// repeated phrases stay matches). A pair with L = R = 0 is invalid, a repeat before the
// first period too.
#include <algorithm>

#include "codec_impls.hpp"
#include "varint.hpp"

namespace stz {

namespace {

constexpr uint8_t kDeltaRunId = 17;
constexpr unsigned kMaxLag = 64, kDefaultMaxLag = 16;
constexpr uint8_t kModeStored = 0, kModeCoded = 1;
// A repeat shorter than this costs more (its count, the next literal count) than the literals.
constexpr size_t kMinRepeat = 2;
constexpr const char* kName = "deltarun";

uint32_t zigzag(uint32_t d) { return (d << 1) ^ (0u - (d >> 31)); }
uint32_t unzigzag(uint32_t z) { return (z >> 1) ^ (0u - (z & 1)); }
unsigned varint_bytes(uint64_t v) {
    unsigned n = 1;
    while (v >= 0x80) v >>= 7, ++n;
    return n;
}
unsigned width_of(uint32_t v) { return v < (1u << 8) ? 1 : v < (1u << 16) ? 2 : v < (1u << 24) ? 3 : 4; }

// The words seen at one lag: their differences, and the literal/repeat split the encoder
// writes. One buffer, refilled per lag tried (lag 0, then the most repeating one).
struct Differences {
    unsigned lag = 0, period = 1;
    std::vector<uint32_t> d;  // word i's difference from the word `lag` back (lag 0: the word)
    void compute(const std::vector<uint32_t>& w, unsigned lag_) {
        lag = lag_, period = std::max(lag_, 1u);
        d.resize(w.size());
        const size_t head = lag ? std::min<size_t>(lag, w.size()) : w.size();
        std::copy(w.begin(), w.begin() + head, d.begin());
        for (size_t i = head; i < w.size(); ++i) d[i] = w[i] - w[i - lag];
    }
    uint32_t literal(size_t i) const { return lag ? zigzag(d[i]) : d[i]; }
    // Calls pair(first literal, literal count, repeat count) in order, covering every word:
    // literals up to the next run of at least kMinRepeat words whose difference is the one a
    // period earlier (or such a run that ends the block), then that run.
    template <class F> void pairs(F&& pair) const {
        const size_t n = d.size();
        size_t lit = 0, i = std::min<size_t>(period, n);
        while (i < n) {
            if (d[i] != d[i - period]) {
                ++i;
                continue;
            }
            size_t j = i + 1;
            while (j < n && d[j] == d[j - period]) ++j;
            if (j - i >= kMinRepeat || j == n) pair(lit, i - lit, j - i), lit = j;
            i = j;
        }
        if (lit < n) pair(lit, n - lit, size_t{0});
    }
    // The literal width and the coded size (with the mode, lag, width bytes and the pair
    // count; without the tail), in one pass.
    std::pair<unsigned, uint64_t> measure() const {
        uint32_t top = 0;
        uint64_t counts = 0, n_literals = 0, n_pairs = 0;
        pairs([&](size_t lit, size_t n_lit, size_t rep) {
            for (size_t k = lit; k < lit + n_lit; ++k) top = std::max(top, literal(k));
            counts += varint_bytes(n_lit) + varint_bytes(rep), n_literals += n_lit, ++n_pairs;
        });
        const unsigned width = width_of(top);
        return {width, 3 + varint_bytes(n_pairs) + counts + n_literals * width};
    }
};

// Of lags 1..max_lag (at most the word count / 2), the one where most words continue the
// arithmetic run of their field: w[i] - w[i-lag] == w[i-lag] - w[i-2lag]. The smallest such
// lag on a tie (a multiple of the record width repeats as often); 0 if none repeats.
unsigned most_repeating_lag(const std::vector<uint32_t>& w, unsigned max_lag) {
    unsigned best = 0;
    size_t best_count = 0;
    for (unsigned lag = 1; lag <= max_lag && 2 * size_t{lag} < w.size(); ++lag) {
        // Counted in 32-bit blocks: the comparison loop then vectorises four words a step,
        // not two (a 64-bit count), and this search was 2-3 % of the fast preset's time.
        size_t count = 0;
        for (size_t i0 = 2 * size_t{lag}; i0 < w.size(); i0 += size_t{1} << 30) {
            const size_t end = std::min(w.size(), i0 + (size_t{1} << 30));
            uint32_t block = 0;
            for (size_t i = i0; i < end; ++i) block += w[i] - w[i - lag] == w[i - lag] - w[i - 2 * lag];
            count += block;
        }
        if (count > best_count) best = lag, best_count = count;
    }
    return best;
}

std::vector<uint32_t> words_of(ByteSpan in) {
    std::vector<uint32_t> w(in.size() / 4);
    for (size_t i = 0; i < w.size(); ++i) w[i] = load_le<uint32_t>(in.data() + 4 * i);
    return w;
}

void write_coded(const Differences& best, unsigned width, ByteSpan tail, Bytes& out) {
    out.push_back(kModeCoded);
    out.push_back(static_cast<uint8_t>(best.lag));
    out.push_back(static_cast<uint8_t>(width));
    append_bytes(out, tail);
    uint64_t n_pairs = 0;
    best.pairs([&](size_t, size_t, size_t) { ++n_pairs; });
    put_varint(out, n_pairs);
    best.pairs([&](size_t, size_t n_lit, size_t rep) { put_varint(out, n_lit), put_varint(out, rep); });
    best.pairs([&](size_t lit, size_t n_lit, size_t) {
        const size_t base = out.size();
        out.resize(base + n_lit * width);
        for (size_t k = 0; k < n_lit; ++k) {
            uint8_t b[4];
            store_le<uint32_t>(b, best.literal(lit + k));
            std::memcpy(out.data() + base + k * width, b, width);
        }
    });
}

class DeltaRunCodec final : public Codec {
public:
    uint8_t id() const override { return kDeltaRunId; }
    std::string_view name() const override { return kName; }
    Bytes make_params(const std::vector<std::string>& args, const DataShape&) const override {
        if (args.size() > 1) throw Error("deltarun takes one argument: the largest lag to try, e.g. deltarun:16");
        const int lag = args.empty() ? int(kDefaultMaxLag) : parse_int_arg(args[0], 0, kMaxLag, kName);
        return {static_cast<uint8_t>(lag)};
    }
    void check_params(ByteSpan p) const override {
        require_params(p.size() == 1, kName, "expected 1 byte");
        require_params(p[0] <= kMaxLag, kName, "lag out of range");
    }
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        check_params(params);
        const std::vector<uint32_t> w = words_of(in);
        const ByteSpan tail = in.subspan(w.size() * 4);
        // The lag: of 1..max_lag the one with the most repeating differences (cheap to
        // count for every lag), measured against lag 0. Differences hide the repeats that the
        // next stage's matches would find in the words themselves (token lists: the same
        // phrase at two places): a lag is taken over lag 0 only when it saves an eighth.
        Differences diffs;
        diffs.compute(w, 0);
        auto [best_width, best_bytes] = diffs.measure();
        unsigned best_lag = 0;
        if (const unsigned lag = most_repeating_lag(w, params[0])) {
            diffs.compute(w, lag);
            const auto [width, bytes] = diffs.measure();
            if (bytes < best_bytes - best_bytes / 8) best_lag = lag, best_width = width, best_bytes = bytes;
        }
        if (best_bytes + tail.size() >= 1 + in.size()) {  // no shorter than stored: store it
            out.push_back(kModeStored);
            return append_bytes(out, in);
        }
        diffs.compute(w, best_lag);
        const size_t base = out.size();
        write_coded(diffs, best_width, tail, out);
        // measure() and write_coded() walk the same pairs; max_encoded_size rests on that.
        if (out.size() - base != best_bytes + tail.size()) throw Error("deltarun: coded size differs from its measure");
    }
    // The payload is checked whole (header, every pair, the literal bytes) before the output
    // is allocated: a claimed size that the pairs do not cover allocates nothing.
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        const Block b = parse_block(in, params, out_size);
        const size_t base = out.size();
        out.resize(base + out_size);
        write_block(b, in, out_size, out.data() + base);
    }
    bool writes_into() const override { return true; }
    void decode_into(ByteSpan in, ByteSpan params, size_t out_size, uint8_t* dst) const override {
        write_block(parse_block(in, params, out_size), in, out_size, dst);
    }
    std::string describe(ByteSpan params) const override {
        return params.size() == 1 ? "deltarun:" + std::to_string(params[0]) : "deltarun";
    }
    size_t max_encoded_size(size_t n) const override { return n + 1; }
    // No bound per input byte: one repeat count stands for any number of words (decoded at
    // a few instructions per word, like a long match).
    std::vector<std::string> sample_specs() const override { return {"deltarun", "deltarun:0", "deltarun:3"}; }

private:
    struct Block {  // a checked payload
        bool stored = false;
        unsigned lag = 0, width = 1, period = 1;
        std::vector<std::pair<uint64_t, uint64_t>> pairs;  // literal count, repeat count
        size_t literals_at = 0;
    };
    static Block parse_block(ByteSpan in, ByteSpan params, size_t out_size);
    static void write_block(const Block& b, ByteSpan in, size_t out_size, uint8_t* dst);
};

DeltaRunCodec::Block DeltaRunCodec::parse_block(ByteSpan in, ByteSpan params, size_t out_size) {
    DeltaRunCodec().check_params(params);
    if (in.empty()) throw Error("deltarun: empty payload");
    Block b;
    if (in[0] == kModeStored) {
        if (in.size() - 1 != out_size) throw Error("deltarun: stored size does not match");
        b.stored = true;
        return b;
    }
    if (in[0] != kModeCoded) throw Error("deltarun: unknown mode " + std::to_string(in[0]));
    const size_t n = out_size / 4, tail = out_size % 4;
    if (in.size() < 3 + tail) throw Error("deltarun: truncated header");
    b.lag = in[1], b.width = in[2], b.period = std::max(b.lag, 1u);
    if (b.lag > params[0]) throw Error("deltarun: lag " + std::to_string(b.lag) + " above the parameter's " + std::to_string(params[0]));
    if (b.width < 1 || b.width > 4) throw Error("deltarun: literal width " + std::to_string(b.width) + " not 1-4");
    size_t pos = 3 + tail;
    // Each pair takes at least 2 bytes, so their count is bounded by the payload.
    const uint64_t n_pairs = get_varint(in, pos, kName);
    if (n_pairs > (in.size() - pos) / 2) throw Error("deltarun: more pairs than the payload holds");
    b.pairs.resize(n_pairs);
    uint64_t covered = 0, n_literals = 0;
    for (auto& [n_lit, rep] : b.pairs) {
        n_lit = get_varint(in, pos, kName);
        rep = get_varint(in, pos, kName);
        if (n_lit > n - covered || rep > n - covered - n_lit) throw Error("deltarun: pairs past the end of the block");
        if (!n_lit && !rep) throw Error("deltarun: empty pair");
        if (rep && covered + n_lit < b.period) throw Error("deltarun: repeat before the first period");
        covered += n_lit + rep, n_literals += n_lit;
    }
    if (covered != n) throw Error("deltarun: pairs cover " + std::to_string(covered) + " of " + std::to_string(n) + " words");
    // n_literals <= n = out_size / 4: no overflow.
    if (in.size() - pos != n_literals * b.width) throw Error("deltarun: literal bytes do not match the pairs");
    b.literals_at = pos;
    return b;
}

void DeltaRunCodec::write_block(const Block& b, ByteSpan in, size_t out_size, uint8_t* dst) {
    if (b.stored) {
        if (out_size) std::memcpy(dst, in.data() + 1, out_size);
        return;
    }
    const size_t n = out_size / 4;
    if (out_size % 4) std::memcpy(dst + 4 * n, in.data() + 3, out_size % 4);
    const unsigned lag = b.lag, width = b.width, period = b.period;
    // Word k's difference from the word `lag` back (lag 0: the word), from what is decoded.
    auto word = [&](size_t k) { return load_le<uint32_t>(dst + 4 * k); };
    auto base = [&](size_t k) { return lag && k >= lag ? word(k - lag) : 0u; };
    // A literal (width bytes, little-endian) by one 4-byte load where 4 bytes remain: a memcpy of
    // a run-time length was a library call per word (a token list's whole decoding).
    const uint32_t mask = width == 4 ? ~0u : (1u << 8 * width) - 1;
    auto literal = [&](size_t at) {
        if (in.size() - at >= 4) return load_le<uint32_t>(in.data() + at) & mask;
        uint32_t v = 0;
        for (unsigned k = 0; k < width; ++k) v |= uint32_t{in[at + k]} << 8 * k;
        return v;
    };
    size_t i = 0, pos = b.literals_at;
    for (const auto& [n_lit, rep] : b.pairs) {
        for (const size_t end = i + n_lit; i < end; ++i, pos += width) {
            const uint32_t v = literal(pos);
            store_le<uint32_t>(dst + 4 * i, (lag ? unzigzag(v) : v) + base(i));
        }
        for (const size_t end = i + rep; i < end; ++i) store_le<uint32_t>(dst + 4 * i, word(i - period) - base(i - period) + base(i));
    }
}

}  // namespace

std::unique_ptr<Codec> make_deltarun_codec() { return std::make_unique<DeltaRunCodec>(); }

}  // namespace stz
