#include "stats.hpp"

#include <array>
#include <cmath>

namespace stz {

namespace {

double entropy_of(const uint32_t* h, uint64_t n) {
    double e = 0;
    for (int i = 0; i < 256; ++i)
        if (h[i]) {
            double p = double(h[i]) / n;
            e -= p * std::log2(p);
        }
    return e;
}

bool float_rows(const Section& s) {
    return (s.type == ElemType::F16 || s.type == ElemType::BF16 || s.type == ElemType::F32) && s.rows && s.row_elems;
}

// Accumulates per-channel, per-byte histograms over [first_elem, first_elem + n) of a section.
class ChannelHistograms {
public:
    explicit ChannelHistograms(const Section& s)
        : s_(s), w_(elem_type_info(s.type).block_bytes), channels_(s.transposed ? s.rows : s.row_elems),
          h_(channels_ * w_ * 256, 0), n_(channels_, 0) {}
    void add(const uint8_t* data, uint64_t first_elem, uint64_t n) {
        for (uint64_t i = 0; i < n; ++i) {
            uint64_t e = first_elem + i;
            uint64_t c = s_.transposed ? e / s_.row_elems : e % s_.row_elems;
            uint32_t* h = &h_[c * w_ * 256];
            for (unsigned b = 0; b < w_; ++b) ++h[b * 256 + data[i * w_ + b]];
            ++n_[c];
        }
    }
    double bits_per_element() const {
        double bits = 0;
        uint64_t total = 0;
        for (uint64_t c = 0; c < channels_; ++c) {
            if (!n_[c]) continue;
            for (unsigned b = 0; b < w_; ++b) bits += n_[c] * entropy_of(&h_[(c * w_ + b) * 256], n_[c]);
            total += n_[c];
        }
        return total ? bits / total : 0;
    }

private:
    const Section& s_;
    unsigned w_;
    uint64_t channels_;
    std::vector<uint32_t> h_;
    std::vector<uint64_t> n_;
};

}  // namespace

ByteStats section_stats(InputSource& in, const Section& s, uint64_t budget) {
    ByteStats st;
    if (s.size == 0) return st;
    const bool per_channel = float_rows(s) && (s.transposed ? s.rows : s.row_elems) <= 65536;
    const uint64_t w = elem_type_info(s.type).block_bytes;
    std::vector<std::pair<uint64_t, uint64_t>> pieces;  // offset within the section, length
    if (s.size <= budget) pieces.push_back({0, s.size});
    else {
        uint64_t piece = budget / 16;
        for (int i = 0; i < 16; ++i) pieces.push_back({(s.size - piece) * i / 15, piece});
    }
    std::array<uint32_t, 256> h{};
    uint64_t zeros = 0;
    std::optional<ChannelHistograms> ch;
    if (per_channel) ch.emplace(s);
    Bytes buf;
    for (auto [rel, len] : pieces) {
        if (per_channel) rel -= rel % w, len -= len % w;  // keep element alignment
        buf.resize(len);
        in.read_at(s.offset + rel, buf.data(), len);
        for (uint8_t b : buf) ++h[b], zeros += b == 0;
        st.sampled += len;
        if (ch) ch->add(buf.data(), rel / w, len / w);
    }
    st.zero_fraction = double(zeros) / st.sampled;
    st.entropy_bits = entropy_of(h.data(), st.sampled);
    if (ch) st.channel_bound = ch->bits_per_element();
    return st;
}

double channel_bound_bits(InputSource& in, const Section& s) {
    if (!float_rows(s)) return 0;
    const uint64_t w = elem_type_info(s.type).block_bytes;
    ChannelHistograms ch(s);
    Bytes buf;
    for (uint64_t off = 0; off < s.size; off += buf.size()) {
        buf.resize(std::min<uint64_t>(s.size - off, (4u << 20) / w * w));
        in.read_at(s.offset + off, buf.data(), buf.size());
        ch.add(buf.data(), off / w, buf.size() / w);
    }
    return ch.bits_per_element();
}

}  // namespace stz
