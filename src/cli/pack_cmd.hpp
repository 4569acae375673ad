// statezip pack / unpack / -l / -t of `.stzp` sets, and bench --set (src/lib/related/pack.hpp).
#pragma once
#include <string>
#include <vector>

#include "commands.hpp"
#include "related/pack.hpp"

namespace stzcli {

struct PackCliOptions {
    std::vector<std::string> files;
    std::string output;  // pack -o SET
    std::string append;  // pack --append SET
    std::string set;     // unpack SET
    std::string dir = ".";  // unpack -C DIR
    std::vector<std::string> names;  // unpack: members to restore (all when empty)
    bool force = false;
    int verbosity = 1;
    unsigned threads = 0;
    stz::CompressOptions compress;
};

int run_pack(const PackCliOptions& o);
int run_unpack(const PackCliOptions& o);
int run_pack_list(const std::string& set, int verbosity);
int run_pack_test(const std::string& set, const PackCliOptions& o);
// True when the file starts like a .stzp set (for -l and -t).
bool is_pack_file(const std::string& path);

// bench --set: one related set through statezip per file, pack, --patch-from chains (when
// built in) and the system tools on the whole set.
int run_bench_set(const BenchOptions& b);

// A random-access file descriptor (owned): sets being appended, members being restored.
class FdFile final : public stz::RandomFile {
public:
    // `durable`: sync() reaches the disk (an append to an existing set orders its records
    // before its commit); a new set is a temp file renamed when complete, like every output.
    FdFile(int fd, std::string name, bool durable = true);
    ~FdFile() override;
    uint64_t size() const override;
    void read_at(uint64_t off, uint8_t* dst, size_t n) override;
    void write_at(uint64_t off, const uint8_t* src, size_t n) override;
    void truncate(uint64_t size) override;
    void sync() override;
    int fd() const { return fd_; }

private:
    int fd_;
    std::string name_;
    bool durable_;
};

// unpack's output side: member names under DIR without leaving it. Opens each folder of a
// name with O_NOFOLLOW (creating missing ones), so that neither a ".." nor a symbolic link
// (present or planted meanwhile) leads out of DIR; writes a temp file there and renames it.
class MemberWriter {
public:
    explicit MemberWriter(const std::string& dir);
    ~MemberWriter();
    // Restores into `name` (relative, normalised) with `fill`; refuses an existing file unless `force`.
    void write(const std::string& name, bool force, const std::function<void(stz::RandomFile&)>& fill);

private:
    int dirfd_;
    std::string dir_;
};

}  // namespace stzcli
