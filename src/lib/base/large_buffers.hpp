// Memory for chunk- and plane-sized buffers (256 KiB and more): mapped, and kept for reuse
// when freed. A run allocates and frees a chunk's buffers chunk after chunk, with the same
// sizes; from malloc each new buffer's pages were touched for the first time again (a page
// fault per 4 KiB, each a trip through the hypervisor on a virtual machine) unless the
// process had tuned malloc, as the CLI does and a C API caller does not. Here a freed block
// is kept (up to kMaxKeptBytes in all) and the next buffer of its size takes it with its
// pages in place. Blocks above 1 MiB are whole, aligned huge pages, advised into transparent
// huge pages (one fault and a 2 MiB clear where there were 512 faults); smaller ones are
// 64 KiB, 128 KiB, ... 1 MiB (a plane's buffers vary a little in size from chunk to chunk:
// a class each still finds the block of the last). Without the smaller classes, a 4 MB q8_0
// cache compressed through the C API took 7.1-7.7 ms or 12.6-14.1 ms a call depending only
// on where glibc's heap top happened to lie (trimmed and faulted in again every call); with
// classes from 256 KiB only, files of 100 KB-1.3 MB (their stage outputs and planes of
// 64-256 KiB) still took 11-188 page faults a call, 1.3-2x the time of the call without them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>

namespace stz {

inline constexpr size_t kHugePageBytes = size_t(2) << 20;
// Whether this build runs under AddressSanitizer (GCC's macro, clang's feature test).
#if defined(__SANITIZE_ADDRESS__)
#define STZ_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STZ_ADDRESS_SANITIZER 1
#endif
#endif
#ifdef STZ_ADDRESS_SANITIZER
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// Buffers of at least this many bytes are allocated by allocate_large; none under
// AddressSanitizer, which then sees every buffer's bounds (it does not watch mappings).
inline constexpr size_t kSmallestBlockBytes = size_t(64) << 10;
inline constexpr size_t kLargeBufferBytes = kAddressSanitizer ? SIZE_MAX : kSmallestBlockBytes;

// Freed blocks kept for reuse, at most this many bytes of them (beyond: the blocks freed
// longest ago are unmapped).
inline constexpr size_t kMaxKeptBytes = size_t(64) << 20;

// At least `bytes` (>= kSmallestBlockBytes), aligned to kHugePageBytes above 1 MiB; throws
// std::bad_alloc.
void* allocate_large(size_t bytes);
// `bytes`: what allocate_large was asked for.
void free_large(void* p, size_t bytes) noexcept;
// Bytes of freed blocks kept now (tests, diagnostics).
size_t large_bytes_kept();

// A table that a thread keeps for its lifetime (an encoder's counts, a decoder's slots), value-
// initialised, from a kept block (allocate_large): one of more than a quarter of a huge page
// takes a whole huge page where the kernel gives them (a ~1 MB table from operator new faulted its
// small pages in one by one on every thread's first call, ~11 us each on a virtual machine: 3 ms
// of a 20 ms compression of a small file), a smaller one a block of its class (rounding it up to
// a huge page would cost each thread up to 8x its size in memory). Under AddressSanitizer from
// operator new, which it watches.
struct LargeTableDeleter {
    size_t bytes;  // what allocate_large was asked for; 0 = operator new
    template <class T> void operator()(T* p) const noexcept {
        static_assert(std::is_trivially_destructible_v<T>);
        if (bytes) free_large(p, bytes);
        else ::operator delete(p, std::align_val_t(alignof(T)));
    }
};
template <class T> std::unique_ptr<T, LargeTableDeleter> make_large_table() {
    static_assert(std::is_trivially_destructible_v<T> && alignof(T) <= kHugePageBytes);
    if (kAddressSanitizer) return {new (::operator new(sizeof(T), std::align_val_t(alignof(T)))) T(), LargeTableDeleter{0}};
    // Past half a huge page a block is whole huge pages, aligned (block_size).
    const size_t bytes = sizeof(T) > kHugePageBytes / 4 && sizeof(T) <= kHugePageBytes / 2 ? kHugePageBytes / 2 + 1 : sizeof(T);
    return {new (allocate_large(bytes)) T(), LargeTableDeleter{bytes}};
}

}  // namespace stz
