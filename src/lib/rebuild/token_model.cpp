#include "token_model.hpp"

#include <algorithm>
#include <unordered_map>

#include "codecs/varint.hpp"
#include "base/hashing.hpp"
#include "sections/types.hpp"

namespace stz {

namespace {

struct CellMeta {
    int32_t pos = 0;
    std::vector<int32_t> seqs;
};

// Cells of a mainline `cells` section with a per-cell extension of `ext` bytes, or nullopt.
std::optional<std::vector<CellMeta>> parse_cells(ByteSpan d, uint32_t ext) {
    if (d.size() < 12) return std::nullopt;
    const uint32_t count = load_le<uint32_t>(d.data());
    if (count > (d.size() - 12) / (8 + ext)) return std::nullopt;
    std::vector<CellMeta> cells(count);
    size_t at = 4;
    for (CellMeta& c : cells) {
        if (d.size() - at < 8 + ext) return std::nullopt;
        c.pos = load_le<int32_t>(d.data() + at);
        const uint32_t n_seq = load_le<uint32_t>(d.data() + at + 4);
        at += 8 + ext;
        if (n_seq > 256 || (d.size() - at) / 4 < n_seq) return std::nullopt;
        for (uint32_t k = 0; k < n_seq; ++k, at += 4) c.seqs.push_back(load_le<int32_t>(d.data() + at));
    }
    if (d.size() - at != 8) return std::nullopt;  // u32 v_trans, u32 n_layer
    return cells;
}

}  // namespace

std::vector<uint64_t> token_cells(ByteSpan cells_section, uint64_t n_tokens) {
    std::optional<std::vector<CellMeta>> cells;
    for (uint32_t ext : {0u, 8u, 12u})
        if ((cells = parse_cells(cells_section, ext))) break;
    if (!cells || n_tokens == 0) return {};
    // The sequence holding most of the positions 0 .. n_tokens - 1 (the token list is one
    // sequence's); ties go to the lowest id.
    std::unordered_map<int32_t, uint64_t> covered;
    for (const CellMeta& c : *cells)
        if (c.pos >= 0 && uint64_t(c.pos) < n_tokens)
            for (int32_t s : c.seqs) ++covered[s];
    std::optional<int32_t> best;
    uint64_t best_n = 0;
    for (const auto& [s, n] : covered)
        if (!best || n > best_n || (n == best_n && s < *best)) best = s, best_n = n;
    if (!best) return {};
    std::vector<uint64_t> out(n_tokens, kNoTokenCell);
    for (uint64_t i = 0; i < cells->size(); ++i) {
        const CellMeta& c = (*cells)[i];
        if (c.pos >= 0 && uint64_t(c.pos) < n_tokens && out[c.pos] == kNoTokenCell &&
            std::find(c.seqs.begin(), c.seqs.end(), *best) != c.seqs.end())
            out[c.pos] = i;
    }
    return out;
}

std::vector<TokenCellRun> token_cell_runs(const std::vector<uint64_t>& cells) {
    std::vector<TokenCellRun> runs;
    for (size_t i = 0; i < cells.size();) {
        TokenCellRun r;
        r.first = cells[i];
        size_t j = i + 1;
        if (r.first == kNoTokenCell) {
            while (j < cells.size() && cells[j] == kNoTokenCell) ++j;
        } else if (j < cells.size() && cells[j] != kNoTokenCell) {
            r.stride = int64_t(cells[j] - r.first);
            while (j < cells.size() && cells[j] != kNoTokenCell && int64_t(cells[j] - cells[j - 1]) == r.stride) ++j;
        }
        r.count = j - i;
        runs.push_back(r);
        i = j;
    }
    return runs;
}

namespace {

// A position whose key comes from REF: its cell there.
struct KeyedPosition {
    uint32_t ref_group = 0;
    uint64_t ref_cell = 0, position = 0;
};

// Where the cells of positions [first, first + count) come from in REF (positions whose cell
// is new are left out), in REF order.
std::vector<KeyedPosition> keyed_positions(const PatchMap& m, const PatchTokenModel& t, const std::vector<uint64_t>& starts,
                                           uint64_t first, uint64_t count) {
    const PatchGroup& g = m.groups[t.group];
    std::vector<KeyedPosition> out;
    uint64_t run_start = 0;  // position of the run's first token
    for (const TokenCellRun& r : t.cells) {
        const uint64_t lo = std::max(first, run_start), hi = std::min(first + count, run_start + r.count);
        for (uint64_t position = lo; r.first != kNoTokenCell && position < hi; ++position) {
            const uint64_t cell = r.first + uint64_t(r.stride) * (position - run_start);  // inside the group (decode_patch_map)
            const size_t k = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), cell) - starts.begin()) - 1;
            const PatchRun& run = g.runs[k];
            if (run.ref_group) out.push_back({*run.ref_group, run.ref_first + (cell - starts[k]), position});
        }
        run_start += r.count;
        if (run_start >= first + count) break;
    }
    std::sort(out.begin(), out.end(), [](const KeyedPosition& a, const KeyedPosition& b) {
        return a.ref_group != b.ref_group ? a.ref_group < b.ref_group : a.ref_cell < b.ref_cell;
    });
    return out;
}

