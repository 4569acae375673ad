// Files and pipes for the CLI: random-access input (stdin is spooled to an unlinked temp
// file when it is not seekable), sequential input, and outputs that are written to a
// temporary file in the target folder and renamed into place only when complete.
#pragma once
#include <string>

#include "io.hpp"

namespace stzcli {

using stz::Bytes;

class FileSource final : public stz::InputSource {
public:
    // path "-" = standard input.
    explicit FileSource(const std::string& path);
    ~FileSource() override;
    uint64_t size() const override { return size_; }
    void read_at(uint64_t off, uint8_t* dst, size_t n) override;
    const std::string& name() const { return name_; }
    int mode() const { return mode_; }

private:
    int fd_ = -1;
    uint64_t size_ = 0;
    int mode_ = 0644;
    std::string name_;
};

class FdStream final : public stz::InputStream {
public:
    explicit FdStream(const std::string& path);  // "-" = stdin
    ~FdStream() override;
    size_t read(uint8_t* dst, size_t n) override;

private:
    int fd_ = -1;
    bool own_ = false;
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
    int fd_;
    std::string name_;
    Bytes buf_;
};

// Output to `target` through "<dir>/.<name>.XXXXXX": commit() renames it into place;
// destruction without commit removes it. The temp path is registered so that SIGINT
// removes it too.
class AtomicFile final : public FdSink {
public:
    AtomicFile(const std::string& target, bool force, int mode);
    ~AtomicFile() override;
    void commit();
    const std::string& temp_path() const { return temp_; }

private:
    std::string target_, temp_;
    bool committed_ = false;
};

bool path_exists(const std::string& p);
bool is_terminal(int fd);
void install_signal_handlers();
void remove_file(const std::string& p);

}  // namespace stzcli
