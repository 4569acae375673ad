#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace stzcli {

using stz::Error;

namespace {

std::string errno_text() { return std::strerror(errno); }

// n bytes at `off` of a regular file (any thread); the file ending first means it shrank.
void pread_all(int fd, uint64_t off, uint8_t* dst, size_t n) {
    while (n > 0) {
        ssize_t r = ::pread(fd, dst, n, static_cast<off_t>(off));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw Error("read error: " + errno_text());
        if (r == 0) throw Error("the input file shrank while it was being read");
        dst += r;
        off += r;
        n -= r;
    }
}

// Paths for the signal handler: a fixed table, so the handler needs no allocation or lock.
constexpr int kCleanupSlots = 8;
constexpr size_t kCleanupPathMax = 4096;
char g_cleanup_path[kCleanupSlots][kCleanupPathMax];
std::atomic<int> g_cleanup_kind[kCleanupSlots];  // 0 free, 1 file, 2 folder, 3 being written
std::atomic<pid_t> g_child{0};                    // a running helper process (bench), or 0

void on_signal(int sig) {
    if (pid_t child = g_child.load(); child > 0) ::kill(child, SIGTERM);
    for (int kind : {1, 2})
        for (int i = 0; i < kCleanupSlots; ++i)
            if (g_cleanup_kind[i].load() == kind) kind == 1 ? ::unlink(g_cleanup_path[i]) : ::rmdir(g_cleanup_path[i]);
    const char msg[] = "statezip: interrupted, partial output removed\n";
    ssize_t ignored = ::write(2, msg, sizeof msg - 1);
    (void)ignored;
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

}  // namespace

int register_cleanup(const std::string& path, bool is_dir) {
    if (path.size() >= kCleanupPathMax) return -1;
    for (int i = 0; i < kCleanupSlots; ++i) {
        int expected = 0;
        if (!g_cleanup_kind[i].compare_exchange_strong(expected, 3)) continue;
        std::memcpy(g_cleanup_path[i], path.c_str(), path.size() + 1);
        g_cleanup_kind[i] = is_dir ? 2 : 1;
        return i;
    }
    return -1;
}

void unregister_cleanup(int slot) {
    if (slot >= 0 && slot < kCleanupSlots) g_cleanup_kind[slot] = 0;
}

CleanupSignalsHeld::CleanupSignalsHeld() {
    sigset_t held;
    sigemptyset(&held);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&held, s);
    pthread_sigmask(SIG_BLOCK, &held, &old_);
}
CleanupSignalsHeld::~CleanupSignalsHeld() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

void set_running_child(pid_t pid) { g_child = pid; }

int default_file_mode() {
    // umask can only be read by setting it; done once, early (install_signal_handlers), before
    // any thread exists.
    static const int mode = [] {
        mode_t m = ::umask(022);
        ::umask(m);
        return 0666 & ~static_cast<int>(m);
    }();
    return mode;
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

bool stdout_is_file(const struct stat& input) {
    struct stat out;
    return S_ISREG(input.st_mode) && ::fstat(1, &out) == 0 && S_ISREG(out.st_mode) && same_file(out, input);
}

void install_signal_handlers() {
    default_file_mode();
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
        struct sigaction old {};
        // nohup: an inherited SIG_IGN for SIGHUP stays. (Shells also ignore SIGINT and SIGQUIT
        // in background jobs; those still stop us, cleanly, when sent on purpose.)
        if (s == SIGHUP && ::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        ::signal(s, on_signal);
    }
    ::signal(SIGXFSZ, SIG_IGN);  // a file-size limit becomes a write error (EFBIG) we report
    ::signal(SIGPIPE, SIG_IGN);  // a closed pipe becomes a write error (EPIPE) we report
}

int open_for_reading(const std::string& path, struct stat& st, bool regular_only, int* first_byte) {
    // O_NONBLOCK: open(2) of a FIFO would otherwise wait for a writer, forever if none comes.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) throw Error(errno_text());
    auto refuse = [&](const std::string& why) {
        ::close(fd);
        throw Error(why);
    };
    if (::fstat(fd, &st) != 0) refuse(errno_text());
    if (S_ISDIR(st.st_mode)) refuse("is a directory");
    if (regular_only && !S_ISREG(st.st_mode))
        refuse(S_ISFIFO(st.st_mode) ? "is a FIFO, not a regular file (it must be read more than once)" : "not a regular file");
    if (first_byte) *first_byte = -1;
    if (S_ISFIFO(st.st_mode) && first_byte) {
        // Still non-blocking: 0 bytes now means no process has the FIFO open for writing (a
        // blocking read would return the same); EAGAIN means a writer is there, data to come.
        uint8_t b = 0;
        ssize_t r;
        do r = ::read(fd, &b, 1);
        while (r < 0 && errno == EINTR);
        if (r == 0) refuse("a FIFO that no process is writing to");
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) refuse("read error: " + errno_text());
        if (r == 1) *first_byte = b;
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) refuse(errno_text());
    return fd;
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
        struct stat& st = info_;
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
    fd_ = open_for_reading(path, info_, true);
    size_ = info_.st_size;
}

