// Rebuilding a member of a set in file order (pack_records.hpp), for checks that hash it
// rather than write it: the member is produced window by window. The literal stream is
// decoded once, into the gaps of the current window; when it reaches past the window, the
// window's K/V bytes are gathered from the blocks (each block read once per batch of runs,
// through the cache) and the window is passed on. Memory: one window, the cache, one block.
#include <algorithm>
#include <cstring>
#include <optional>

#include "pack_records.hpp"

namespace stz {

namespace {

// A K/V section of the member: part `part` of group `group`, `bytes` at `offset`.
struct SectionRef {
    uint64_t offset, bytes;
    size_t group, part;
};

// A run's cells [from, to) of channel `ch` of one section, taken from the run's block.
struct Slice {
    uint64_t block;
    size_t section, run;
    uint64_t ch, from, to;
};

constexpr size_t kMaxSlicesPerBatch = 1 << 16;  // bounds the slice list whatever the runs look like

class WindowBuilder final : public OutputSink {
public:
    WindowBuilder(InputSource& set, const MemberRecord& m, OutputSink& out, const DecompressOptions& dopt, BlockCache& cache,
                  uint64_t window)
        : set_(set), m_(m), out_(out), dopt_(dopt), cache_(cache), window_(std::max<uint64_t>(window, 1 << 16)) {
        for (size_t gi = 0; gi < m.groups.size(); ++gi) {
            const MemberGroup& g = m.groups[gi];
            for (size_t j = 0; j < g.offsets.size(); ++j) sections_.push_back({g.offsets[j], g.n_cells * g.layout[j].cell_bytes, gi, j});
            std::vector<uint64_t> starts;  // first cell of each run in the group
            uint64_t pos = 0;
            for (const PackRun& r : g.runs) starts.push_back(pos), pos += r.count;
            run_starts_.push_back(std::move(starts));
        }
        // decode_member checked that the sections lie inside the member without overlapping.
        std::sort(sections_.begin(), sections_.end(), [](const SectionRef& a, const SectionRef& b) { return a.offset < b.offset; });
        uint64_t pos = 0;
        for (const SectionRef& s : sections_) {
            if (s.offset > pos) gaps_.push_back({pos, s.offset - pos});
            pos = s.offset + s.bytes;
        }
        if (m.size > pos) gaps_.push_back({pos, m.size - pos});
        start_window(0);
    }

    // Literal bytes, in file order, into the gaps.
    void write(const uint8_t* d, size_t n) override {
        while (n) {
            while (gi_ < gaps_.size() && used_ == gaps_[gi_].second) ++gi_, used_ = 0;
            if (gi_ == gaps_.size()) throw DataError("the literal stream holds more bytes than the member's gaps", m_.literal_offset);
            const uint64_t at = gaps_[gi_].first + used_;
            while (at >= w1_) finish_window();
            const size_t take = static_cast<size_t>(std::min<uint64_t>({n, gaps_[gi_].second - used_, w1_ - at}));
            std::memcpy(buf_.data() + (at - w0_), d, take);
            used_ += take, d += take, n -= take, literal_ += take;
        }
    }

    void finish() {
        if (literal_ != m_.literal_bytes) throw DataError("the literal stream is shorter than the member's gaps", m_.literal_offset);
        while (w0_ < m_.size) finish_window();
    }

private:
    void start_window(uint64_t from) {
        w0_ = from;
        w1_ = std::min(m_.size, from + std::min(window_, m_.size - from));
        // Zeroed: a crafted member whose runs leave bytes uncovered fails its hash on these
        // zeros, never on leftover heap bytes passed on to the output before the check.
        buf_.assign(static_cast<size_t>(w1_ - w0_), 0);
    }

