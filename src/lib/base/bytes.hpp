// Byte buffers, little-endian helpers and the error types used by every layer.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "large_buffers.hpp"

static_assert(std::endian::native == std::endian::little,
              "statezip reads and writes little-endian data with memcpy; big-endian hosts are not supported");

namespace stz {

// std::allocator, except that a value-less construct (what resize(n) and Bytes(n) do) leaves
// the byte indeterminate instead of zeroing it: decoders size their output and then write
// every byte, and zero-filling each chunk first cost 10-20 % of a fast decompression.
// Whoever needs zeros says so: resize(n, 0), Bytes(n, 0).
template <class T> struct DefaultInitAllocator : std::allocator<T> {
    template <class U> struct rebind {
        using other = DefaultInitAllocator<U>;
    };
    DefaultInitAllocator() noexcept = default;
    template <class U> DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
    // Chunk-sized buffers come in huge pages (large_buffers.hpp), smaller ones from malloc.
    T* allocate(size_t n) {
        if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
        if (n * sizeof(T) < kLargeBufferBytes) return std::allocator<T>::allocate(n);
        return static_cast<T*>(allocate_large(n * sizeof(T)));
    }
    void deallocate(T* p, size_t n) noexcept {
        if (n * sizeof(T) < kLargeBufferBytes) return std::allocator<T>::deallocate(p, n);
        free_large(p, n * sizeof(T));
    }
    template <class U> void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) { ::new (static_cast<void*>(p)) U; }
// GCC 12 warns (-Wstringop-overflow) on every push_back through a custom allocator's
// construct, a known false positive; the construct is the plain placement new.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
    template <class U, class... A> void construct(U* p, A&&... a) {
        ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
    }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
};
template <class T, class U> bool operator==(const DefaultInitAllocator<T>&, const DefaultInitAllocator<U>&) noexcept { return true; }

// Bytes grown by resize(n) or made by Bytes(n) hold indeterminate values until written.
using Bytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;
using ByteSpan = std::span<const uint8_t>;

// Any failure statezip reports to the user.
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Bad or corrupt input, noticed at a byte offset of that input.
struct DataError : Error {
    uint64_t offset;
    DataError(const std::string& what, uint64_t off)
        : Error(what + " at offset " + std::to_string(off)), offset(off) {}
};

template <class T> inline T load_le(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <class T> inline void store_le(uint8_t* p, T v) { std::memcpy(p, &v, sizeof v); }

template <class T> inline void append_le(Bytes& out, T v) {
    size_t n = out.size();
    out.resize(n + sizeof v);
    std::memcpy(out.data() + n, &v, sizeof v);
}
// By memcpy: Bytes' allocator (above) makes vector::insert copy byte by byte.
inline void append_bytes(Bytes& out, ByteSpan s) {
    if (s.empty()) return;
    if (s.data() >= out.data() && s.data() < out.data() + out.size()) {  // a part of itself: insert copes
        out.insert(out.end(), s.begin(), s.end());
        return;
    }
    const size_t n = out.size();
    out.resize(n + s.size());
    std::memcpy(out.data() + n, s.data(), s.size());
}
inline void append_string(Bytes& out, const std::string& s) {
    append_le<uint16_t>(out, static_cast<uint16_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
}

// Bounds-checked reader over an in-memory span; `base` is the offset of the span in its file,
// so errors name the offset a user can look at.
class SpanReader {
public:
    explicit SpanReader(ByteSpan data, uint64_t base = 0) : data_(data), base_(base) {}
    size_t pos() const { return pos_; }
    size_t remaining() const { return data_.size() - pos_; }
    uint64_t file_offset() const { return base_ + pos_; }
    const uint8_t* need(size_t n, const char* what) {
        if (n > remaining()) throw DataError(std::string("truncated ") + what, file_offset());
        const uint8_t* p = data_.data() + pos_;
        pos_ += n;
        return p;
    }
    template <class T> T get(const char* what) { return load_le<T>(need(sizeof(T), what)); }
    uint8_t u8(const char* w) { return get<uint8_t>(w); }
    uint16_t u16(const char* w) { return get<uint16_t>(w); }
    uint32_t u32(const char* w) { return get<uint32_t>(w); }
    uint64_t u64(const char* w) { return get<uint64_t>(w); }
    ByteSpan bytes(size_t n, const char* w) { return {need(n, w), n}; }
    std::string str16(const char* w) {
        uint16_t n = u16(w);
        const uint8_t* p = need(n, w);
        return std::string(reinterpret_cast<const char*>(p), n);
    }

private:
    ByteSpan data_;
    uint64_t base_;
    size_t pos_ = 0;
};

}  // namespace stz
