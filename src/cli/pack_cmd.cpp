// statezip pack / unpack / -l / -t of `.stzp` sets.
#include "pack_cmd.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "file_io.hpp"
#include "report.hpp"

namespace stzcli {

using namespace stz;

namespace {

std::string errno_text() { return std::strerror(errno); }

// Member names for the inputs, in order; refuses names that cannot be made safe and repeats.
std::vector<std::string> member_names(const std::vector<std::string>& files) {
    std::vector<std::string> names;
    std::set<std::string> seen;
    for (const auto& f : files) {
        if (f == "-") throw Error("pack takes files, not standard input");
        auto n = normalise_member_name(f);
        if (!n) throw Error(f + ": cannot be a member name (empty, '..' or too long); pass it by a relative path without '..'");
        if (!seen.insert(*n).second) throw Error(f + ": given twice (member " + *n + ")");
        names.push_back(*n);
    }
    return names;
}

// The set must not be one of its inputs (same file after resolving links).
void refuse_set_as_input(const std::string& set, const std::vector<std::string>& files) {
    struct stat s, f;
    if (::stat(set.c_str(), &s) != 0) return;
    for (const auto& file : files)
        if (::stat(file.c_str(), &f) == 0 && same_file(s, f)) throw Error(file + ": is the set itself; choose another set name");
}

PackOptions pack_options(const PackCliOptions& o) {
    PackOptions p;
    p.compress = o.compress;
    p.compress.threads = resolve_threads(o.threads, UINT64_MAX);
    return p;
}

DecompressOptions restore_options(const PackCliOptions& o) {
    DecompressOptions d;
    d.threads = resolve_threads(o.threads, UINT64_MAX);
    d.memory_budget = o.compress.memory_budget;
    return d;
}

// Adds the files and commits; the inputs stay open until the commit (their new cells are
// read when the blocks they share are written).
void add_files(PackWriter& w, const PackCliOptions& o, const std::vector<std::string>& names) {
    std::vector<std::unique_ptr<FileSource>> sources;
    for (size_t i = 0; i < o.files.size(); ++i) {
        if (w.has_member(names[i])) throw Error(o.files[i] + ": the set already has a member " + names[i]);
        try {
            sources.push_back(std::make_unique<FileSource>(o.files[i]));
            w.add(*sources.back(), names[i]);
        } catch (const std::exception& e) {
            throw Error(o.files[i] + ": " + e.what());
        }
        for (size_t k = 0; k + w.pending() < sources.size(); ++k) sources[k].reset();  // settled: closed
    }
    const std::vector<PackAddResult> added = w.commit();
    for (size_t i = 0; i < added.size() && o.verbosity >= 1; ++i) {
        const PackAddResult& r = added[i];
        std::fprintf(stderr, "%s : %s => %s stored, %llu of %llu cells shared (%s)\n", printable(names[i]).c_str(),
                     human_bytes(r.size).c_str(), human_bytes(r.stored).c_str(), (unsigned long long)r.cells_shared,
                     (unsigned long long)r.cells, printable(r.format).c_str());
    }
}

// The lock an append holds on its set for the whole run. A new set written over an existing
// one (pack -f -o SET) takes it too, from the start until it has renamed its file into place,
// so that of a create and an append racing on one set, one fails instead of both exiting 0
// with the append lost on the replaced file.
class SetLock {
public:
    ~SetLock() {
        if (fd_ >= 0) ::close(fd_);
    }
    // Locks the regular file `path` names (not through a link: neither does an append); no-op
    // when there is none or it is locked already by this object.
    void take(const std::string& path) {
        if (fd_ >= 0) return;
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) return;
        struct stat st;
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            return;
        }
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            ::close(fd);
            throw Error(path + ": the set is being written by another process");
        }
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

// pack --append: the set is locked, cut back to its last commit and appended to.
int append_to(const PackCliOptions& o, const std::vector<std::string>& names) {
    int fd = ::open(o.append.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) throw Error(o.append + ": " + errno_text());
    FdFile f(fd, o.append);
    struct stat st, now;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw Error(o.append + ": not a regular file (a set is appended to in place)");
    if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) throw Error(o.append + ": " + errno_text());
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) throw Error(o.append + ": the set is being written by another process");
    auto w = PackWriter::append(f, pack_options(o), o.force);
    const uint64_t committed = f.size();
    // A new set renamed over this one after we opened it (its writer has let go of the lock
    // since): what we would append to is no longer the set.
    if (::lstat(o.append.c_str(), &now) != 0 || !same_file(now, st))
        throw Error(o.append + ": the set was replaced by another process meanwhile; run again");
    try {
        add_files(*w, o, names);
    } catch (...) {
        try {
            f.truncate(committed);  // readers would ignore these bytes anyway; the next append cuts them too
        } catch (...) {
        }
        throw;
    }
    return 0;
}

