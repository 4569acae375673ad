#include "head_repeats.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/bytes.hpp"
#include "base/limits.hpp"

namespace stz {

namespace {

// Work bounds: the check reads at most this much per section and looks at this many
// sections (a hostile file may have a million), so it stays a small fraction of a read.
constexpr size_t kMaxProbedSections = 4096;
constexpr uint64_t kMaxProbedBytes = 16u << 20;  // read in all
constexpr uint64_t kMinSectionBytes = 1024;
constexpr unsigned kSampleRows = 8;
constexpr uint64_t kMaxSampleRowBytes = 64 << 10;
constexpr uint64_t kMaxProbedChannelRows = 16384;
constexpr uint64_t kChannelPrefixBytes = 64;
constexpr unsigned kMaxGroup = 8;

struct Repeat {
    uint64_t seg = 0;  // in units (elements of a K row, channel rows of a transposed V)
    unsigned group = 0;
};

bool constant(const uint8_t* p, size_t n) { return std::all_of(p, p + n, [&](uint8_t b) { return b == p[0]; }); }

// `lines` rows of `width` units of `unit` bytes (stride `stride`); the largest group (then the
// smallest segment) such that in every line each group of segments equals its first, with at
// least two lines that are not constant (zero rows match anything).
template <typename Equal>
Repeat best_repeat(uint64_t width, Equal&& groups_equal) {
    for (unsigned g = kMaxGroup; g >= 2; --g)
        for (uint64_t seg = 1; seg * g <= width; ++seg)
            if (width % (seg * g) == 0 && groups_equal(seg, g)) return {seg, g};
    return {};
}

// K (row-major): kSampleRows rows spread over the section; units are elements (or blocks).
Repeat probe_rows(InputSource& in, const Section& s) {
    const uint64_t R = s.row_bytes(), elt = elem_type_info(s.type).block_bytes;
    if (!R || R > kMaxSampleRowBytes || s.rows < 2 || R % elt || s.shape().keep_bytes) return {};
    const unsigned n = static_cast<unsigned>(std::min<uint64_t>(kSampleRows, s.rows));
    Bytes rows(n * R);
    unsigned informative = 0;
    for (unsigned k = 0; k < n; ++k) {
        const uint64_t r = (s.rows - 1) * k / (n - 1);
        in.read_at(s.offset + r * R, rows.data() + k * R, R);
        informative += !constant(rows.data() + k * R, R);
    }
    if (informative < 2) return {};
    Repeat rep = best_repeat(R / elt, [&](uint64_t seg, unsigned g) {
        const uint64_t sb = seg * elt;
        for (uint64_t u = 0; u < n * R; u += sb * g)
            for (unsigned j = 1; j < g; ++j)
                if (std::memcmp(rows.data() + u, rows.data() + u + j * sb, sb) != 0) return false;
        return true;
    });
    rep.seg *= elt;
    return rep;
}

// Transposed V: rows are channels; the first bytes of every channel row; units are channel rows.
// A row's prefix is read when a comparison first needs it: a section without repeats is
// ruled out by a comparison or two per candidate segment (a dozen reads, not one per
// channel row: 32 layers of 1024 channels were 32,768 reads, a fifth of a 256 MB file's
// compression); one with repeats has every row read, as its check compares them all.
Repeat probe_channels(InputSource& in, const Section& s) {
    const uint64_t R = s.row_bytes();
    if (!R || s.rows < 2 || s.rows > kMaxProbedChannelRows) return {};
    const uint64_t take = std::min(R, kChannelPrefixBytes);
    Bytes pre(s.rows * take);
    std::vector<bool> have(s.rows, false);
    const auto prefix = [&](uint64_t r) {
        uint8_t* p = pre.data() + r * take;
        if (!have[r]) in.read_at(s.offset + r * R, p, take), have[r] = true;
        return p;
    };
    Repeat rep = best_repeat(s.rows, [&](uint64_t seg, unsigned g) {
        for (uint64_t u = 0; u < s.rows; u += seg * g)
            for (unsigned j = 1; j < g; ++j)
                for (uint64_t k = 0; k < seg; ++k)
                    if (std::memcmp(prefix(u + k), prefix(u + j * seg + k), take) != 0) return false;
        return true;
    });
    if (!rep.group) return {};
    // Every row was read (the groups tile the rows): at least two must say something.
    unsigned informative = 0;
    for (uint64_t r = 0; r < s.rows && informative < 2; ++r) informative += !constant(prefix(r), take);
    if (informative < 2) return {};
    // A segment of the data headdup sees: seg channel rows, as trim left them.
    const uint64_t kept = s.shape().keep_bytes ? s.shape().keep_bytes : R;
    rep.seg *= kept;
    return rep;
}

}  // namespace

std::optional<ParsedFile> find_head_repeats(InputSource& in, const ParsedFile& parsed) {
    std::optional<ParsedFile> out;
    size_t probed = 0;
    uint64_t read = 0;
    for (size_t i = 0; i < parsed.sections.size() && probed < kMaxProbedSections && read < kMaxProbedBytes; ++i) {
        const Section& s = parsed.sections[i];
        if ((s.kind != SectionKind::KvKey && s.kind != SectionKind::KvValue) || s.size < kMinSectionBytes ||
            elem_type_info(s.type).kind == ElemKind::Bytes || !s.row_bytes() || s.rows * s.row_bytes() != s.size)
            continue;
        ++probed;
        read += s.transposed ? std::min(s.rows, kMaxProbedChannelRows) * kChannelPrefixBytes
                             : kSampleRows * std::min(s.row_bytes(), kMaxSampleRowBytes);
        const Repeat rep = s.transposed ? probe_channels(in, s) : probe_rows(in, s);
        // headdup takes groups of at most one chunk (a larger one could never be checked).
        if (!rep.group || rep.seg * rep.group > kMaxChunkRaw) continue;
        if (!out) out = parsed;
        out->sections[i].repeat_seg = static_cast<uint32_t>(rep.seg);
        out->sections[i].repeat_group = static_cast<uint8_t>(rep.group);
    }
    return out;
}

}  // namespace stz