constexpr uint64_t kKeyBufferBytes = 64u << 20, kKeyWindowBytes = 256u << 10, kKeyBand = 64;

TokenKey fold(const TokenKey& acc, const uint8_t* d, size_t n) {
    XXH128_hash_t h = XXH3_128bits_withSeed(d, n, acc.lo ^ (acc.hi * 0x9E3779B97F4A7C15ull));
    return {h.low64, h.high64};
}

// Reads the pieces of positions [a, b) (sorted by REF cell, one REF group) in channels
// [c0, c1) of one part into buf (position-major, band × piece bytes each), window by window.
void read_band(InputSource& ref, const PatchRefPart& rp, const PatchPart& p, const std::vector<KeyedPosition>& pos,
               size_t a, size_t b, uint64_t c0, uint64_t c1, Bytes& buf, Bytes& window, uint64_t& budget) {
    const uint64_t piece = p.piece_bytes, stride = p.transposed ? piece : rp.row_bytes, band = c1 - c0;
    auto spend = [&](uint64_t n) {
        if (n > budget) throw DataError("patch map: token keys read too much of the reference file", 16);
        budget -= n;
    };
    for (uint64_t ch = c0; ch < c1; ++ch)
        for (size_t w = a; w < b;) {
            const uint64_t first = pos[w].ref_cell;
            size_t e = w + 1;
            // Cells within one window of the first (all of them when a crafted REF row size is 0).
            const uint64_t reach = stride == 0 ? UINT64_MAX : piece >= kKeyWindowBytes ? 0 : (kKeyWindowBytes - piece) / stride;
            while (e < b && pos[e].ref_cell - first <= reach) ++e;
            const uint64_t span = (pos[e - 1].ref_cell - first) * stride + piece;
            // Offsets from the map: checked before use (an overflow lands past the end).
            uint64_t off = rp.offset, x = 0;
            bool bad = __builtin_mul_overflow(ch, rp.row_bytes, &x) || __builtin_add_overflow(off, x, &off) ||
                       __builtin_mul_overflow(first, stride, &x) || __builtin_add_overflow(off, x, &off);
            if (bad || off > ref.size() || span > ref.size() - off)
                throw DataError("patch map: token key outside the reference file", 16);
            spend(span + (e - w) * piece);
            window.resize(span);
            ref.read_at(off, window.data(), span);
            for (size_t k = w; k < e; ++k)
                std::memcpy(buf.data() + ((k - a) * band + (ch - c0)) * piece, window.data() + (pos[k].ref_cell - first) * stride,
                            piece);
            w = e;
        }
}

}  // namespace

