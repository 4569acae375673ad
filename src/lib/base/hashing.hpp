// xxHash, with the runtime-dispatched XXH3 where the library has it: Debian's libxxhash is
// built for baseline x86-64 (SSE2), and its *_dispatch entry points pick AVX2/AVX-512 once at
// first use. Hashing every chunk twice (raw and stored) and the whole file once cost 13 % of
// the instructions of a --fast compression with the SSE2 code.
#pragma once
#include <xxhash.h>
#if defined(__x86_64__) && __has_include(<xxh_x86dispatch.h>)
#include <xxh_x86dispatch.h>  // XXH3_64bits & co. now name the dispatching functions
#endif

#include <cstdio>
#include <memory>
#include <new>
#include <string>

#include "io.hpp"

namespace stz {

// XXH3-64: the checksums of the .stz container (records, header, whole file).
uint64_t hash64(ByteSpan data);

// Streaming XXH3-64 (the same hash as hash64, fed in pieces).
class Hasher {
public:
    Hasher();
    ~Hasher();
    Hasher(const Hasher&) = delete;
    Hasher& operator=(const Hasher&) = delete;
    void update(ByteSpan d);
    uint64_t digest() const;
    // The digest after `more` were added, this hasher left as it is.
    uint64_t digest_after(ByteSpan more) const;

private:
    void* state_;  // XXH3_state_t
};

// 128-bit hash (XXH3-128): whole files (--patch-from, pack members), cells, token keys.
struct Hash128 {
    uint64_t lo = 0, hi = 0;
    bool operator==(const Hash128&) const = default;
};
struct Hash128Hasher {
    size_t operator()(const Hash128& h) const { return static_cast<size_t>(h.lo ^ (h.hi * 0x9E3779B97F4A7C15ull)); }
};

// Streaming XXH3-128.
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
    Hash128 digest() const {
        XXH128_hash_t h = XXH3_128bits_digest(st_);
        return {h.low64, h.high64};
    }

private:
    XXH3_state_t* st_;
};

// XXH3-128 of everything `in` holds, read in blocks of at most 4 MiB.
inline Hash128 hash128_of(InputSource& in) {
    Hasher128 h;
    const size_t cap = static_cast<size_t>(std::min<uint64_t>(in.size(), 4u << 20));
    const auto buf = std::make_unique_for_overwrite<uint8_t[]>(cap);  // read_at fills what is hashed
    for (uint64_t off = 0; off < in.size();) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(cap, in.size() - off));
        in.read_at(off, buf.get(), n);
        h.update(buf.get(), n);
        off += n;
    }
    return h.digest();
}

// 32 lower-case hex digits, high half first.
inline std::string hash128_hex(const Hash128& h) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)h.hi, (unsigned long long)h.lo);
    return buf;
}

}  // namespace stz
