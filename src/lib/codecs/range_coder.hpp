// Adaptive binary range coder (the carry-less scheme of LZMA), with 12-bit probabilities.
// Shared by the context-model codecs.
#pragma once
#include "base/bytes.hpp"

namespace stz {

inline constexpr uint32_t kProbBits = 12;
inline constexpr uint16_t kProbInit = 1u << (kProbBits - 1);

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
        while (range_ < (1u << 24)) {
            range_ <<= 8;
            shift_low();
        }
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
    void finish() {
        for (int i = 0; i < 5; ++i) shift_low();
    }

private:
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
        while (range_ < (1u << 24)) {  // a skewed probability can shrink the range by more than 2^8
            range_ <<= 8;
            code_ = (code_ << 8) | next();
        }
        return b;
    }
    unsigned byte(uint16_t* tree, unsigned rate) {
        unsigned node = 1;
        for (int i = 0; i < 8; ++i) node = (node << 1) | bit(tree[node], rate);
        return node & 0xFF;
    }
    bool overran() const { return pos_ > in_.size() + kFlushBytes; }

private:
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
