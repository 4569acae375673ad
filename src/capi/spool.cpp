#include "spool.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace stzcapi {

namespace {

std::string temp_dir() {
    const char* t = std::getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

// An unlinked file in the temp folder: O_TMPFILE where the file system has it, else
// mkstemp + unlink. Either way it disappears when closed, even after a crash.
int open_temp_file() {
    const std::string dir = temp_dir();
#ifdef O_TMPFILE
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
#endif
    std::string path = dir + "/statezip-spool-XXXXXX";
    int fd2 = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd2 < 0) throw SpoolFailed("cannot create a temporary file in " + dir + ": " + std::strerror(errno));
    ::unlink(path.c_str());
    return fd2;
}

}  // namespace

SpooledInput::SpooledInput(const ReadFn& read, size_t memory_limit) {
    constexpr size_t kBlock = 1u << 20;
    stz::Bytes block;
    for (;;) {
        if (fd_ < 0 && mem_.size() + kBlock > memory_limit) spill();
        size_t n;
        if (fd_ < 0) {  // read straight into the memory buffer
            const size_t at = mem_.size();
            mem_.resize(at + kBlock);
            n = read(mem_.data() + at, kBlock);
            mem_.resize(at + n);
        } else {
            block.resize(kBlock);
            n = read(block.data(), kBlock);
            append_to_file(block.data(), n);
        }
        if (n == 0) break;
        size_ += n;
    }
    if (fd_ < 0) mem_.shrink_to_fit();
}

SpooledInput::~SpooledInput() {
    if (fd_ >= 0) ::close(fd_);
}

void SpooledInput::spill() {
    fd_ = open_temp_file();
    append_to_file(mem_.data(), mem_.size());
    stz::Bytes().swap(mem_);
}

void SpooledInput::append_to_file(const uint8_t* p, size_t n) {
    while (n > 0) {
        ssize_t w = ::write(fd_, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throw SpoolFailed(std::string("cannot write the temporary file: ") + std::strerror(errno));
        p += w, n -= size_t(w);
    }
}

void SpooledInput::read_at(uint64_t off, uint8_t* dst, size_t n) {
    if (off > size_ || n > size_ - off) throw stz::Error("read past the end of the input");
    if (n == 0) return;
    if (fd_ < 0) {
        std::memcpy(dst, mem_.data() + off, n);
        return;
    }
    while (n > 0) {
        ssize_t r = ::pread(fd_, dst, n, static_cast<off_t>(off));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) throw SpoolFailed(std::string("cannot read the temporary file: ") + std::strerror(errno));
        dst += r, off += uint64_t(r), n -= size_t(r);
    }
}

}  // namespace stzcapi
