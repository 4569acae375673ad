// Owned zstd contexts (RAII), for the codec, the container header and patch heads. A context
// is costly to create (a level-19 one cost more than compressing a small file's header): the
// hot users keep one per thread.
#pragma once
#include <new>

#include <zstd.h>

namespace stz {

struct ZstdCCtx {
    ZSTD_CCtx* c = ZSTD_createCCtx();
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

}  // namespace stz