TokenKeys::TokenKeys(const PatchMap& m, const PatchTokenModel& t, InputSource& ref)
    : m_(m), t_(t), ref_(ref), budget_(kTokenKeyReadFactor * ref.size() + (64u << 20)) {
    uint64_t at = 0;
    for (const PatchRun& r : m.groups[t.group].runs) starts_.push_back(at), at += r.count;
}

std::optional<TokenKey> TokenKeys::operator()(uint64_t position) {
    if (position < first_ || position >= first_ + keys_.size()) load(position / kTokenKeyChunk * kTokenKeyChunk);
    return keys_[position - first_];
}

void TokenKeys::load(uint64_t first) {
    const PatchGroup& g = m_.groups[t_.group];
    const uint64_t count = std::min(kTokenKeyChunk, size() - first);
    const std::vector<KeyedPosition> pos = keyed_positions(m_, t_, starts_, first, count);
    std::vector<TokenKey> acc(pos.size());
    // A band: the pieces of up to kKeyBand consecutive channels of a cell, hashed together.
    uint64_t band_bytes = 1;
    for (const PatchPart& p : g.parts) band_bytes = std::max(band_bytes, std::min(p.channels, kKeyBand) * p.piece_bytes);
    const uint64_t per_chunk = std::max<uint64_t>(1, kKeyBufferBytes / band_bytes);
    Bytes buf, window;
    for (size_t a = 0; a < pos.size();) {
        size_t b = a;  // positions of one REF group, as many as the buffer holds a band of
        while (b < pos.size() && pos[b].ref_group == pos[a].ref_group && b - a < per_chunk) ++b;
        const PatchRefGroup& rg = m_.ref_groups[pos[a].ref_group];
        for (size_t k = 0; k < g.parts.size(); ++k) {
            const PatchPart& p = g.parts[k];
            for (uint64_t c0 = 0; c0 < p.channels; c0 += kKeyBand) {
                const uint64_t c1 = std::min(p.channels, c0 + kKeyBand), n = (c1 - c0) * p.piece_bytes;
                // Pieces come from REF: a buffer larger than REF allows is a crafted map.
                uint64_t bytes = 0;
                if (p.piece_bytes > ref_.size() || __builtin_mul_overflow(uint64_t(b - a), n, &bytes) || bytes > budget_)
                    throw DataError("patch map: token keys read too much of the reference file", 16);
                buf.resize(bytes);
                read_band(ref_, rg.parts[k], p, pos, a, b, c0, c1, buf, window, budget_);
                for (size_t i = a; i < b; ++i) acc[i] = fold(acc[i], buf.data() + (i - a) * n, n);
            }
        }
        a = b;
    }
    first_ = first;
    keys_.assign(count, std::nullopt);
    for (size_t i = 0; i < pos.size(); ++i) keys_[pos[i].position - first] = acc[i];
}

namespace {

// The token last seen with each key: what both sides predict.
class Predictor {
public:
    std::optional<uint32_t> predict(const std::optional<TokenKey>& k) const {
        if (!k) return std::nullopt;
        auto it = last_.find(*k);
        return it == last_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
    }
    void learn(const std::optional<TokenKey>& k, uint32_t token) {
        if (k) last_[*k] = token;
    }

private:
    std::unordered_map<TokenKey, uint32_t, Hash128Hasher> last_;
};

}  // namespace

Bytes predict_tokens(const std::vector<uint32_t>& tokens, uint64_t prefix, const KeyOf& key, uint64_t* predicted) {
    Predictor p;
    for (uint64_t i = 0; i < prefix; ++i) p.learn(key(i), tokens[i]);
    std::vector<uint64_t> wrong;
    std::vector<uint32_t> stored;
    uint64_t hits = 0;
    for (uint64_t i = prefix; i < tokens.size(); ++i) {
        const std::optional<TokenKey> k = key(i);
        const std::optional<uint32_t> guess = p.predict(k);
        if (guess && *guess == tokens[i]) {
            ++hits;
        } else {
            if (guess) wrong.push_back(i - prefix);
            stored.push_back(tokens[i]);
        }
        p.learn(k, tokens[i]);
    }
    Bytes out;
    put_varint(out, wrong.size());
    uint64_t next = 0;
    for (uint64_t w : wrong) put_varint(out, w - next), next = w + 1;
    for (uint32_t t : stored) append_le<uint32_t>(out, t);
    if (predicted) *predicted = hits;
    return out;
}

