// Byte sources for --patch-from (patch.cpp): a block cache over a file read in many small
// pieces, and the stored stream read through a patch map without listing its extents.
#pragma once
#include <list>

#include "base/io.hpp"
#include "patch_map.hpp"

namespace stz {

// REF's bytes at `extents`, in order (the dictionary of a head's zstd frame); DataError if one
// lies outside REF.
Bytes read_dictionary(InputSource& ref, const std::vector<PatchExtent>& extents);

// Serves small reads (a transposed layer's 2-byte pieces, channel after channel) from a few
// cached 1 MiB blocks, so that they cost a memcpy, not a read each. Reads of 4 KiB or more
// go straight through (bulk reads would only be copied twice).
class CachedSource final : public InputSource {
public:
    explicit CachedSource(InputSource& in, size_t blocks = 8) : in_(in), max_blocks_(blocks) {}
    uint64_t size() const override { return in_.size(); }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override {
        if (off > in_.size() || n > in_.size() - off) throw Error("read past the end of the input");
        if (n >= kSmallRead) return in_.read_at(off, dst, n);
        while (n) {
            const uint64_t start = off / kBlock * kBlock;
            const Bytes& b = block(start);
            size_t k = static_cast<size_t>(std::min<uint64_t>(n, start + b.size() - off));
            std::memcpy(dst, b.data() + (off - start), k);
            off += k, dst += k, n -= k;
        }
    }

private:
    static constexpr size_t kBlock = 1u << 20, kSmallRead = 4096;
    const Bytes& block(uint64_t start) {
        for (auto it = blocks_.begin(); it != blocks_.end(); ++it)
            if (it->first == start) {
                blocks_.splice(blocks_.begin(), blocks_, it);  // most recent first
                return blocks_.front().second;
            }
        if (blocks_.size() == max_blocks_) blocks_.pop_back();
        Bytes b(static_cast<size_t>(std::min<uint64_t>(kBlock, in_.size() - start)));
        in_.read_at(start, b.data(), b.size());
        blocks_.emplace_front(start, std::move(b));
        return blocks_.front().second;
    }
    InputSource& in_;
    size_t max_blocks_;
    std::list<std::pair<uint64_t, Bytes>> blocks_;
};

// The stored stream: `head` (patch.cpp encode_head), then the file's bytes of every segment
// the map keeps in the stream, in order. Walks the map as it is read (the engine reads in
// order; a read behind the cursor starts the walk again), so memory does not grow with the
// number of segments.
class StreamSource final : public InputSource {
public:
    StreamSource(InputSource& file, Bytes head, const PatchMap& m) : file_(file), head_(std::move(head)), map_(m) {
        uint64_t n = head_.size();
        PatchWalker w(m);
        while (auto s = w.next())
            if (!s->from_ref && s->part) n += s->length;
        size_ = n;
        restart();
    }
    uint64_t size() const override { return size_; }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override {
        if (off > size_ || n > size_ - off) throw Error("read past the end of the stored stream");
        while (n) {
            if (off < head_.size()) {
                size_t k = std::min<size_t>(n, head_.size() - off);
                std::memcpy(dst, head_.data() + off, k);
                off += k, dst += k, n -= k;
                continue;
            }
            if (off < seg_at_) restart();
            while (!seg_ || off >= seg_at_ + seg_->length) next_segment();
            size_t k = static_cast<size_t>(std::min<uint64_t>(n, seg_at_ + seg_->length - off));
            file_.read_at(seg_->file_offset + (off - seg_at_), dst, k);
            off += k, dst += k, n -= k;
        }
    }

private:
    void restart() {
        walker_.emplace(map_);
        seg_.reset();
        seg_at_ = head_.size();
    }
    void next_segment() {
        if (seg_) seg_at_ += seg_->length;
        do seg_ = walker_->next();
        while (seg_ && (seg_->from_ref || !seg_->part));
        if (!seg_) throw Error("stored stream: read past its last segment");
    }
    InputSource& file_;
    Bytes head_;
    const PatchMap& map_;
    uint64_t size_ = 0;
    std::optional<PatchWalker> walker_;
    std::optional<PatchSegment> seg_;
    uint64_t seg_at_ = 0;  // stream offset of seg_
};

}  // namespace stz
