#include "large_buffers.hpp"

#include <cstdint>
#include <deque>
#include <iterator>
#include <mutex>
#include <new>
#include <vector>

#include <sys/mman.h>

namespace stz {

namespace {

// A block's size (the same for its allocation and its release, which are told the same
// `bytes`): above half a huge page, `bytes` rounded up to whole huge pages; below, the
// smallest of 256 KiB, 512 KiB and 1 MiB that holds it.
size_t block_size(size_t bytes) {
    if (bytes > kHugePageBytes / 2) return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    size_t size = kSmallestBlockBytes;
    while (size < bytes) size *= 2;
    return size;
}
bool huge(size_t size) { return size >= kHugePageBytes; }

// Freed blocks kept for the next buffer of the same size: a chunk's buffers have the same
// sizes chunk after chunk, and a kept block's pages are already there (no fault, no clear).
// Bounded by kMaxKeptBytes. When a freed block does not fit, the blocks freed longest ago go
// back to the kernel to make room: a process that moves on to other sizes (a bench over files
// of different sizes, a server restoring states of different lengths) would otherwise keep
// blocks of sizes it no longer asks for, and every new buffer would be a fresh mapping.
class KeptBlocks {
public:
    void* take(size_t size) {
        std::lock_guard<std::mutex> lk(m_);
        // Newest first: the block most recently freed is the likeliest still in the cache.
        for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
            if (it->size != size) continue;
            void* p = it->start;
            blocks_.erase(std::next(it).base());
            kept_ -= size;
            return p;
        }
        return nullptr;
    }
    // Whether `p` was kept; blocks evicted to make room are unmapped after the lock is let go.
    bool keep(void* p, size_t size) noexcept {
        if (size > kMaxKeptBytes) return false;
        std::vector<Block> evicted;
        bool kept = false;
        try {
            std::lock_guard<std::mutex> lk(m_);
            while (kept_ + size > kMaxKeptBytes) {
                evicted.push_back(blocks_.front());
                kept_ -= blocks_.front().size;
                blocks_.pop_front();
            }
            blocks_.push_back({p, size});
            kept_ += size;
            kept = true;
        } catch (...) {  // no memory for the list's entries: the block goes back instead
        }
        for (const Block& b : evicted) munmap(b.start, b.size);
        return kept;
    }

    size_t kept() {
        std::lock_guard<std::mutex> lk(m_);
        return kept_;
    }

private:
    struct Block {
        void* start;
        size_t size;  // block_size
    };
    std::mutex m_;
    std::deque<Block> blocks_;  // in the order they were freed, oldest first
    size_t kept_ = 0;
};

KeptBlocks& kept_blocks() {
    static KeptBlocks* blocks = new KeptBlocks;  // never destroyed: a buffer freed at exit still finds it
    return *blocks;
}

// An anonymous mapping of `size` bytes aligned to kHugePageBytes (a huge page needs an
// aligned range): a larger mapping with its ends cut off.
void* map_aligned(size_t size) {
    const size_t over = size + kHugePageBytes;
    void* raw = mmap(nullptr, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t base = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t start = (base + kHugePageBytes - 1) & ~(uintptr_t(kHugePageBytes) - 1);
    if (start > base) munmap(raw, start - base);
    if (base + over > start + size) munmap(reinterpret_cast<void*>(start + size), base + over - (start + size));
#if defined(MADV_HUGEPAGE)
    // Advice only: where transparent huge pages are off the block is made of small pages.
    (void)madvise(reinterpret_cast<void*>(start), size, MADV_HUGEPAGE);
#endif
    return reinterpret_cast<void*>(start);
}

// A block below a huge page: a plain mapping (page-aligned; its pages are small ones anyway).
void* map_plain(size_t size) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
}

}  // namespace

void* allocate_large(size_t bytes) {
    if (bytes > SIZE_MAX - 2 * kHugePageBytes) throw std::bad_alloc();  // rounding and map_aligned's extra page
    const size_t size = block_size(bytes);
    if (void* p = kept_blocks().take(size)) return p;
    return huge(size) ? map_aligned(size) : map_plain(size);
}

void free_large(void* p, size_t bytes) noexcept {
    const size_t size = block_size(bytes);
    if (!kept_blocks().keep(p, size)) munmap(p, size);
}

size_t large_bytes_kept() { return kept_blocks().kept(); }

}  // namespace stz
