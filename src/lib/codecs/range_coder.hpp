// Adaptive binary range coder (the carry-less scheme of LZMA), with 12-bit probabilities.
// Shared by the context-model codecs.
#pragma once
#include "base/bytes.hpp"

namespace stz {

inline constexpr uint32_t kProbBits = 12;
inline constexpr uint16_t kProbInit = 1u << (kProbBits - 1);

// `v`, hidden from the optimiser: masks made from a comparison stay masks (GCC turns them
// back into the branch otherwise).
inline uint32_t opaque(uint32_t v) {
#if defined(__GNUC__)
    __asm__("" : "+r"(v));
#endif
    return v;
}

// The adapted probability after a 0 (mask 0) or a 1 (mask all ones), as bit() adapts it.
inline uint16_t select_prob(uint16_t p, uint32_t mask, unsigned rate) {
    const uint32_t after0 = p + (((1u << kProbBits) - p) >> rate), after1 = p - (p >> rate);
    return static_cast<uint16_t>(after0 + ((after1 - after0) & mask));
}

class RangeEncoder {
public:
    explicit RangeEncoder(Bytes& out) : out_(out) {}
    void bit(uint16_t& p, unsigned b, unsigned rate) {
        uint32_t bound = (range_ >> kProbBits) * p;
        if (!b) {
            range_ = bound;
            p += ((1u << kProbBits) - p) >> rate;
        } else {
            low_ += bound;
            range_ -= bound;
            p -= p >> rate;
        }
        normalize();
    }
    // bit() computed without a branch on the bit (the same arithmetic, by masks): for
    // decisions close to a coin toss (a tree's levels), where a mispredicted branch costs more.
    void bit_unpredictable(uint16_t& p, unsigned b, unsigned rate) {
        const uint32_t bound = (range_ >> kProbBits) * p, mask = opaque(0u - b);
        low_ += bound & mask;
        range_ = bound + ((range_ - 2 * bound) & mask);
        p = select_prob(p, mask, rate);
        normalize();
    }
    // A byte through a binary tree of 255 probabilities (MSB first).
    void byte(uint16_t* tree, unsigned sym, unsigned rate) {
        unsigned node = 1;
        for (int i = 7; i >= 0; --i) {
            unsigned b = (sym >> i) & 1;
            bit(tree[node], b, rate);
            node = (node << 1) | b;
        }
    }
    // `count` bits of `v` (MSB first), each at probability one half: bits with nothing to
    // learn (the low bits of a value seen once) cost exactly one bit and no model.
    void direct_bits(uint32_t v, unsigned count) {
        while (count--) {
            range_ >>= 1;
            if ((v >> count) & 1) low_ += range_;
            normalize();
        }
    }
    void finish() {
        for (int i = 0; i < 5; ++i) shift_low();
    }

private:
    // Bytes out until the range is back above 2^24 (a skewed probability can shrink it by more
    // than 2^8 in one decision).
    void normalize() {
        while (range_ < (1u << 24)) {
            range_ <<= 8;
            shift_low();
        }
    }
    void shift_low() {
        if (static_cast<uint32_t>(low_) < 0xFF000000u || (low_ >> 32) != 0) {
            uint8_t carry = static_cast<uint8_t>(low_ >> 32);
            uint8_t temp = cache_;
            do {
                out_.push_back(static_cast<uint8_t>(temp + carry));
                temp = 0xFF;
            } while (--cache_size_ != 0);
            cache_ = static_cast<uint8_t>(low_ >> 24);
        }
        ++cache_size_;
        low_ = (low_ & 0x00FFFFFFu) << 8;
    }
    Bytes& out_;
    uint64_t low_ = 0;
    uint32_t range_ = 0xFFFFFFFFu;
    uint8_t cache_ = 0;
    uint64_t cache_size_ = 1;
};

// Reads up to kFlushBytes past the end of its input as zeros (the encoder leaves its last
// bytes implicit); reading further means the stream is corrupt: it throws at once, so a
// few bytes cannot make a decoder run on through a whole declared output.
class RangeDecoder {
public:
    static constexpr size_t kFlushBytes = 4;
    explicit RangeDecoder(ByteSpan in) : in_(in) {
        for (int i = 0; i < 5; ++i) code_ = (code_ << 8) | next();
    }
    unsigned bit(uint16_t& p, unsigned rate) {
        uint32_t bound = (range_ >> kProbBits) * p;
        unsigned b;
        if (code_ < bound) {
            range_ = bound;
            p += ((1u << kProbBits) - p) >> rate;
            b = 0;
        } else {
            code_ -= bound;
            range_ -= bound;
            p -= p >> rate;
            b = 1;
        }
        normalize();
        return b;
    }
    unsigned bit_unpredictable(uint16_t& p, unsigned rate) {
        const uint32_t bound = (range_ >> kProbBits) * p;
        const unsigned b = code_ >= bound;
        const uint32_t mask = opaque(0u - b);
        code_ -= bound & mask;
        range_ = bound + ((range_ - 2 * bound) & mask);
        p = select_prob(p, mask, rate);
        normalize();
        return b;
    }
    unsigned byte(uint16_t* tree, unsigned rate) {
        unsigned node = 1;
        for (int i = 0; i < 8; ++i) node = (node << 1) | bit(tree[node], rate);
        return node & 0xFF;
    }
    uint32_t direct_bits(unsigned count) {
        uint32_t v = 0;
        while (count--) {
            range_ >>= 1;
            const unsigned b = code_ >= range_;
            if (b) code_ -= range_;
            v = (v << 1) | b;
            normalize();
        }
        return v;
    }
    bool overran() const { return pos_ > in_.size() + kFlushBytes; }

private:
    // Bytes in until the range is back above 2^24, as the encoder's normalize writes them.
    void normalize() {
        while (range_ < (1u << 24)) {
            range_ <<= 8;
            code_ = (code_ << 8) | next();
        }
    }
    uint8_t next() {
        if (pos_ < in_.size()) return in_[pos_++];
        if (++pos_ > in_.size() + kFlushBytes) throw Error("range coder: read past the end of its input (corrupt stream)");
        return 0;
    }
    ByteSpan in_;
    size_t pos_ = 0;
    uint32_t code_ = 0;
    uint32_t range_ = 0xFFFFFFFFu;
};

}  // namespace stz
