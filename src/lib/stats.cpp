#include "stats.hpp"

#include <array>
#include <cmath>
#include <unordered_map>

namespace stz {

namespace {

double entropy_of(const std::array<uint64_t, 256>& h, uint64_t n) {
    double e = 0;
    for (uint64_t c : h)
        if (c) {
            double p = double(c) / n;
            e -= p * std::log2(p);
        }
    return e;
}

}  // namespace

SectionStats2 section_stats(InputSource& in, const Section& s, uint64_t budget) {
    SectionStats2 st;
    if (s.size == 0) return st;
    // Pieces: whole section if small, else 16 evenly spaced pieces.
    std::vector<std::pair<uint64_t, uint64_t>> pieces;
    if (s.size <= budget) pieces.push_back({s.offset, s.size});
    else {
        uint64_t piece = budget / 16;
        for (int i = 0; i < 16; ++i) pieces.push_back({s.offset + (s.size - piece) * i / 15, piece});
    }
    std::array<uint64_t, 256> h{};
    uint64_t zeros = 0;
    // Per-channel 16-bit histograms for f16/bf16 sections with a row structure: channel =
    // position within a row (row-major) or the row itself (transposed).
    const bool per_channel = (s.type == ElemType::F16 || s.type == ElemType::BF16) && s.rows && s.row_elems;
    std::unordered_map<uint64_t, std::unordered_map<uint16_t, uint32_t>> ch;
    Bytes buf;
    for (auto [off, len] : pieces) {
        if (per_channel) {  // keep element alignment
            uint64_t rel = (off - s.offset) & ~uint64_t(1);
            off = s.offset + rel;
            len &= ~uint64_t(1);
        }
        buf.resize(len);
        in.read_at(off, buf.data(), len);
        for (uint8_t b : buf) {
            ++h[b];
            zeros += b == 0;
        }
        st.sampled += len;
        if (per_channel) {
            uint64_t first = (off - s.offset) / 2;
            for (uint64_t i = 0; i + 1 < len; i += 2) {
                uint64_t e = first + i / 2;
                uint64_t c = s.transposed ? e / s.row_elems : e % s.row_elems;
                ++ch[c][load_le<uint16_t>(buf.data() + i)];
            }
        }
    }
    st.zero_fraction = double(zeros) / st.sampled;
    st.entropy_bits = entropy_of(h, st.sampled);
    if (per_channel) {
        double bits = 0;
        uint64_t total = 0;
        for (auto& [c, hist] : ch) {
            uint64_t n = 0;
            for (auto& [v, k] : hist) n += k;
            for (auto& [v, k] : hist) bits -= k * std::log2(double(k) / n);
            total += n;
        }
        st.channel_bound = total ? bits / total : 0;
    }
    return st;
}

}  // namespace stz
