// Files of pack/unpack: random-access descriptors and safe member outputs under -C DIR.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>

#include "file_io.hpp"
#include "pack_cmd.hpp"

namespace stzcli {

using stz::Error;

namespace {
std::string errno_text() { return std::strerror(errno); }
}  // namespace

FdFile::FdFile(int fd, std::string name, bool durable) : fd_(fd), name_(std::move(name)), durable_(durable) {}

FdFile::~FdFile() {
    if (fd_ >= 0) ::close(fd_);
}

uint64_t FdFile::size() const {
    struct stat st;
    if (::fstat(fd_, &st) != 0) throw Error("cannot stat " + name_ + ": " + errno_text());
    return static_cast<uint64_t>(st.st_size);
}

void FdFile::read_at(uint64_t off, uint8_t* dst, size_t n) {
    while (n) {
        ssize_t r = ::pread(fd_, dst, n, static_cast<off_t>(off));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw Error("cannot read " + name_ + ": " + errno_text());
        if (r == 0) throw stz::DataError("read past the end of " + name_, off);
        dst += r, off += r, n -= r;
    }
}

void FdFile::write_at(uint64_t off, const uint8_t* src, size_t n) {
    while (n) {
        ssize_t w = ::pwrite(fd_, src, n, static_cast<off_t>(off));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) throw Error("cannot write " + name_ + ": " + errno_text());
        src += w, off += w, n -= w;
    }
}

void FdFile::truncate(uint64_t size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) throw Error("cannot resize " + name_ + ": " + errno_text());
}

void FdFile::sync() {
    if (!durable_) return;
    if (::fsync(fd_) != 0 && errno != EINVAL) throw Error("cannot sync " + name_ + ": " + errno_text());
}

MemberWriter::MemberWriter(const std::string& dir) : dir_(dir) {
    dirfd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd_ < 0) throw Error("cannot open the folder " + dir + ": " + errno_text());
}

MemberWriter::~MemberWriter() { ::close(dirfd_); }

void MemberWriter::write(const std::string& name, bool force, const std::function<void(stz::RandomFile&)>& fill) {
    auto safe = stz::normalise_member_name(name);
    if (!safe || *safe != name || name[0] == '/') throw Error("unsafe member name (absolute, '..' or not normalised): refused");
    // Folders one by one, never through a symbolic link.
    int cur = ::dup(dirfd_);
    if (cur < 0) throw Error(errno_text());
    size_t start = 0;
    for (size_t slash; (slash = name.find('/', start)) != std::string::npos; start = slash + 1) {
        const std::string part = name.substr(start, slash - start);
        int next = ::openat(cur, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && ::mkdirat(cur, part.c_str(), 0777) == 0)
            next = ::openat(cur, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            const int e = errno;
            ::close(cur);
            throw Error("cannot enter folder " + name.substr(0, slash) + " under " + dir_ + ": " +
                        (e == ELOOP || e == ENOTDIR ? "a symbolic link or not a folder (refused)" : std::strerror(e)));
        }
        ::close(cur);
        cur = next;
    }
    const std::string leaf = name.substr(start);
    struct stat st;
    if (::fstatat(cur, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        // A symbolic link is replaced itself (never followed); a device or FIFO never is.
        const bool replaceable = S_ISREG(st.st_mode) || S_ISLNK(st.st_mode);
        if (!force || !replaceable) {
            ::close(cur);
            throw Error(dir_ + "/" + name + (replaceable ? " already exists; use -f to overwrite"
                                                         : " exists and is not a regular file (a device, FIFO or folder is never replaced)"));
        }
    }
    // Temp file beside the target, created exclusively (never through a link).
    std::random_device rd;
    std::string tmp;
    int fd = -1;
    std::optional<CleanupSignalsHeld> held(std::in_place);  // until the file is registered
    for (int tries = 0; fd < 0 && tries < 100; ++tries) {
        char buf[32];
        std::snprintf(buf, sizeof buf, ".stz-%08x", static_cast<unsigned>(rd()));
        tmp = buf;
        fd = ::openat(cur, tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, default_file_mode());
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        const int e = errno;
        ::close(cur);
        throw Error("cannot create a file in " + dir_ + "/" + name.substr(0, start) + ": " + std::strerror(e));
    }
    const std::string tmp_path = dir_ + "/" + name.substr(0, start) + tmp;
    const int slot = register_cleanup(tmp_path, false);
    held.reset();
    try {
        FdFile out(fd, tmp_path);
        fill(out);
        out.sync();
        int rc = -1;
#ifdef RENAME_NOREPLACE
        rc = ::renameat2(cur, tmp.c_str(), cur, leaf.c_str(), force ? 0 : RENAME_NOREPLACE);
        if (rc != 0 && force == false && (errno == EINVAL || errno == ENOSYS)) rc = ::linkat(cur, tmp.c_str(), cur, leaf.c_str(), 0);
#else
        rc = force ? ::renameat(cur, tmp.c_str(), cur, leaf.c_str()) : ::linkat(cur, tmp.c_str(), cur, leaf.c_str(), 0);
#endif
        if (rc != 0) throw Error("cannot rename into " + dir_ + "/" + name + ": " + errno_text());
        ::unlinkat(cur, tmp.c_str(), 0);  // after linkat; no-op after a rename
    } catch (...) {
        ::unlinkat(cur, tmp.c_str(), 0);
        unregister_cleanup(slot);
        ::close(cur);
        throw;
    }
    unregister_cleanup(slot);
    ::close(cur);
}

}  // namespace stzcli
