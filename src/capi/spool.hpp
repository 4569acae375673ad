// The random-access input stz_compress_stream needs (the parsers and the planner read at
// offsets), made from a read callback: small inputs stay in memory, larger ones are spooled to
// an unlinked temporary file, so memory stays bounded whatever the input size.
#pragma once
#include <functional>

#include "base/io.hpp"

namespace stzcapi {

// Thrown when the callback reports an error (or claims more bytes than asked).
struct ReadFailed : stz::Error {
    using stz::Error::Error;
};
// The temporary file could not be made, written or read.
struct SpoolFailed : stz::Error {
    using stz::Error::Error;
};

// Returns bytes read (<= n), 0 at end; throws ReadFailed.
using ReadFn = std::function<size_t(uint8_t* buf, size_t n)>;

class SpooledInput final : public stz::InputSource {
public:
    // Keeps up to `memory_limit` bytes in memory, then moves everything to a temporary file.
    SpooledInput(const ReadFn& read, size_t memory_limit);
    ~SpooledInput() override;
    SpooledInput(const SpooledInput&) = delete;
    SpooledInput& operator=(const SpooledInput&) = delete;
    uint64_t size() const override { return size_; }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override;
    bool spooled() const { return fd_ >= 0; }

private:
    void spill();
    void append_to_file(const uint8_t* p, size_t n);
    stz::Bytes mem_;
    int fd_ = -1;
    uint64_t size_ = 0;
};

}  // namespace stzcapi
