// Bounds-checked, buffered little-endian reader over an InputSource. Every read is checked
// against the input size and fails with a DataError naming the offset.
#pragma once
#include "base/io.hpp"

namespace stz {

class SourceReader {
public:
    explicit SourceReader(InputSource& src, uint64_t pos = 0)
        : src_(src), memory_(src.memory()), size_(src.size()), pos_(pos) {}
    uint64_t pos() const { return pos_; }
    uint64_t size() const { return size_; }
    uint64_t remaining() const { return pos_ <= size_ ? size_ - pos_ : 0; }
    bool at_end() const { return pos_ == size_; }
    void seek(uint64_t p) {
        if (p > size_) throw DataError("offset beyond end of file", p);
        pos_ = p;
    }
    void skip(uint64_t n, const char* what) {
        if (n > remaining()) throw DataError(std::string("truncated ") + what, pos_);
        pos_ += n;
    }
    void read(uint8_t* dst, size_t n, const char* what);
    uint8_t u8(const char* w) { uint8_t v; read(&v, 1, w); return v; }
    uint32_t u32(const char* w) { uint8_t b[4]; read(b, 4, w); return load_le<uint32_t>(b); }
    int32_t i32(const char* w) { return static_cast<int32_t>(u32(w)); }
    uint64_t u64(const char* w) { uint8_t b[8]; read(b, 8, w); return load_le<uint64_t>(b); }
    uint32_t peek_u32(const char* w) { uint64_t p = pos_; uint32_t v = u32(w); pos_ = p; return v; }
    uint64_t peek_u64(const char* w) { uint64_t p = pos_; uint64_t v = u64(w); pos_ = p; return v; }
    std::string str(size_t n, const char* w) { std::string s(n, '\0'); read(reinterpret_cast<uint8_t*>(s.data()), n, w); return s; }
    Bytes bytes(size_t n, const char* w) { Bytes b(n); read(b.data(), n, w); return b; }
    InputSource& source() { return src_; }

private:
    InputSource& src_;
    const uint8_t* memory_;  // the source's bytes where they lie, if it has them in memory
    uint64_t size_;
    uint64_t pos_;
    Bytes buf_;
    uint64_t buf_start_ = 0;
    size_t ahead_ = 0;  // the last refill's size
};

inline void SourceReader::read(uint8_t* dst, size_t n, const char* what) {
    if (n > remaining()) throw DataError(std::string("truncated ") + what, pos_);
    if (memory_ || n > 4096) {  // memory, and large reads, bypass the buffer
        if (memory_) std::memcpy(dst, memory_ + pos_, n);
        else src_.read_at(pos_, dst, n);
        pos_ += n;
        return;
    }
    if (pos_ < buf_start_ || pos_ + n > buf_start_ + buf_.size()) {
        // Read-ahead doubles while reads follow each other (cell and token lists) and starts
        // again at 4 KiB after a skip: a layer's 12-byte header between skipped rows used to
        // fetch 64 KiB, as many bytes as a small model's whole layer (the parse of a 900 KB
        // s260k file copied 640 KB).
        const bool sequential = !buf_.empty() && pos_ >= buf_start_ && pos_ <= buf_start_ + buf_.size();
        ahead_ = sequential ? std::min<size_t>(2 * ahead_, 65536) : 4096;
        const size_t len = static_cast<size_t>(std::min<uint64_t>(std::max(ahead_, n), size_ - pos_));
        buf_.resize(len);
        src_.read_at(pos_, buf_.data(), len);
        buf_start_ = pos_;
    }
    std::memcpy(dst, buf_.data() + (pos_ - buf_start_), n);
    pos_ += n;
}

}  // namespace stz
