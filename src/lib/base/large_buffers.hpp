// Memory for chunk-sized buffers (2 MiB and more): mapped in whole, aligned huge pages and
// kept for reuse when freed. A run allocates and frees a chunk's buffers chunk after chunk,
// with the same sizes; from malloc each new buffer's pages were touched for the first time
// again (a page fault per 4 KiB, each a trip through the hypervisor on a virtual machine)
// unless the process had tuned malloc, as the CLI does and a C API caller does not. Here a
// freed block is kept (up to kMaxKeptBytes in all) and the next buffer of its size takes it
// with its pages in place; a new block is advised into transparent huge pages: one fault and
// a 2 MiB clear where there were 512 faults.
#pragma once
#include <cstddef>
#include <cstdint>

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
inline constexpr size_t kLargeBufferBytes = kAddressSanitizer ? SIZE_MAX : kHugePageBytes;

// Freed blocks kept for reuse, at most this many bytes of them (beyond: the blocks freed
// longest ago are unmapped).
inline constexpr size_t kMaxKeptBytes = size_t(64) << 20;

// At least `bytes` (>= kLargeBufferBytes), aligned to kHugePageBytes; throws std::bad_alloc.
void* allocate_large(size_t bytes);
// `bytes`: what allocate_large was asked for.
void free_large(void* p, size_t bytes) noexcept;
// Bytes of freed blocks kept now (tests, diagnostics).
size_t large_bytes_kept();

}  // namespace stz