// An unlinked temporary file under $TMPDIR (a set built before it is copied to a device).
int unlinked_temp_file() {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/statezip-set.XXXXXX";
    int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd < 0) throw Error("cannot create a temporary file: " + errno_text());
    ::unlink(tmpl.c_str());
    return fd;
}

// pack -o SET (or --append of a missing SET): a new set, through AtomicFile like every
// output: a temp file renamed into place, or, for a device or FIFO (written in place, never
// replaced), built in a temporary file and then copied there (the writer needs random access).
void create_set(const std::string& target, const PackCliOptions& o, const std::vector<std::string>& names) {
    SetLock lock;
    lock.take(target);
    AtomicFile out(target, o.force, default_file_mode());
    const int fd = out.in_place() ? unlinked_temp_file() : ::open(out.temp_path().c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) throw Error(out.temp_path() + ": " + errno_text());
    FdFile f(fd, target, false);
    auto w = PackWriter::create(f, pack_options(o));
    add_files(*w, o, names);
    w.reset();
    if (out.in_place()) {
        Bytes buf(1 << 20);
        for (uint64_t off = 0, size = f.size(); off < size; off += buf.size()) {
            const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - off));
            f.read_at(off, buf.data(), n);
            out.write(buf.data(), n);
        }
    }
    lock.take(target);  // a set that appeared meanwhile (a racing append created it)
    out.commit();
}

}  // namespace

bool is_pack_file(const std::string& path) {
    if (path == "-") return false;
    // Non-blocking: a FIFO without a writer must not stop us here (a set is a regular file).
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return false;
    struct stat st;
    uint8_t m[8] = {};
    const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::pread(fd, m, 8, 0) == 8 &&
                    std::equal(m, m + 8, kPackMagic);
    ::close(fd);
    return ok;
}

int run_pack(const PackCliOptions& o) {
    if (o.files.empty() || (o.output.empty() && o.append.empty())) {  // usage errors: exit 2
        print_error("", o.files.empty() ? "pack needs at least one file" : "pack needs -o SET.stzp (or --append SET.stzp)");
        return 2;
    }
    if (o.compress.lossy.active()) {  // a set restores its members byte for byte
        print_error("", "--lossy cannot be combined with pack (sets store their members exactly)");
        return 2;
    }
    try {
        const std::vector<std::string> names = member_names(o.files);
        refuse_set_as_input(o.append.empty() ? o.output : o.append, o.files);
        if (!o.append.empty()) {
            if (path_exists(o.append)) return append_to(o, names);
        }
        create_set(o.append.empty() ? o.output : o.append, o, names);
        return 0;
    } catch (const std::exception& e) {
        print_error("", e.what());
        return 1;
    }
}

int run_unpack(const PackCliOptions& o) {
    try {
        FileSource src(o.set);
        PackReader r(src);
        std::vector<size_t> pick;
        if (o.names.empty()) {
            for (size_t i = 0; i < r.members().size(); ++i) pick.push_back(i);
        } else {
            for (const auto& n : o.names) {
                auto want = normalise_member_name(n);
                size_t i = 0;
                while (i < r.members().size() && !(r.members()[i].record && want && r.members()[i].record->name == *want)) ++i;
                if (i == r.members().size()) throw Error(n + ": no such member in " + o.set);
                pick.push_back(i);
            }
        }
        MemberWriter out(o.dir);
        int rc = 0;
        if (!r.state().damaged_commit.empty()) {
            print_error(o.set, r.state().damaged_commit + "; restoring the members of the commit before it");
            rc = 1;
        }
        for (size_t i : pick) {
            const PackMember& m = r.members()[i];
            const std::string label = m.record ? m.record->name : "member #" + std::to_string(i + 1);
            try {
                if (!m.record) throw Error("damaged member record at offset " + std::to_string(m.offset) + ": " + m.error);
                out.write(m.record->name, o.force, [&](RandomFile& f) { r.restore(i, f, restore_options(o)); });
                if (o.verbosity >= 2) std::fprintf(stderr, "%s : %s\n", printable(label).c_str(), human_bytes(m.record->size).c_str());
            } catch (const std::exception& e) {
                print_error(o.set + ": " + label, e.what());
                rc = 1;
            }
        }
        return rc;
    } catch (const std::exception& e) {
        print_error(o.set, e.what());
        return 1;
    }
}

