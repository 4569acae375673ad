// Owned zstd contexts (RAII), for the codec, the container header and patch heads. A context
// is costly to create (a level-19 one cost more than compressing a small file's header): the
// hot users keep one per thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>

#ifndef ZSTD_STATIC_LINKING_ONLY
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_createCCtx_advanced, ZSTD_customMem
#endif
#include <zstd.h>

namespace stz {

// The memory of a compression context, kept when zstd frees it. One context codes planes of
// many sizes at several levels, and zstd sizes its workspace to each: it frees the workspace
// and takes a new one whenever a frame needs more, and after a run of frames that needed far
// less. The new one comes from the top of the heap, which free() has handed back to the
// system in between, so every table zstd clears in it faults its pages in again (a quarter of
// the page faults of a small quantised cache's compression; a fault costs ~10 us on a
// virtual machine). Kept here, the block zstd freed is handed back when zstd next asks for no
// more than it holds. Blocks above kMaxKept go back to the system (a level-19 workspace of a
// large chunk, whose faults are nothing beside its coding).
class KeptWorkspace {
public:
    ZSTD_customMem mem() { return {&KeptWorkspace::alloc, &KeptWorkspace::release, this}; }
    ~KeptWorkspace() { ::operator delete(kept_); }
    size_t handed_back() const { return handed_back_; }  // allocations served by a kept block

private:
    static constexpr size_t kHead = 64;             // the block's capacity, before what zstd gets
    static constexpr size_t kMinKept = 64 << 10;    // smaller blocks: malloc keeps them itself
    static constexpr size_t kMaxKept = 16 << 20;
    static size_t& capacity(void* block) { return *static_cast<size_t*>(block); }

    static void* alloc(void* self, size_t n) {
        auto* k = static_cast<KeptWorkspace*>(self);
        if (k->kept_ && capacity(k->kept_) >= n) {
            void* block = k->kept_;
            k->kept_ = nullptr;
            ++k->handed_back_;
            return static_cast<char*>(block) + kHead;
        }
        if (n > SIZE_MAX - kHead) return nullptr;  // (zstd takes a null block as out of memory)
        void* block = ::operator new(n + kHead, std::nothrow);
        if (!block) return nullptr;
        capacity(block) = n;
        return static_cast<char*>(block) + kHead;
    }
    static void release(void* self, void* p) {
        if (!p) return;
        auto* k = static_cast<KeptWorkspace*>(self);
        void* block = static_cast<char*>(p) - kHead;
        const size_t cap = capacity(block);
        if (cap < kMinKept || cap > kMaxKept) return ::operator delete(block);
        if (k->kept_ && capacity(k->kept_) >= cap) return ::operator delete(block);
        ::operator delete(k->kept_);
        k->kept_ = block;
    }

    void* kept_ = nullptr;
    size_t handed_back_ = 0;
};

struct ZstdCCtx {
    KeptWorkspace workspace;  // declared first: outlives the context, which frees into it
    ZSTD_CCtx* c = ZSTD_createCCtx_advanced(workspace.mem());
    ZstdCCtx() {
        if (!c) throw std::bad_alloc();
    }
    ~ZstdCCtx() { ZSTD_freeCCtx(c); }
    ZstdCCtx(const ZstdCCtx&) = delete;
    ZstdCCtx& operator=(const ZstdCCtx&) = delete;
};

struct ZstdDCtx {
    ZSTD_DCtx* d = ZSTD_createDCtx();
    ZstdDCtx() {
        if (!d) throw std::bad_alloc();
    }
    ~ZstdDCtx() { ZSTD_freeDCtx(d); }
    ZstdDCtx(const ZstdDCtx&) = delete;
    ZstdDCtx& operator=(const ZstdDCtx&) = delete;
};

// The thread's decompression context with zstd's default parameters, for one-shot decoding of
// whole frames (ZSTD_decompressDCtx; none runs inside another): the zstd codec's chunks and the
// container's header. One per thread, not one per caller: each holds ~100 KB.
inline ZSTD_DCtx* thread_dctx() {
    thread_local ZstdDCtx ctx;
    return ctx.d;
}

}  // namespace stz
