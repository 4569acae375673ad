// The library's only view of the outside world: abstract byte sources and sinks.
// The CLI implements them over files and pipes; tests implement them over memory.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstring>

#include "bytes.hpp"

namespace stz {

class InputSource {  // random access, known size
public:
    virtual ~InputSource() = default;
    virtual uint64_t size() const = 0;
    // Reads exactly n bytes at offset `off` or throws.
    virtual void read_at(uint64_t off, uint8_t* dst, size_t n) = 0;
    // True if read_at may be called from several threads at once (pread on a file, memory):
    // the compressor's workers then read their own chunks.
    virtual bool concurrent_reads() const { return false; }
    // The whole source as memory that stays valid while the source does (a caller's buffer),
    // or nullptr: a reader may then use the bytes where they lie instead of copying them.
    virtual const uint8_t* memory() const { return nullptr; }
};

// Random-access read and write (a set file being appended; a member being restored).
class RandomFile : public InputSource {
public:
    virtual void write_at(uint64_t off, const uint8_t* data, size_t n) = 0;
    virtual void truncate(uint64_t size) = 0;
    virtual void sync() {}
};

class InputStream {  // sequential
public:
    virtual ~InputStream() = default;
    // Returns the number of bytes read, 0 at end of input.
    virtual size_t read(uint8_t* dst, size_t n) = 0;
    // The same bytes by position, readable from several threads at once (a regular file,
    // memory), or nullptr (a pipe). Offsets count from the stream's first byte; size() is the
    // whole stream's. A reader then skips bytes it leaves for other threads to read_at.
    virtual InputSource* positioned() { return nullptr; }
    // Moves past the next n bytes without reading them; only with positioned(), and only over
    // bytes its size() says are there.
    virtual void skip(uint64_t) { throw Error("this input cannot skip"); }
};

class OutputSink {
public:
    virtual ~OutputSink() = default;
    virtual void write(const uint8_t* data, size_t n) = 0;
    // True if write_at may be called, from several threads at once (pwrite to a new regular
    // file): a writer then puts every byte at its offset with write_at instead of write.
    virtual bool positioned_writes() const { return false; }
    // Writes n bytes at offset `off` from the sink's start; only when positioned_writes().
    virtual void write_at(uint64_t, const uint8_t*, size_t) { throw Error("this output cannot write at an offset"); }
    // The sink's own memory for the bytes at [off, off + n) from its start, which the caller
    // fills (from any thread) instead of writing them: a chunk is then decoded where it ends
    // up, not copied there. nullptr for a sink without such memory (a file, a pipe); a sink
    // that has it answers every call, throwing where the range does not fit.
    virtual uint8_t* memory_at(uint64_t, size_t) { return nullptr; }
    // Whether start_over may be called: everything written so far dropped, the next write
    // going to offset 0 again. A caller's buffer can; a file or a pipe cannot.
    virtual bool can_start_over() const { return false; }
    virtual void start_over() { throw Error("this output cannot start over"); }
};

// The output does not fit in a sink of fixed size.
struct OutputFull : Error {
    using Error::Error;
};

// A caller's buffer of fixed capacity (the C API's destination): written in order, at
// offsets, or straight into its memory; OutputFull past its capacity.
class SpanSink final : public OutputSink {
public:
    SpanSink(uint8_t* dst, size_t cap) : dst_(dst), cap_(cap) {}
    void write(const uint8_t* data, size_t n) override {
        if (n > cap_ - used_) full();
        if (n) std::memcpy(dst_ + used_, data, n);
        used_ += n;
    }
    bool positioned_writes() const override { return true; }
    void write_at(uint64_t off, const uint8_t* data, size_t n) override {
        if (n) std::memcpy(memory_at(off, n), data, n);
    }
    uint8_t* memory_at(uint64_t off, size_t n) override {
        if (off > cap_ || n > cap_ - off) full();
        const size_t end = static_cast<size_t>(off) + n;
        for (size_t seen = end_.load(); seen < end && !end_.compare_exchange_weak(seen, end);) {
        }
        return dst_ + off;
    }
    // The end of the furthest byte written.
    size_t used() const { return std::max(used_, end_.load()); }
    bool can_start_over() const override { return true; }
    void start_over() override { used_ = 0, end_ = 0; }

private:
    [[noreturn]] void full() const { throw OutputFull("destination buffer too small: " + std::to_string(cap_) + " bytes"); }
    uint8_t* dst_;
    size_t cap_, used_ = 0;
    std::atomic<size_t> end_{0};  // the end of the furthest write_at / memory_at
};

class MemorySource final : public InputSource {
public:
    explicit MemorySource(ByteSpan d) : d_(d) {}
    uint64_t size() const override { return d_.size(); }
    bool concurrent_reads() const override { return true; }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override {
        if (off > d_.size() || n > d_.size() - off) throw Error("read past the end of the input");
        std::copy_n(d_.data() + off, n, dst);
    }
    const uint8_t* memory() const override { return d_.data(); }

private:
    ByteSpan d_;
};

class MemoryStream final : public InputStream {
public:
    explicit MemoryStream(ByteSpan d) : d_(d), all_(d) {}
    size_t read(uint8_t* dst, size_t n) override {
        n = std::min(n, d_.size() - pos_);
        std::copy_n(d_.data() + pos_, n, dst);
        pos_ += n;
        return n;
    }
    InputSource* positioned() override { return &all_; }
    void skip(uint64_t n) override {
        if (n > d_.size() - pos_) throw Error("skip past the end of the input");
        pos_ += static_cast<size_t>(n);
    }

private:
    ByteSpan d_;
    size_t pos_ = 0;
    MemorySource all_;
};

class MemorySink final : public OutputSink {
public:
    // append_bytes (memcpy), not insert: with Bytes' allocator insert copies byte by byte.
    void write(const uint8_t* data, size_t n) override { append_bytes(out, ByteSpan(data, n)); }
    Bytes out;
};

class NullSink final : public OutputSink {
public:
    void write(const uint8_t*, size_t n) override { written += n; }
    uint64_t written = 0;
};

// Reads exactly n bytes from a stream; throws DataError("truncated ...") at `offset` if it ends.
void read_exact(InputStream& in, uint8_t* dst, size_t n, uint64_t offset, const char* what);

}  // namespace stz
