// The Huffman coder of huffman.hpp. The decoder is table driven (one lookup of kMaxBits bits
// per symbol) with four streams decoded side by side, each refilled branch-free to >= 56 bits
// and then read for five symbols; the encoder keeps a 64-bit accumulator per stream and
// stores it every five symbols (5 * 11 + 7 bits < 64).
#include "huffman.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>

namespace stz::huffman {
namespace {

constexpr uint32_t kKraftTotal = 1u << kMaxBits;
constexpr size_t kLengthBytes = 128;

inline uint64_t load64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
inline void store64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline uint32_t load32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// Unlimited Huffman code lengths of the used symbols (sorted by count, ascending): the
// two-queue construction over leaves and merged nodes, depths read back through parents.
void huffman_depths(const Histogram& h, const std::vector<int>& used, uint8_t* bits) {
    const size_t n = used.size();
    std::vector<uint64_t> weight(2 * n);
    std::vector<size_t> parent(2 * n, 0);
    for (size_t i = 0; i < n; ++i) weight[i] = h.count[used[i]];
    size_t leaf = 0, node = n, next = n;
    auto take = [&]() {
        if (leaf < n && (node >= next || weight[leaf] <= weight[node])) return leaf++;
        return node++;
    };
    for (; next < 2 * n - 1; ++next) {
        const size_t a = take(), b = take();
        weight[next] = weight[a] + weight[b];
        parent[a] = parent[b] = next;
    }
    // Nodes are created in order, so a parent's depth is known before its children's.
    std::vector<uint8_t> depth(2 * n, 0);
    for (size_t k = 2 * n - 2; k-- > 0;) depth[k] = static_cast<uint8_t>(std::min<int>(depth[parent[k]] + 1, 255));
    for (size_t i = 0; i < n; ++i) bits[used[i]] = depth[i];
}

uint32_t kraft_sum(const CodeLengths& lengths) {
    uint32_t sum = 0;
    for (int s = 0; s < 256; ++s)
        if (lengths.bits[s]) sum += kKraftTotal >> lengths.bits[s];
    return sum;
}

// Brings clamped lengths back to a complete code: lengthen the rarest symbols until the code
// fits, then shorten the most frequent ones while room is left. At most 256 symbols were
// clamped, so the first loop runs <= 256 times; each step of the second fills >= 1 unit.
void make_complete(const Histogram& h, const std::vector<int>& used, CodeLengths& lengths) {
    uint32_t sum = kraft_sum(lengths);
    while (sum > kKraftTotal) {
        int best = -1;
        for (int s : used)
            if (lengths.bits[s] < kMaxBits &&
                (best < 0 || h.count[s] < h.count[best] || (h.count[s] == h.count[best] && lengths.bits[s] > lengths.bits[best])))
                best = s;
        ++lengths.bits[best];
        sum -= kKraftTotal >> lengths.bits[best];
    }
    while (sum < kKraftTotal) {
        int best = -1;
        for (int s : used)
            if (lengths.bits[s] > 1 && (kKraftTotal >> lengths.bits[s]) <= kKraftTotal - sum &&
                (best < 0 || h.count[s] > h.count[best]))
                best = s;
        sum += kKraftTotal >> lengths.bits[best];
        --lengths.bits[best];
    }
}

// Canonical codes, bit-reversed for least-significant-first output: enc[s] = code | len << 16.
std::array<uint32_t, 256> canonical_codes(const uint8_t* bits) {
    uint32_t per_length[kMaxBits + 2] = {}, next[kMaxBits + 2] = {};
    for (int s = 0; s < 256; ++s) ++per_length[bits[s]];
    per_length[0] = 0;
    for (int len = 1; len <= kMaxBits; ++len) next[len] = (next[len - 1] + per_length[len - 1]) << 1;
    std::array<uint32_t, 256> enc{};
    for (int s = 0; s < 256; ++s) {
        const int len = bits[s];
        if (!len) continue;
        uint32_t code = next[len]++, reversed = 0;
        for (int b = 0; b < len; ++b) reversed |= ((code >> b) & 1) << (len - 1 - b);
        enc[s] = reversed | static_cast<uint32_t>(len) << 16;
    }
    return enc;
}

size_t encode_stream(const uint8_t* in, size_t n, const uint32_t* enc, uint8_t* out) {
    uint64_t acc = 0;
    unsigned bits = 0;
    uint8_t* p = out;
    size_t i = 0;
    for (; i + 5 <= n; i += 5) {
        for (int j = 0; j < 5; ++j) {
            const uint32_t e = enc[in[i + j]];
            acc |= static_cast<uint64_t>(e & 0xffff) << bits;
            bits += e >> 16;
        }
        store64(p, acc);
        p += bits >> 3;
        acc >>= bits & 56;
        bits &= 7;
    }
    for (; i < n; ++i) {
        const uint32_t e = enc[in[i]];
        acc |= static_cast<uint64_t>(e & 0xffff) << bits;
        bits += e >> 16;
    }
    store64(p, acc);
    return static_cast<size_t>(p - out) + (bits + 7) / 8;
}

struct Reader {
    const uint8_t* p;
    const uint8_t* end;
    uint64_t buf = 0;
    unsigned count = 0;  // valid bits in buf; the bits above them are zero
};

// One symbol at a stream's end: byte-wise refill, and a code longer than the bits left is
// corrupt (the encoder never leaves a code unfinished).
inline uint8_t decode_safe(Reader& r, const uint16_t* table) {
    while (r.count <= 56 && r.p < r.end) r.buf |= static_cast<uint64_t>(*r.p++) << r.count, r.count += 8;
    const uint16_t e = table[r.buf & (kKraftTotal - 1)];
    if ((e >> 8) > r.count) throw Error("huffman: stream ends inside a code");
    r.buf >>= e >> 8;
    r.count -= e >> 8;
    return static_cast<uint8_t>(e);
}

// Five symbols per stream per refill, while every stream has 8 bytes to load; returns how
// many symbols of each stream it wrote. The readers' state lives in locals meanwhile: a byte
// store may alias anything in memory, which would reload every field after each symbol.
size_t decode_fast_loop(Reader* r, const uint16_t* table, uint8_t* const* dst, size_t q) {
    uint64_t b0 = r[0].buf, b1 = r[1].buf, b2 = r[2].buf, b3 = r[3].buf;
    unsigned c0 = r[0].count, c1 = r[1].count, c2 = r[2].count, c3 = r[3].count;
    const uint8_t *p0 = r[0].p, *p1 = r[1].p, *p2 = r[2].p, *p3 = r[3].p;
    const uint8_t *e0 = r[0].end - 8, *e1 = r[1].end - 8, *e2 = r[2].end - 8, *e3 = r[3].end - 8;
    uint8_t *d0 = dst[0], *d1 = dst[1], *d2 = dst[2], *d3 = dst[3];
    size_t i = 0;
#define STZ_REFILL(b, c, p) b |= load64(p) << c, p += (63 - c) >> 3, c |= 56
#define STZ_SYMBOL(b, c, d, j)                                  \
    {                                                           \
        const unsigned e = table[b & (kKraftTotal - 1)];        \
        d[i + j] = static_cast<uint8_t>(e);                     \
        b >>= e >> 8;                                           \
        c -= e >> 8;                                            \
    }
#define STZ_FIVE(j) STZ_SYMBOL(b0, c0, d0, j) STZ_SYMBOL(b1, c1, d1, j) STZ_SYMBOL(b2, c2, d2, j) STZ_SYMBOL(b3, c3, d3, j)
    if (r[0].end - r[0].p >= 8 && r[1].end - r[1].p >= 8 && r[2].end - r[2].p >= 8 && r[3].end - r[3].p >= 8)
        for (; i + 5 <= q; i += 5) {
            if (p0 > e0 || p1 > e1 || p2 > e2 || p3 > e3) break;
            STZ_REFILL(b0, c0, p0);
            STZ_REFILL(b1, c1, p1);
            STZ_REFILL(b2, c2, p2);
            STZ_REFILL(b3, c3, p3);
            STZ_FIVE(0) STZ_FIVE(1) STZ_FIVE(2) STZ_FIVE(3) STZ_FIVE(4)
        }
#undef STZ_FIVE
#undef STZ_SYMBOL
#undef STZ_REFILL
    r[0].buf = b0, r[1].buf = b1, r[2].buf = b2, r[3].buf = b3;
    r[0].count = c0, r[1].count = c1, r[2].count = c2, r[3].count = c3;
    r[0].p = p0, r[1].p = p1, r[2].p = p2, r[3].p = p3;
    return i;
}

// The table from a stream's lengths, checked: every length <= kMaxBits, the code complete.
void read_table(ByteSpan in, uint16_t* table) {
    CodeLengths lengths;
    for (size_t k = 0; k < kLengthBytes; ++k) {
        lengths.bits[2 * k] = in[k] & 15;
        lengths.bits[2 * k + 1] = in[k] >> 4;
    }
    for (int s = 0; s < 256; ++s)
        if (lengths.bits[s] > kMaxBits) throw Error("huffman: code length over " + std::to_string(kMaxBits));
    if (kraft_sum(lengths) != kKraftTotal) throw Error("huffman: code lengths do not form a complete code");
    const auto enc = canonical_codes(lengths.bits);
    for (int s = 0; s < 256; ++s) {
        const uint32_t len = enc[s] >> 16;
        if (!len) continue;
        const uint16_t entry = static_cast<uint16_t>(s | len << 8);
        for (uint32_t k = enc[s] & 0xffff; k < kKraftTotal; k += 1u << len) table[k] = entry;
    }
}

}  // namespace

Histogram histogram(ByteSpan in) {
    uint32_t h[4][256] = {};
    const uint8_t* p = in.data();
    size_t i = 0;
    for (; i + 4 <= in.size(); i += 4) ++h[0][p[i]], ++h[1][p[i + 1]], ++h[2][p[i + 2]], ++h[3][p[i + 3]];
    for (; i < in.size(); ++i) ++h[0][p[i]];
    Histogram out;
    for (int s = 0; s < 256; ++s) out.count[s] = h[0][s] + h[1][s] + h[2][s] + h[3][s];
    return out;
}

CodeLengths code_lengths(const Histogram& h) {
    std::vector<int> used;
    for (int s = 0; s < 256; ++s)
        if (h.count[s]) used.push_back(s);
    // One symbol (or none) still needs a complete code: a partner of the same length.
    if (used.size() < 2) {
        const int s = used.empty() ? 0 : used[0];
        used = {std::min(s, s ^ 1), std::max(s, s ^ 1)};
    }
    std::stable_sort(used.begin(), used.end(), [&](int a, int b) { return h.count[a] < h.count[b]; });
    CodeLengths lengths;
    huffman_depths(h, used, lengths.bits);
    bool clamped = false;
    for (int s : used)
        if (lengths.bits[s] > kMaxBits) lengths.bits[s] = kMaxBits, clamped = true;
    if (clamped) make_complete(h, used, lengths);
    return lengths;
}

size_t encoded_size(const Histogram& h, const CodeLengths& lengths) {
    // Each of the four streams rounds up to a byte: at most (bits + 4 * 7) / 8 bytes.
    uint64_t bits = 0;
    for (int s = 0; s < 256; ++s) bits += static_cast<uint64_t>(h.count[s]) * lengths.bits[s];
    return kHeaderBytes + static_cast<size_t>((bits + 28) / 8);
}

size_t encode_bound(size_t n) { return kHeaderBytes + n / 8 * kMaxBits + kMaxBits + 4 + kEncodeSlack; }

size_t encode(ByteSpan in, const CodeLengths& lengths, uint8_t* out) {
    for (size_t k = 0; k < kLengthBytes; ++k)
        out[k] = static_cast<uint8_t>(lengths.bits[2 * k] | lengths.bits[2 * k + 1] << 4);
    const auto enc = canonical_codes(lengths.bits);
    const size_t n = in.size(), q = n / 4;
    uint8_t* p = out + kHeaderBytes;
    for (int k = 0; k < 4; ++k) {
        const size_t size = encode_stream(in.data() + k * q, k < 3 ? q : n - 3 * q, enc.data(), p);
        if (k < 3) {
            const uint32_t size32 = static_cast<uint32_t>(size);
            std::memcpy(out + kLengthBytes + 4 * k, &size32, 4);
        }
        p += size;
    }
    return static_cast<size_t>(p - out);
}

void decode(ByteSpan in, uint8_t* out, size_t out_size) {
    if (in.size() < kHeaderBytes) throw Error("huffman: stream shorter than its header");
    uint16_t table[kKraftTotal];
    read_table(in, table);
    // Stream sizes, checked against what is there before any is read.
    Reader r[4] = {{nullptr, nullptr}, {nullptr, nullptr}, {nullptr, nullptr}, {nullptr, nullptr}};
    const uint8_t* p = in.data() + kHeaderBytes;
    const uint8_t* const end = in.data() + in.size();
    for (int k = 0; k < 4; ++k) {
        const size_t left = static_cast<size_t>(end - p);
        const size_t size = k < 3 ? load32(in.data() + kLengthBytes + 4 * k) : left;
        if (size > left) throw Error("huffman: stream size past the end of the block");
        r[k].p = p;
        r[k].end = p + size;
        p += size;
    }
    const size_t q = out_size / 4;
    uint8_t* dst[4] = {out, out + q, out + 2 * q, out + 3 * q};
    const size_t i = decode_fast_loop(r, table, dst, q);
    for (int k = 0; k < 4; ++k) {
        const size_t len = k < 3 ? q : out_size - 3 * q;
        for (size_t j = i; j < len; ++j) dst[k][j] = decode_safe(r[k], table);
        // Every byte of the stream used, up to its padding bits.
        if (r[k].p != r[k].end || r[k].count >= 8) throw Error("huffman: stream " + std::to_string(k) + " has bytes left over");
    }
}

}  // namespace stz::huffman