    // Gathers the K/V bytes of [w0_, w1_), passes the window on and starts the next one.
    void finish_window() {
        while (si_ < sections_.size() && sections_[si_].offset + sections_[si_].bytes <= w0_) ++si_;
        std::vector<Slice> slices;
        for (size_t s = si_; s < sections_.size() && sections_[s].offset < w1_; ++s) {
            const SectionRef& sec = sections_[s];
            const MemberGroup& g = m_.groups[sec.group];
            const CellLayout& l = g.layout[sec.part];
            const uint64_t piece = l.elem_bytes ? l.elem_bytes : l.cell_bytes;
            const uint64_t lo = std::max(w0_, sec.offset) - sec.offset, hi = std::min(w1_, sec.offset + sec.bytes) - sec.offset;
            const uint64_t p0 = lo / piece, p1 = (hi + piece - 1) / piece;  // positions ch * n_cells + cell
            const std::vector<uint64_t>& starts = run_starts_[sec.group];
            for (uint64_t ch = p0 / g.n_cells; ch * g.n_cells < p1; ++ch) {
                const uint64_t a = std::max(p0, ch * g.n_cells) - ch * g.n_cells;
                const uint64_t b = std::min(p1, (ch + 1) * g.n_cells) - ch * g.n_cells;
                size_t ri = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), a) - starts.begin()) - 1;
                for (; ri < starts.size() && starts[ri] < b; ++ri) {
                    const uint64_t from = std::max(a, starts[ri]), to = std::min(b, starts[ri] + g.runs[ri].count);
                    slices.push_back({g.runs[ri].block_offset, s, ri, ch, from, to});
                    if (slices.size() == kMaxSlicesPerBatch) copy_slices(slices);
                }
            }
        }
        copy_slices(slices);
        out_.write(buf_.data(), buf_.size());
        start_window(w1_);
    }

    // Copies the slices into the window, block by block; empties the list.
    void copy_slices(std::vector<Slice>& slices) {
        std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) { return a.block < b.block; });
        const Bytes* raw = nullptr;
        BlockHead bh;
        std::optional<uint64_t> loaded;  // no block yet (every u64 is a possible block offset)
        for (const Slice& t : slices) {
            const SectionRef& sec = sections_[t.section];
            const MemberGroup& g = m_.groups[sec.group];
            if (!loaded || *loaded != t.block) {
                raw = &cache_.get(set_, t.block, bh, dopt_), loaded = t.block;
                if (bh.layout != g.layout) throw DataError("a member's cell run names a block of another layout", t.block);
            }
            const PackRun& r = g.runs[t.run];
            if (r.first > bh.n_cells || r.count > bh.n_cells - r.first)
                throw DataError("a member's cell run reaches past its block's cells", t.block);
            uint64_t base = 0;
            for (size_t k = 0; k < sec.part; ++k) base += bh.n_cells * bh.layout[k].cell_bytes;
            const CellLayout& l = g.layout[sec.part];
            const uint64_t piece = l.elem_bytes ? l.elem_bytes : l.cell_bytes;
            const uint64_t in_run = t.from - run_starts_[sec.group][t.run];
            const uint64_t file_at = sec.offset + (t.ch * g.n_cells + t.from) * piece, len = (t.to - t.from) * piece;
            const uint8_t* src = raw->data() + base + (t.ch * bh.n_cells + r.first + in_run) * piece;
            const uint64_t lo = std::max(file_at, w0_), hi = std::min(file_at + len, w1_);
            std::memcpy(buf_.data() + (lo - w0_), src + (lo - file_at), static_cast<size_t>(hi - lo));
        }
        slices.clear();
    }

    InputSource& set_;
    const MemberRecord& m_;
    OutputSink& out_;
    const DecompressOptions& dopt_;
    BlockCache& cache_;
    const uint64_t window_;
    std::vector<SectionRef> sections_;
    std::vector<std::vector<uint64_t>> run_starts_;  // per group
    std::vector<std::pair<uint64_t, uint64_t>> gaps_;
    size_t gi_ = 0, si_ = 0;
    uint64_t used_ = 0, literal_ = 0;
    uint64_t w0_ = 0, w1_ = 0;
    Bytes buf_;
};

}  // namespace

void rebuild_member_in_order(InputSource& set, const MemberRecord& m, OutputSink& out, const DecompressOptions& dopt,
                             BlockCache& cache, uint64_t window_bytes) {
    WindowBuilder b(set, m, out, dopt, cache, window_bytes);
    decode_literal(set, m, b, dopt);
    b.finish();
}

}  // namespace stz
