// Files and pipes for the CLI: random-access input (stdin is spooled to an unlinked temp
// file when it is not seekable), sequential input, and outputs that are written to a
// temporary file in the target folder and renamed into place only when complete.
#pragma once
#include <signal.h>
#include <sys/stat.h>

#include <optional>
#include <string>

#include "base/io.hpp"

namespace stzcli {

using stz::Bytes;

class FileSource final : public stz::InputSource {
public:
    // path "-" = standard input.
    explicit FileSource(const std::string& path);
    ~FileSource() override;
    uint64_t size() const override { return size_; }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override;
    bool concurrent_reads() const override { return true; }  // pread
    const std::string& name() const { return name_; }
    // fstat of the open file (of standard input for "-").
    const struct stat& info() const { return info_; }

private:
    int fd_ = -1;
    uint64_t size_ = 0;
    struct stat info_ {};
    std::string name_;
};

// The bytes of a regular file from `base` on, read with pread (from any thread); the size is
// the file's at each call, as a sequential read would find it.
class FdRange final : public stz::InputSource {
public:
    FdRange(int fd, uint64_t base) : fd_(fd), base_(base) {}
    uint64_t size() const override;
    void read_at(uint64_t off, uint8_t* dst, size_t n) override;
    bool concurrent_reads() const override { return true; }

private:
    int fd_;
    uint64_t base_;
};

class FdStream final : public stz::InputStream {
public:
    explicit FdStream(const std::string& path);  // "-" = stdin
    ~FdStream() override;
    size_t read(uint8_t* dst, size_t n) override;
    // A regular file: its decoder reads chunk payloads by position, on the worker threads.
    stz::InputSource* positioned() override { return range_ ? &*range_ : nullptr; }
    void skip(uint64_t n) override;
    const struct stat& info() const { return info_; }  // fstat of the open file

private:
    void find_range();
    std::optional<FdRange> range_;
    int fd_ = -1;
    bool own_ = false;
    int pending_ = -1;  // a byte already read from a FIFO (when checking it has a writer), or -1
    struct stat info_ {};
    std::string name_;
};

// Buffered output to a file descriptor; errors (disk full, ...) become stz::Error.
class FdSink : public stz::OutputSink {
public:
    explicit FdSink(int fd, std::string name) : fd_(fd), name_(std::move(name)) { buf_.reserve(1 << 20); }
    ~FdSink() override = default;
    void write(const uint8_t* data, size_t n) override;
    void flush();

protected:
    void write_all(const uint8_t* data, size_t n);
    int fd_;
    std::string name_;
    Bytes buf_;
};

// Output to `target` through "<dir>/.stz-XXXXXX" (mkstemp; short, so that any name that
// fits the folder works): commit() moves it into place, without replacing a file that
// appeared meanwhile unless `force`; destruction without commit removes it. The temp path
// is registered so that SIGINT/SIGTERM/SIGHUP/SIGQUIT remove it too.
// An existing non-regular target (device node, FIFO) is opened and written in place, never
// replaced: /dev/null always, others with `force` (as zstd does).
class AtomicFile final : public FdSink {
public:
    // `input`: fstat of the input file when it is a regular file named on the command line
    // (refused as output; its permission bits and times are copied), nullptr otherwise (the
    // output then gets 0666 & ~umask).
    AtomicFile(const std::string& target, bool force, const struct stat* input);
    AtomicFile(const std::string& target, bool force, int mode);
    ~AtomicFile() override;
    void commit();
    // The temporary file (new, regular) takes writes at offsets, from any thread (pwrite).
    bool positioned_writes() const override { return !in_place_; }
    void write_at(uint64_t off, const uint8_t* data, size_t n) override;
    const std::string& temp_path() const { return temp_; }
    bool in_place() const { return in_place_; }  // a device or FIFO written directly

private:
    static std::string file_behind_link(const std::string& target);
    bool open_in_place(const struct stat* input);
    void open_temp(int mode);
    void move_into_place();
    std::string target_, temp_;
    struct stat input_ {};
    bool have_input_ = false, force_ = false, in_place_ = false, committed_ = false;
    int cleanup_slot_ = -1;
};

// Opens `path` read-only and fstats it into `st` without ever waiting in open(2): a FIFO that
// no process writes to is refused instead of waited for. Refuses a directory, and anything
// but a regular file when `regular_only`. For a FIFO, `first_byte` (when given) receives the
// byte read to find out whether a writer is there (-1 when none was read yet). The
// descriptor returned is blocking again.
int open_for_reading(const std::string& path, struct stat& st, bool regular_only, int* first_byte = nullptr);
bool path_exists(const std::string& p);
bool is_terminal(int fd);
void install_signal_handlers();
void remove_file(const std::string& p);
bool same_file(const struct stat& a, const struct stat& b);
// True if standard output is the regular file `input` (statezip -c X >> X).
bool stdout_is_file(const struct stat& input);
// 0666 & ~umask: the mode of files created from standard input.
int default_file_mode();

// Paths that a terminating signal removes (files first, then folders). Async-signal-safe
// slots; register returns -1 (nothing registered) when no slot is free or the path is too
// long to be stored whole.
int register_cleanup(const std::string& path, bool is_dir);
void unregister_cleanup(int slot);
// Holds the terminating signals back on this thread while it lives: create a file and register
// it for cleanup under one, so that a signal between the two cannot leave the file behind (it
// is delivered, and removes the file, once both are done).
class CleanupSignalsHeld {
public:
    CleanupSignalsHeld();
    ~CleanupSignalsHeld();
    CleanupSignalsHeld(const CleanupSignalsHeld&) = delete;
    CleanupSignalsHeld& operator=(const CleanupSignalsHeld&) = delete;

private:
    sigset_t old_;
};
// A child process that a terminating signal also stops (SIGTERM); 0 = none.
void set_running_child(pid_t pid);

}  // namespace stzcli
