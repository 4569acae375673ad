#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

namespace stzcli {

using stz::Error;

namespace {

std::string errno_text() { return std::strerror(errno); }

// The temp file being written, for the signal handler (one at a time).
char g_temp_path[4096];
std::atomic<bool> g_temp_set{false};

void on_signal(int sig) {
    if (g_temp_set.load()) ::unlink(g_temp_path);
    const char msg[] = "statezip: interrupted, partial output removed\n";
    ssize_t ignored = ::write(2, msg, sizeof msg - 1);
    (void)ignored;
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

}  // namespace

void install_signal_handlers() {
    for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, on_signal);
    ::signal(SIGXFSZ, SIG_IGN);  // a file-size limit becomes a write error (EFBIG) we report
    ::signal(SIGPIPE, SIG_IGN);  // a closed pipe becomes a write error (EPIPE) we report
}

bool path_exists(const std::string& p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0;
}

bool is_terminal(int fd) { return ::isatty(fd) == 1; }

void remove_file(const std::string& p) {
    if (::unlink(p.c_str()) != 0) throw Error("cannot remove " + p + ": " + errno_text());
}

FileSource::FileSource(const std::string& path) : name_(path == "-" ? "(stdin)" : path) {
    if (path == "-") {
        struct stat st;
        if (::fstat(0, &st) == 0 && S_ISREG(st.st_mode) && ::lseek(0, 0, SEEK_CUR) == 0) {
            fd_ = ::dup(0);
            size_ = st.st_size;
            return;
        }
        // A pipe: spool to an unlinked temporary file so parsers can seek (bounded memory).
        const char* tmpdir = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/statezip-stdin.XXXXXX";
        fd_ = ::mkstemp(tmpl.data());
        if (fd_ < 0) throw Error("cannot create a temporary file for standard input: " + errno_text());
        ::unlink(tmpl.c_str());
        Bytes buf(1 << 20);
        for (;;) {
            ssize_t n = ::read(0, buf.data(), buf.size());
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) throw Error("cannot read standard input: " + errno_text());
            if (n == 0) break;
            for (ssize_t done = 0; done < n;) {
                ssize_t w = ::write(fd_, buf.data() + done, n - done);
                if (w < 0 && errno == EINTR) continue;
                if (w < 0) throw Error("cannot spool standard input: " + errno_text());
                done += w;
            }
            size_ += n;
        }
        return;
    }
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(errno_text());
    struct stat st;
    if (::fstat(fd_, &st) != 0) throw Error(errno_text());
    if (S_ISDIR(st.st_mode)) {
        ::close(fd_);
        fd_ = -1;
        throw Error("is a directory");
    }
    if (!S_ISREG(st.st_mode)) throw Error("not a regular file");
    size_ = st.st_size;
    mode_ = st.st_mode & 07777;
}

FileSource::~FileSource() {
    if (fd_ >= 0) ::close(fd_);
}

void FileSource::read_at(uint64_t off, uint8_t* dst, size_t n) {
    if (off > size_ || n > size_ - off) throw stz::DataError("read past the end of the input", off);
    while (n > 0) {
        ssize_t r = ::pread(fd_, dst, n, static_cast<off_t>(off));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw Error("read error: " + errno_text());
        if (r == 0) throw Error("the input file shrank while it was being read");
        dst += r;
        off += r;
        n -= r;
    }
}

FdStream::FdStream(const std::string& path) : name_(path) {
    if (path == "-") {
        fd_ = 0;
        return;
    }
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(errno_text());
    struct stat st;
    if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
        ::close(fd_);
        fd_ = -1;
        throw Error("is a directory");
    }
    own_ = true;
}

FdStream::~FdStream() {
    if (own_ && fd_ >= 0) ::close(fd_);
}

size_t FdStream::read(uint8_t* dst, size_t n) {
    for (;;) {
        ssize_t r = ::read(fd_, dst, n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw Error("read error: " + errno_text());
        return static_cast<size_t>(r);
    }
}

void FdSink::write(const uint8_t* data, size_t n) {
    if (buf_.size() + n > buf_.capacity()) flush();
    if (n >= buf_.capacity()) {
        buf_.assign(data, data + n);
        flush();
        return;
    }
    buf_.insert(buf_.end(), data, data + n);
}

void FdSink::flush() {
    size_t done = 0;
    while (done < buf_.size()) {
        ssize_t w = ::write(fd_, buf_.data() + done, buf_.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) throw Error("cannot write " + name_ + ": " + errno_text());
        done += w;
    }
    buf_.clear();
}

AtomicFile::AtomicFile(const std::string& target, bool force, int mode) : FdSink(-1, target), target_(target) {
    if (!force && path_exists(target)) throw Error(target + " already exists; use -f to overwrite");
    std::string dir = ".", base = target;
    if (auto slash = target.rfind('/'); slash != std::string::npos) {
        dir = target.substr(0, slash);
        if (dir.empty()) dir = "/";
        base = target.substr(slash + 1);
    }
    temp_ = dir + "/." + base + ".XXXXXX";
    fd_ = ::mkstemp(temp_.data());
    if (fd_ < 0) throw Error("cannot create a file in " + dir + ": " + errno_text());
    ::fchmod(fd_, mode & 0666);
    std::snprintf(g_temp_path, sizeof g_temp_path, "%s", temp_.c_str());
    g_temp_set = true;
}

AtomicFile::~AtomicFile() {
    if (!committed_) {
        g_temp_set = false;
        if (fd_ >= 0) ::close(fd_);
        ::unlink(temp_.c_str());
    }
}

void AtomicFile::commit() {
    flush();
    if (::close(fd_) != 0) {
        fd_ = -1;
        throw Error("cannot write " + target_ + ": " + errno_text());
    }
    fd_ = -1;
    if (::rename(temp_.c_str(), target_.c_str()) != 0) throw Error("cannot rename into " + target_ + ": " + errno_text());
    g_temp_set = false;
    committed_ = true;
}

}  // namespace stzcli
