// The block layout shared by the dedup codecs (dedup: rows, celldedup: columns): the unique
// units, then the references {varint unit-index delta >= 1, varint unique index}, their length
// (u32) and a mode byte last (0 = the input copied unchanged, 1 = deduplicated).
#pragma once
#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "codec.hpp"
#include "varint.hpp"

namespace stz {

// Writes the references as units are classified in order.
class ReferenceWriter {
public:
    void add(uint64_t unit, uint64_t unique_index) {
        put_varint(refs_, unit - last_);
        put_varint(refs_, unique_index);
        last_ = unit;
    }
    bool empty() const { return refs_.empty(); }
    // Appends the references, their length and mode byte 1 after the unique units in `out`.
    void finish(Bytes& out) const {
        append_bytes(out, refs_);
        append_le<uint32_t>(out, static_cast<uint32_t>(refs_.size()));
        out.push_back(1);
    }

private:
    Bytes refs_;
    uint64_t last_ = 0;
};

// The unique units seen so far, found by a 64-bit hash of their bytes: open addressing with
// linear probing in a table of at least twice the units' slots (a node-based multimap
// allocated a node per unit, which cost more than the hashing). Units are numbered in the
// order they were added. Work per unit is bounded whatever the hashes: a unit whose probe
// finds no free slot within kMaxProbes is numbered but not indexed (a later repeat of it is
// then missed, which only costs size), so crafted hashes cannot make a block quadratic.
class UniqueIndex {
public:
    explicit UniqueIndex(size_t max_units) {
        const size_t slots = std::bit_ceil(std::max<size_t>(2 * max_units, 16));
        mask_ = slots - 1;
        shift_ = 64 - std::countr_zero(slots);
        slot_.assign(slots, kEmpty);
        hash_.reserve(max_units);  // most units are unique: no regrowth copies
    }
    // The first unique unit u with hash h for which same(u) holds, comparing no more than
    // max_tries units of that hash; none: h is added as the next unit and -1 returned.
    template <class Same>
    int64_t find_or_add(uint64_t h, Same&& same, int max_tries = INT32_MAX) {
        const auto next = static_cast<uint32_t>(hash_.size());
        // The table index from every bit of h (Fibonacci hashing): the dedup hashes' low bits
        // can be constant (values whose low mantissa bits a lossy mode zeroed).
        size_t i = static_cast<size_t>((h * 0x9E3779B97F4A7C15ull) >> shift_);
        int tries = 0;
        for (size_t probe = 0; probe < kMaxProbes; ++probe, i = (i + 1) & mask_) {
            const uint32_t u = slot_[i];
            if (u == kEmpty) {
                slot_[i] = next;
                break;
            }
            if (hash_[u] == h && tries < max_tries) {
                ++tries;
                if (same(u)) return u;
            }
        }
        hash_.push_back(h);
        return -1;
    }

private:
    static constexpr uint32_t kEmpty = UINT32_MAX;
    static constexpr size_t kMaxProbes = 64;
    size_t mask_ = 0;
    int shift_ = 0;
    std::vector<uint32_t> slot_;  // unique unit index, or kEmpty
    std::vector<uint64_t> hash_;  // per unique unit
};

inline void copy_unchanged(ByteSpan in, Bytes& out) {
    append_bytes(out, in);
    out.push_back(0);
}
// Codec::decode_in_place of a block copy_unchanged wrote: the mark cut off.
inline bool unchanged_in_place(Bytes& buf, size_t out_size) {
    if (buf.empty() || buf.back() != 0 || buf.size() - 1 != out_size) return false;
    buf.pop_back();
    return true;
}

// Reads the references lazily (no table per unit: memory stays what the block holds). For
// unit 0, 1, 2, ... in order, next() gives the unique unit it copies: a reference's, or the
// next unique one. References must name earlier unique units, in increasing unit order, and
// the counts must add up (finish()).
class ReferenceReader {
public:
    ReferenceReader(ByteSpan refs, uint64_t n_units, uint64_t n_unique, const char* codec, const char* unit)
        : refs_(refs), n_(n_units), n_unique_(n_unique), codec_(codec), unit_(unit) {
        read_ref();
    }
    uint64_t next() {
        if (at_ == next_ref_) {
            if (ref_ >= u_) fail("reference to a later " + unit_);
            ++at_;
            const uint64_t r = ref_;
            read_ref();
            return r;
        }
        if (u_ >= n_unique_) fail("too few unique " + unit_ + "s");
        ++at_;
        return u_++;
    }
    // The units from the current one on that copy consecutive unique units: a reference (one
    // unit), or the unique units up to the next reference or the end. Returns how many, and
    // the first unique unit they copy in `first`; the same units and checks as next() called
    // that many times. Not past the last unit.
    uint64_t next_run(uint64_t& first) {
        if (at_ == next_ref_) {
            first = next();
            return 1;
        }
        const uint64_t count = (next_ref_ == kNone ? n_ : next_ref_) - at_;
        if (count > n_unique_ - u_) fail("too few unique " + unit_ + "s");
        first = u_;
        u_ += count, at_ += count;
        return count;
    }
    void finish() const {
        if (at_ != n_ || u_ != n_unique_ || next_ref_ != kNone) fail(unit_ + " counts do not match");
    }

private:
    static constexpr uint64_t kNone = UINT64_MAX;
    [[noreturn]] void fail(const std::string& why) const { throw Error(codec_ + ": " + why); }
    void read_ref() {
        if (pos_ >= refs_.size()) {
            next_ref_ = kNone;
            return;
        }
        const uint64_t delta = get_varint(refs_, pos_, codec_.c_str());
        ref_ = get_varint(refs_, pos_, codec_.c_str());
        const uint64_t base = next_ref_ == kNone ? 0 : next_ref_;
        if (delta == 0 || delta >= n_ - base) fail("references out of order");
        next_ref_ = base + delta;
    }
    ByteSpan refs_;
    size_t pos_ = 0;
    uint64_t n_, n_unique_;
    std::string codec_, unit_;
    uint64_t at_ = 0, u_ = 0, ref_ = 0, next_ref_ = kNone;
};

}  // namespace stz
