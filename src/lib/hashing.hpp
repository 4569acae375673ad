// xxHash, with the runtime-dispatched XXH3 where the library has it: Debian's libxxhash is
// built for baseline x86-64 (SSE2), and its *_dispatch entry points pick AVX2/AVX-512 once at
// first use. Hashing every chunk twice (raw and stored) and the whole file once cost 13 % of
// the instructions of a --fast compression with the SSE2 code.
#pragma once
#include <xxhash.h>
#if defined(__x86_64__) && __has_include(<xxh_x86dispatch.h>)
#include <xxh_x86dispatch.h>  // XXH3_64bits & co. now name the dispatching functions
#endif

#include <array>
#include <new>

namespace stz {

// Streaming XXH3-128 (the whole-file identity of --patch-from references and pack members).
class Hasher128 {
public:
    Hasher128() : st_(XXH3_createState()) {
        if (!st_) throw std::bad_alloc();
        XXH3_128bits_reset(st_);
    }
    ~Hasher128() { XXH3_freeState(st_); }
    Hasher128(const Hasher128&) = delete;
    Hasher128& operator=(const Hasher128&) = delete;
    void update(const uint8_t* d, size_t n) { XXH3_128bits_update(st_, d, n); }
    std::array<uint64_t, 2> digest() const {  // low, high
        XXH128_hash_t h = XXH3_128bits_digest(st_);
        return {h.low64, h.high64};
    }

private:
    XXH3_state_t* st_;
};

}  // namespace stz
