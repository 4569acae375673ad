// headdup: data whose heads come in groups of equal copies, e.g. the K/V of a GQA model
// written by code that stored one KV head per query head (2023 files: query heads 2i and
// 2i+1 hold the same K and V bytes). The input is a run of segments of `seg` bytes (one
// head of a K row; head_dim channel rows of a transposed V); in every group of `group`
// consecutive segments each equals the group's first. The plan picks seg and group from a
// sample (plan_repeats.cpp); every chunk is checked in full here, and a chunk where any copy
// differs (or that is not a whole number of groups) is copied unchanged.
// Output: the first segment of every group (1/group of the input), or the input unchanged
// (same size). Parameters: u32 seg, u8 group.
#include "base/limits.hpp"
#include "codec_impls.hpp"

namespace stz {

namespace {

constexpr uint8_t kMaxGroup = 64;

struct HeadGroups {
    uint64_t seg = 0, group = 0;
    uint64_t unit() const { return seg * group; }
};

HeadGroups read_groups(ByteSpan p) {
    require_params(p.size() == 5, "headdup", "expected 5 bytes");
    HeadGroups g{load_le<uint32_t>(p.data()), p[4]};
    // seg x group stays within a chunk: no product below can overflow.
    require_params(g.seg >= 1 && g.seg <= kMaxChunkRaw && g.group >= 2 && g.group <= kMaxGroup &&
                       g.unit() <= kMaxChunkRaw,
                   "headdup", "bad segment size or group");
    return g;
}

bool groups_repeat(ByteSpan in, const HeadGroups& g) {
    if (in.empty() || in.size() % g.unit()) return false;
    for (size_t u = 0; u < in.size(); u += g.unit())
        for (uint64_t k = 1; k < g.group; ++k)
            if (std::memcmp(in.data() + u, in.data() + u + k * g.seg, g.seg) != 0) return false;
    return true;
}

class HeadDedupCodec final : public Codec {
public:
    uint8_t id() const override { return 18; }
    std::string_view name() const override { return "headdup"; }
    // headdup:SEG:GROUP (the plan writes them; a user may too).
    Bytes make_params(const std::vector<std::string>& args, const DataShape&) const override {
        if (args.size() != 2) throw Error("headdup takes two arguments: segment bytes and group size (headdup:16:2)");
        Bytes p;
        append_le<uint32_t>(p, static_cast<uint32_t>(parse_int_arg(args[0], 1, static_cast<int>(kMaxChunkRaw / 2), "headdup")));
        p.push_back(static_cast<uint8_t>(parse_int_arg(args[1], 2, kMaxGroup, "headdup")));
        (void)read_groups(p);
        return p;
    }
    void check_params(ByteSpan p) const override { (void)read_groups(p); }
    std::string describe(ByteSpan p) const override {
        if (p.size() != 5) return "headdup";
        return "headdup:" + std::to_string(load_le<uint32_t>(p.data())) + ":" + std::to_string(p[4]);
    }
    // No mode byte: the sizes tell (a group has at least two copies), and the output stays a
    // whole number of rows for the next stage (celldedup, dedup).
    void encode(ByteSpan in, ByteSpan params, Bytes& out) const override {
        const HeadGroups g = read_groups(params);
        if (!groups_repeat(in, g)) return append_bytes(out, in);
        out.reserve(out.size() + in.size() / g.group);
        for (size_t u = 0; u < in.size(); u += g.unit()) out.insert(out.end(), in.begin() + u, in.begin() + u + g.seg);
    }
    void decode(ByteSpan in, ByteSpan params, size_t out_size, Bytes& out) const override {
        const HeadGroups g = read_groups(params);
        if (in.size() == out_size) return append_bytes(out, in);
        if (in.empty() || in.size() % g.seg || out_size % g.group || out_size / g.group != in.size())
            throw Error("headdup: bad block");
        out.reserve(out.size() + out_size);
        for (size_t s = 0; s < in.size(); s += g.seg)
            for (uint64_t k = 0; k < g.group; ++k) out.insert(out.end(), in.begin() + s, in.begin() + s + g.seg);
    }
    size_t max_encoded_size(size_t n) const override { return n; }
    uint64_t max_decoded_size(ByteSpan params, uint64_t encoded) const override {
        return saturating_mul_add(encoded, read_groups(params).group, 0);
    }
    // One segment of every group goes on: rows (of K) or channel rows (of transposed V)
    // shrink by the group; a shape the groups do not tile keeps its rows (and is copied).
    using Codec::output_shape;
    DataShape output_shape(const DataShape& in, ByteSpan params) const override {
        DataShape s = in;
        const HeadGroups g = read_groups(params);
        s.keep_bytes = 0;
        if (!in.transposed && in.row_bytes) s.row_bytes = in.row_bytes % g.unit() == 0 ? in.row_bytes / g.group : 0;
        return s;
    }
    std::vector<std::string> sample_specs() const override { return {"headdup:16:2", "headdup:2:4"}; }
};

}  // namespace

std::unique_ptr<Codec> make_head_dedup_codec() { return std::make_unique<HeadDedupCodec>(); }

}  // namespace stz