FileSource::~FileSource() {
    if (fd_ >= 0) ::close(fd_);
}

void FileSource::read_at(uint64_t off, uint8_t* dst, size_t n) {
    if (off > size_ || n > size_ - off) throw stz::DataError("read past the end of the input", off);
    pread_all(fd_, off, dst, n);
}

uint64_t FdRange::size() const {
    struct stat st;
    if (::fstat(fd_, &st) != 0) throw Error("read error: " + errno_text());
    return static_cast<uint64_t>(st.st_size) > base_ ? static_cast<uint64_t>(st.st_size) - base_ : 0;
}

void FdRange::read_at(uint64_t off, uint8_t* dst, size_t n) {
    if (off > UINT64_MAX - base_ - n) throw stz::DataError("read past the end of the input", off);
    off += base_;
    pread_all(fd_, off, dst, n);
}

FdStream::FdStream(const std::string& path) : name_(path) {
    if (path == "-") {
        fd_ = 0;
        ::fstat(0, &info_);
    } else {
        fd_ = open_for_reading(path, info_, false, &pending_);
        own_ = true;
    }
    find_range();
}

// Standard input redirected from a file counts from where it stands (it may not be the start).
void FdStream::find_range() {
    if (!S_ISREG(info_.st_mode) || pending_ >= 0) return;
    const off_t at = ::lseek(fd_, 0, SEEK_CUR);
    if (at >= 0) range_.emplace(fd_, static_cast<uint64_t>(at));
}

void FdStream::skip(uint64_t n) {
    if (!range_ || n > static_cast<uint64_t>(INT64_MAX) || ::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) < 0)
        throw Error("read error: cannot skip in the input");
}

FdStream::~FdStream() {
    if (own_ && fd_ >= 0) ::close(fd_);
}

size_t FdStream::read(uint8_t* dst, size_t n) {
    if (pending_ >= 0 && n > 0) {  // the byte read when the FIFO was probed for a writer
        dst[0] = static_cast<uint8_t>(pending_);
        pending_ = -1;
        return 1;
    }
    for (;;) {
        ssize_t r = ::read(fd_, dst, n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw Error("read error: " + errno_text());
        return static_cast<size_t>(r);
    }
}

void FdSink::write(const uint8_t* data, size_t n) {
    // Chunks and payloads go straight from the caller's bytes (copying them into the buffer was
    // a third of the writing thread's work); small pieces (record heads) are gathered.
    constexpr size_t kDirect = 64u << 10;
    if (n >= kDirect || buf_.size() + n > buf_.capacity()) flush();
    if (n >= kDirect) return write_all(data, n);
    stz::append_bytes(buf_, {data, n});
}

void FdSink::write_all(const uint8_t* data, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t w = ::write(fd_, data + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) throw Error("cannot write " + name_ + ": " + errno_text());
        done += w;
    }
}

void AtomicFile::write_at(uint64_t off, const uint8_t* data, size_t n) {
    while (n > 0) {
        ssize_t w = ::pwrite(fd_, data, n, static_cast<off_t>(off));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) throw Error("cannot write " + name_ + ": " + errno_text());
        data += w, off += w, n -= w;
    }
}

void FdSink::flush() {
    write_all(buf_.data(), buf_.size());
    buf_.clear();
}

AtomicFile::AtomicFile(const std::string& target, bool force, const struct stat* input)
    : FdSink(-1, target), target_(file_behind_link(target)), force_(force) {
    if (input) input_ = *input, have_input_ = true;
    if (open_in_place(input)) return;
    if (!force && path_exists(target)) throw Error(target + " already exists; use -f to overwrite");
    open_temp(input ? static_cast<int>(input->st_mode & 0777) : default_file_mode());
}