int run_pack_list(const std::string& set, int verbosity) {
    try {
        FileSource src(set);
        PackReader r(src);
        // Member sizes are claims of the records: their sum saturates instead of wrapping.
        uint64_t total = 0;
        bool overflow = false;
        for (const auto& m : r.members())
            if (m.record) overflow |= __builtin_add_overflow(total, m.record->size, &total);
        if (overflow) {
            total = UINT64_MAX;
            print_error(set, "warning: the members claim more than 16 EiB (2^64 bytes) together; the total shown is "
                             "that bound (damaged or crafted set?)");
        }
        const uint64_t stored = src.size();
        std::printf("%s: set of %zu members, %s -> %s (ratio %.3f)\n", printable(set).c_str(), r.members().size(),
                    human_bytes(total).c_str(), human_bytes(stored).c_str(), stored ? double(total) / stored : 0.0);
        int rc = 0;
        if (!r.state().damaged_commit.empty()) {
            print_error(set, r.state().damaged_commit + "; listing the commit before it");
            rc = 1;
        }
        if (const uint64_t cells = pack_cell_bytes_claimed(r.members()); cells / kPlausibleCellReuse > stored)
            print_error(set, "warning: its cell runs re-use stored blocks to rebuild " + human_bytes(cells) +
                                 " of cells from a set of " + human_bytes(stored) + " (unpack writes that much)");
        if (r.state().trailing_bytes && r.state().damaged_commit.empty())
            std::printf("  note: %llu bytes after the last commit (an interrupted append; ignored)\n",
                        (unsigned long long)r.state().trailing_bytes);
        std::printf("  %-40s %12s %12s %10s %10s  %s\n", "member", "bytes", "stored", "cells", "shared", "format");
        for (size_t i = 0; i < r.members().size(); ++i) {
            const PackMember& m = r.members()[i];
            if (!m.record) {
                std::printf("  #%-39zu damaged member record at offset %llu: %s\n", i + 1, (unsigned long long)m.offset,
                            printable(m.error).c_str());
                rc = 1;
                continue;
            }
            const MemberRecord& mr = *m.record;
            std::printf("  %-40s %12llu %12llu %10llu %10llu  %s%s\n", printable(mr.name).c_str(), (unsigned long long)mr.size,
                        (unsigned long long)mr.stored_bytes, (unsigned long long)mr.cells, (unsigned long long)mr.cells_shared,
                        printable(mr.format).c_str(), verbosity >= 2 ? (" xxh128 " + hash128_hex(mr.hash)).c_str() : "");
        }
        return rc;
    } catch (const std::exception& e) {
        print_error(set, e.what());
        return 1;
    }
}

int run_pack_test(const std::string& set, const PackCliOptions& o) {
    try {
        FileSource src(set);
        // Within -M: a quarter for decoded blocks, a quarter for the window of a member being
        // hashed; nothing is written (a member may rebuild to far more than the set's size).
        const uint64_t quarter = std::max<uint64_t>(o.compress.memory_budget / 4, 1 << 20);
        PackReader r(src, std::min<uint64_t>(quarter, 256ull << 20));
        int rc = 0;
        if (!r.state().damaged_commit.empty()) {
            print_error(set, r.state().damaged_commit);
            rc = 1;
        }
        for (size_t i = 0; i < r.members().size(); ++i) {
            const PackMember& m = r.members()[i];
            const std::string label = m.record ? m.record->name : "member #" + std::to_string(i + 1);
            try {
                if (!m.record) throw Error("damaged member record at offset " + std::to_string(m.offset) + ": " + m.error);
                DecompressOptions every_byte = restore_options(o);  // a test names any damaged byte
                every_byte.record_check = RecordCheck::BeforeDecode;
                r.test(i, every_byte, std::min<uint64_t>(quarter, 64ull << 20));
                if (o.verbosity >= 1)
                    std::fprintf(stderr, "%s: %s : OK (%s)\n", printable(set).c_str(), printable(label).c_str(),
                                 human_bytes(m.record->size).c_str());
            } catch (const std::exception& e) {
                print_error(set + ": " + label, e.what());
                rc = 1;
            }
        }
        if (r.state().trailing_bytes && r.state().damaged_commit.empty() && o.verbosity >= 1)
            print_error(set, "note: " + std::to_string(r.state().trailing_bytes) +
                                 " bytes after the last commit (an interrupted append; ignored, cut by the next append)");
        return rc;
    } catch (const std::exception& e) {
        print_error(set, e.what());
        return 1;
    }
}

}  // namespace stzcli