size_t restore_tokens(ByteSpan in, uint64_t positions, const KeyOf& key, std::vector<uint32_t>& tokens, uint64_t base) {
    size_t at = 0;
    auto varint = [&](const char* what) {
        try {
            return get_varint(in, at, "token model");
        } catch (const Error&) {
            throw DataError(std::string("patch tokens: bad ") + what, base + at);
        }
    };
    Predictor p;
    const uint64_t prefix = tokens.size(), tail = positions - prefix;
    for (uint64_t i = 0; i < prefix; ++i) p.learn(key(i), tokens[i]);
    const uint64_t n_wrong = varint("count");
    if (n_wrong > tail || n_wrong > in.size()) throw DataError("patch tokens: more wrong predictions than tokens", base);
    std::vector<uint64_t> wrong;  // positions in the tail, increasing
    for (uint64_t k = 0, from = 0; k < n_wrong; ++k) {
        const uint64_t gap = varint("position");
        if (gap >= tail - from) throw DataError("patch tokens: wrong prediction past the tokens", base + at);
        wrong.push_back(from + gap);
        from += gap + 1;
    }
    size_t next = 0;
    for (uint64_t i = 0; i < tail; ++i) {
        const std::optional<TokenKey> k = key(prefix + i);
        const std::optional<uint32_t> guess = p.predict(k);
        uint32_t token = 0;
        const bool is_wrong = next < wrong.size() && wrong[next] == i;
        if (guess && !is_wrong) {
            token = *guess;
        } else {
            if (is_wrong) {
                if (!guess) throw DataError("patch tokens: a wrong prediction where none is made", base + at);
                ++next;
            }
            if (in.size() - at < 4) throw DataError("patch tokens: truncated", base + at);
            token = load_le<uint32_t>(in.data() + at);
            at += 4;
        }
        p.learn(k, token);
        tokens.push_back(token);
    }
    return at;
}

void restore_meta_tokens(const PatchMap& m, InputSource& ref, Bytes& meta) {
    const PatchTokenModel& t = *m.tokens;
    if (t.ref_offset > ref.size() || t.prefix > (ref.size() - t.ref_offset) / 4)
        throw DataError("patch map: token prefix outside the reference file", 16);
    std::vector<uint32_t> tokens(t.prefix);
    Bytes prefix(t.prefix * 4);
    ref.read_at(t.ref_offset, prefix.data(), prefix.size());
    for (uint64_t i = 0; i < t.prefix; ++i) tokens[i] = load_le<uint32_t>(prefix.data() + 4 * i);
    TokenKeys keys(m, t, ref);
    const size_t used = restore_tokens(ByteSpan(meta).subspan(t.meta_offset), keys.size(), std::ref(keys), tokens, t.meta_offset);
    if (meta.size() - used > kMaxPatchMetaBytes - t.tail * 4) throw DataError("patch map: meta too large", 16);
    Bytes tail;
    tail.reserve(t.tail * 4);
    for (uint64_t i = t.prefix; i < tokens.size(); ++i) append_le<uint32_t>(tail, tokens[i]);
    const auto at = meta.begin() + static_cast<ptrdiff_t>(t.meta_offset);
    meta.erase(at, at + static_cast<ptrdiff_t>(used));
    meta.insert(meta.begin() + static_cast<ptrdiff_t>(t.meta_offset), tail.begin(), tail.end());
}

}  // namespace stz