AtomicFile::AtomicFile(const std::string& target, bool force, int mode)
    : FdSink(-1, target), target_(file_behind_link(target)), force_(force) {
    if (open_in_place(nullptr)) return;
    if (!force && path_exists(target)) throw Error(target + " already exists; use -f to overwrite");
    open_temp(mode & 0777);
}

// A target that is a symbolic link to a regular file is written through the link, as zstd
// does: the temporary file goes beside the file the link leads to and is renamed over it, so
// the link itself (`-o /dev/stdout` redirected to a file, a link the user keeps) is never
// replaced by a regular file. Links to devices and FIFOs are opened in place anyway; a link
// whose file cannot be named again (a deleted file behind /proc/self/fd) is refused.
std::string AtomicFile::file_behind_link(const std::string& target) {
    struct stat lst, st;
    if (::lstat(target.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) return target;
    if (::stat(target.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return target;
    std::unique_ptr<char, decltype(&::free)> resolved(::realpath(target.c_str(), nullptr), &::free);
    struct stat rst;
    if (!resolved || ::stat(resolved.get(), &rst) != 0 || !same_file(rst, st))
        throw Error(target + " is a link to a file that cannot be named: write to the file itself");
    return resolved.get();
}

// An existing target that is (through any links) a device or FIFO is opened and written in
// place, never renamed over or unlinked; false when there is no such target.
bool AtomicFile::open_in_place(const struct stat* input) {
    struct stat st;
    if (::stat(target_.c_str(), &st) != 0) return false;  // follows links: what the name leads to
    if (input && same_file(st, *input)) throw Error("the output " + target_ + " is the input file; choose another output");
    if (S_ISDIR(st.st_mode)) throw Error(target_ + " is a directory");
    if (S_ISREG(st.st_mode)) return false;
    struct stat null_dev;
    const bool is_null = ::stat("/dev/null", &null_dev) == 0 && same_file(st, null_dev);
    if (!force_ && !is_null) throw Error(target_ + " already exists; use -f to write to it");
    // A FIFO waits here for its reader, as for any writer (`cat FIFO & statezip -o FIFO`).
    fd_ = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) throw Error("cannot open " + target_ + ": " + errno_text());
    in_place_ = true;
    return true;
}

void AtomicFile::open_temp(int mode) {
    std::string dir = ".";
    if (auto slash = target_.rfind('/'); slash != std::string::npos) dir = slash ? target_.substr(0, slash) : "/";
    temp_ = dir + "/.stz-XXXXXX";
    CleanupSignalsHeld held;
    fd_ = ::mkostemp(temp_.data(), O_CLOEXEC);
    if (fd_ < 0) throw Error("cannot create a file in " + dir + ": " + errno_text());
    cleanup_slot_ = register_cleanup(temp_, false);
    ::fchmod(fd_, static_cast<mode_t>(mode));
}

AtomicFile::~AtomicFile() {
    if (committed_) return;
    if (fd_ >= 0) ::close(fd_);
    if (in_place_) return;
    unregister_cleanup(cleanup_slot_);
    ::unlink(temp_.c_str());
}

void AtomicFile::commit() {
    flush();
    if (have_input_ && !in_place_) {
        const struct timespec times[2] = {input_.st_atim, input_.st_mtim};
        ::futimens(fd_, times);  // best effort, like zstd: the data is what matters
    }
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw Error("cannot write " + target_ + ": " + errno_text());
    if (!in_place_) move_into_place();
    committed_ = true;
}

// rename(2) when replacing is allowed; otherwise an atomic no-replace move, so that of two
// runs writing the same new name, the second fails instead of replacing the first's output.
void AtomicFile::move_into_place() {
    if (force_) {
        if (::rename(temp_.c_str(), target_.c_str()) != 0) throw Error("cannot rename into " + target_ + ": " + errno_text());
    } else {
        int rc = -1;
#ifdef RENAME_NOREPLACE
        rc = ::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE);
#else
        errno = ENOSYS;
#endif
        if (rc != 0 && (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP)) {
            // No renameat2 on this system or file system: link() also refuses an existing name.
            rc = ::link(temp_.c_str(), target_.c_str());
            if (rc == 0) ::unlink(temp_.c_str());
        }
        if (rc != 0 && errno == EEXIST) throw Error(target_ + " appeared while it was being written; use -f to overwrite");
        if (rc != 0) throw Error("cannot rename into " + target_ + ": " + errno_text());
    }
    unregister_cleanup(cleanup_slot_);
}

}  // namespace stzcli
