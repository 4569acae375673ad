// Hostile uses of files, references and devices (second hardening pass): a --patch-from
// reference that --rm would remove or an output would replace, pack outputs that are devices,
// FIFOs or links to them, FIFOs without a writer (or reader) where statezip opens a file, a
// new set written over one an append holds, member sizes whose sum wraps, and the test
// suite's own temporary folders. Every statezip run here is bounded by `timeout`, so that a
// regression that blocks fails instead of hanging the suite; no test writes to a real device
// with -f (only through links in the test's folder, whose nodes are checked afterwards).
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cells_util.hpp"
#include "hostile_files.hpp"

using namespace stztest;

namespace {

const std::string kBin = "timeout -k 5 30 " + std::string(STATEZIP_BIN);
constexpr int kTimedOut = 124;

struct stat lstat_of(const std::string& p) {
    struct stat st {};
    ::lstat(p.c_str(), &st);
    return st;
}
struct stat stat_of(const std::string& p) {
    struct stat st {};
    ::stat(p.c_str(), &st);
    return st;
}

// Three saves of one session, each sharing most cells with the others.
void write_turns(const std::string& d) {
    stzsynth::Spec s;
    s.cells = 120;
    const stz::Bytes base = synth_state(s);
    const stz::CellGroup g = stz::find_cell_groups(parse_bytes(base)).at(0);
    stz::MemorySource src(base);
    stz::Bytes cell(g.cell_bytes);
    for (int t = 1; t <= 3; ++t) {
        stz::Bytes b = base;
        for (uint64_t i = 100; i < 100 + 5 * t; ++i) {
            stz::read_cells(src, g, i, 1, cell.data());
            for (auto& x : cell) x ^= static_cast<uint8_t>(t);
            write_cell(b, g, i, cell.data());
        }
        write_file(d + "/turn" + std::to_string(t) + ".bin", b);
    }
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// The same node as before: not replaced by a regular file, a link still a link to it.
bool same_node(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_mode == b.st_mode;
}

}  // namespace

TEST_CASE("hostile files: a --patch-from reference that --rm would remove is refused first", "[hostile][cli][patch]") {
    const std::string d = temp_dir("hf-ref-rm");
    write_turns(d);
    const stz::Bytes turn1 = read_file(d + "/turn1.bin");
    // The glob includes REF: nothing is written, nothing removed, one line, exit 2.
    CHECK(sh(kBin + " -q --rm --patch-from=" + d + "/turn1.bin " + d + "/turn1.bin " + d + "/turn2.bin " + d +
             "/turn3.bin 2> " + d + "/err") == 2);
    CHECK((read_file(d + "/turn1.bin") == turn1));
    CHECK(exists(d + "/turn2.bin"));
    CHECK(exists(d + "/turn3.bin"));
    CHECK_FALSE(exists(d + "/turn2.bin.stz"));
    CHECK_FALSE(exists(d + "/turn1.bin.stz"));
    const std::string err = slurp(d + "/err");
    CHECK(err.find("--patch-from reference") != std::string::npos);
    CHECK(lines(err) == 1);
    // The same file under another name (a link either way) is the same reference.
    sh("ln -s turn1.bin " + d + "/ref-link.bin && ln " + d + "/turn1.bin " + d + "/hard.bin");
    CHECK(sh(kBin + " -q --rm --patch-from=" + d + "/ref-link.bin " + d + "/turn1.bin 2>/dev/null") == 2);
    CHECK(sh(kBin + " -q --rm --patch-from=" + d + "/turn1.bin " + d + "/hard.bin 2>/dev/null") == 2);
    CHECK((read_file(d + "/turn1.bin") == turn1));
    CHECK(exists(d + "/hard.bin"));
    // -d --rm of the reference itself.
    REQUIRE(sh(kBin + " -q -o " + d + "/t2.stz " + d + "/turn2.bin") == 0);
    CHECK(sh(kBin + " -q -d --rm --patch-from=" + d + "/t2.stz -o " + d + "/x.bin " + d + "/t2.stz 2>/dev/null") == 2);
    CHECK(exists(d + "/t2.stz"));
    // pack and unpack take no reference: refused rather than ignored.
    CHECK(sh("cd " + d + " && " + kBin + " -q pack --patch-from=turn1.bin -o s.stzp turn3.bin 2>/dev/null") == 2);
    CHECK_FALSE(exists(d + "/s.stzp"));
    // Without the clash, --rm with a reference works: the input goes, REF stays.
    REQUIRE(sh(kBin + " -q --rm --patch-from=" + d + "/turn1.bin " + d + "/turn2.bin") == 0);
    CHECK_FALSE(exists(d + "/turn2.bin"));
    CHECK((read_file(d + "/turn1.bin") == turn1));
    CHECK(leftover_temp_files(d) == 0);
}

TEST_CASE("hostile files: an output that is the --patch-from reference is refused first", "[hostile][cli][patch]") {
    const std::string d = temp_dir("hf-ref-out");
    write_turns(d);
    REQUIRE(sh(kBin + " -q " + d + "/turn1.bin") == 0);  // turn1.bin.stz, used as REF below
    const stz::Bytes ref = read_file(d + "/turn1.bin.stz");
    // -f --patch-from=X.stz X: the output X.stz would replace its own REF.
    CHECK(sh(kBin + " -q -f --patch-from=" + d + "/turn1.bin.stz " + d + "/turn1.bin 2> " + d + "/err") == 2);
    CHECK((read_file(d + "/turn1.bin.stz") == ref));
    CHECK(lines(slurp(d + "/err")) == 1);
    // -d -f --patch-from=R -o R p.stz: would replace R and orphan every patch made against it.
    const stz::Bytes r = read_file(d + "/turn2.bin");
    REQUIRE(sh(kBin + " -q --patch-from=" + d + "/turn2.bin -o " + d + "/p.stz " + d + "/turn3.bin") == 0);
    CHECK(sh(kBin + " -q -d -f --patch-from=" + d + "/turn2.bin -o " + d + "/turn2.bin " + d + "/p.stz 2> " + d + "/err") == 2);
    CHECK((read_file(d + "/turn2.bin") == r));
    CHECK(slurp(d + "/err").find("choose another output") != std::string::npos);
    // An output name that is a link to REF.
    sh("ln -s turn2.bin " + d + "/out-link");
    CHECK(sh(kBin + " -q -d -f --patch-from=" + d + "/turn2.bin -o " + d + "/out-link " + d + "/p.stz 2>/dev/null") == 2);
    CHECK(S_ISLNK(lstat_of(d + "/out-link").st_mode));
    // Standard output appended to REF.
    CHECK(sh(kBin + " -q -c --patch-from=" + d + "/turn2.bin " + d + "/turn3.bin >> " + d + "/turn2.bin 2>/dev/null") == 2);
    CHECK(sh(kBin + " -q -d -c --patch-from=" + d + "/turn2.bin " + d + "/p.stz >> " + d + "/turn2.bin 2>/dev/null") == 2);
    CHECK((read_file(d + "/turn2.bin") == r));
    // REF is still what p.stz needs.
    CHECK(sh(kBin + " -q -t --patch-from=" + d + "/turn2.bin " + d + "/p.stz") == 0);
    CHECK(leftover_temp_files(d) == 0);
}

TEST_CASE("hostile files: pack writes devices, FIFOs and links to them in place, never replaces them",
          "[hostile][cli][pack]") {
    const std::string d = temp_dir("hf-pack-dev");
    write_turns(d);
    const std::string in = "turn1.bin turn2.bin";  // run in d: member names are relative
    const struct stat null_before = stat_of("/dev/null"), full_before = stat_of("/dev/full");
    REQUIRE(S_ISCHR(null_before.st_mode));
    // /dev/null without -f, as for compression (no -f here: this must never replace it).
    CHECK(sh("cd " + d + " && " + kBin + " -q pack -o /dev/null " + in) == 0);
    CHECK(same_node(stat_of("/dev/null"), null_before));
    // Links to devices in the test's folder: the link stays, the device is written.
    sh("ln -s /dev/null " + d + "/null-link");
    const struct stat link_before = lstat_of(d + "/null-link");
    CHECK(sh("cd " + d + " && " + kBin + " -q pack -f -o " + d + "/null-link " + in) == 0);
    CHECK(same_node(lstat_of(d + "/null-link"), link_before));
    if (S_ISCHR(full_before.st_mode)) {
        sh("ln -s /dev/full " + d + "/full-link");
        const struct stat full_link = lstat_of(d + "/full-link");
        CHECK(sh("cd " + d + " && " + kBin + " -q pack -f -o " + d + "/full-link " + in + " 2> " + d + "/err") == 1);
        CHECK(slurp(d + "/err").find("No space left") != std::string::npos);
        CHECK(same_node(lstat_of(d + "/full-link"), full_link));
        CHECK(same_node(stat_of("/dev/full"), full_before));
    }
    // A FIFO with a reader gets the whole set and stays a FIFO.
    REQUIRE(sh("mkfifo " + d + "/fifo") == 0);
    const struct stat fifo_before = lstat_of(d + "/fifo");
    CHECK(sh("timeout 30 cat " + d + "/fifo > " + d + "/from-fifo.stzp & reader=$!; cd " + d + " && " + kBin + " -q pack -f -o " +
             d + "/fifo " + in + "; rc=$?; wait $reader; exit $rc") == 0);
    CHECK(same_node(lstat_of(d + "/fifo"), fifo_before));
    CHECK(sh(kBin + " -q -t " + d + "/from-fifo.stzp") == 0);
    // A set to append to must be a regular file.
    CHECK(sh("cd " + d + " && " + kBin + " -q pack --append fifo " + in + " 2>/dev/null") == 1);
    CHECK(same_node(lstat_of(d + "/fifo"), fifo_before));
    CHECK(leftover_temp_files(d) == 0);
}

TEST_CASE("hostile files: a FIFO without a writer never blocks statezip", "[hostile][cli]") {
    const std::string d = temp_dir("hf-fifo");
    write_turns(d);
    REQUIRE(sh("mkfifo " + d + "/fifo") == 0);
    REQUIRE(sh("cd " + d + " && " + kBin + " -q pack -o set.stzp turn1.bin") == 0);
    const std::string f = d + "/fifo";
    for (const std::string args : {"--patch-from=fifo -o x.stz turn2.bin",  // REF
                                   "pack -o new.stzp fifo",                 // a pack input
                                   "-t fifo", "-l fifo", "-d -o x.out fifo",  // -t, -l, -d inputs
                                   "unpack fifo", "unpack set.stzp -C fifo"}) {
        INFO(args);
        const int rc = sh("cd " + d + " && " + kBin + " -q " + args + " 2> err");
        CHECK(rc != kTimedOut);
        CHECK(rc == 1);
        CHECK(lines(slurp(d + "/err")) >= 1);
    }
    CHECK_FALSE(exists(d + "/x.stz"));
    CHECK_FALSE(exists(d + "/new.stzp"));
    CHECK(S_ISFIFO(lstat_of(f).st_mode));
    // A FIFO as a member's target under -C: never replaced, even with -f.
    REQUIRE(sh("mkdir -p " + d + "/u && mkfifo " + d + "/u/turn1.bin") == 0);
    CHECK(sh("cd " + d + " && " + kBin + " -q pack -f -o set2.stzp turn1.bin") == 0);
    CHECK(sh(kBin + " -q unpack -f " + d + "/set2.stzp -C " + d + "/u 2>/dev/null") == 1);
    CHECK(S_ISFIFO(lstat_of(d + "/u/turn1.bin").st_mode));
    CHECK(leftover_temp_files(d + "/u") == 0);
}

TEST_CASE("hostile files: a FIFO with a writer is still read as a stream by -t and -d", "[hostile][cli]") {
    const std::string d = temp_dir("hf-fifo-writer");
    write_file(d + "/small.bin", stz::Bytes(3000, 'z'));
    REQUIRE(sh(kBin + " -q " + d + "/small.bin") == 0);
    const stz::Bytes stz_bytes = read_file(d + "/small.bin.stz");
    REQUIRE(stz_bytes.size() < 16384);  // fits a pipe buffer: the writes below never block
    REQUIRE(sh("mkfifo " + d + "/fifo") == 0);
    for (const std::string& args : {"-t " + d + "/fifo", "-d -f -o " + d + "/back.bin " + d + "/fifo"}) {
        INFO(args);
        // This process is the writer, there before statezip opens the FIFO (O_RDWR opens it
        // without waiting for a reader). It writes the whole stream, waits until the reader
        // has taken it all (bounded), then closes, which ends the reader's input.
        const int w = ::open((d + "/fifo").c_str(), O_RDWR | O_CLOEXEC);
        REQUIRE(w >= 0);
        REQUIRE(::write(w, stz_bytes.data(), stz_bytes.size()) == static_cast<ssize_t>(stz_bytes.size()));
        FILE* p = ::popen((kBin + " -q " + args).c_str(), "r");
        REQUIRE(p);
        int unread = 1;
        for (int tries = 0; tries < 3000 && ::ioctl(w, FIONREAD, &unread) == 0 && unread > 0; ++tries) ::usleep(10000);
        CHECK(unread == 0);
        ::close(w);
        const int status = ::pclose(p);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    CHECK((read_file(d + "/back.bin") == read_file(d + "/small.bin")));
}

TEST_CASE("hostile files: pack -f -o SET fails while an append holds SET", "[hostile][cli][pack]") {
    const std::string d = temp_dir("hf-pack-lock");
    write_turns(d);
    REQUIRE(sh("cd " + d + " && " + kBin + " -q pack -o set.stzp turn1.bin") == 0);
    const stz::Bytes before = read_file(d + "/set.stzp");
    {
        // The lock pack --append holds on the set while it appends.
        const int fd = ::open((d + "/set.stzp").c_str(), O_RDONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
        REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
        CHECK(sh("cd " + d + " && " + kBin + " -q pack -f -o set.stzp turn2.bin 2> err") == 1);
        CHECK(slurp(d + "/err").find("being written by another process") != std::string::npos);
        CHECK(sh("cd " + d + " && " + kBin + " -q pack --append set.stzp turn2.bin 2>/dev/null") == 1);
        ::close(fd);
    }
    CHECK((read_file(d + "/set.stzp") == before));
    CHECK(leftover_temp_files(d) == 0);
    // Unlocked, both work again.
    CHECK(sh("cd " + d + " && " + kBin + " -q pack --append set.stzp turn2.bin") == 0);
    CHECK(sh("cd " + d + " && " + kBin + " -q pack -f -o set.stzp turn3.bin") == 0);
    CHECK(sh(kBin + " -q -t " + d + "/set.stzp") == 0);
}

TEST_CASE("hostile files: -l of a set whose member sizes add up past 2^64 says so", "[hostile][cli][pack]") {
    const std::string d = temp_dir("hf-list-sum");
    write_file(d + "/huge.stzp", stzhostile::set_with_member_size(UINT64_MAX));
    const int rc = sh(kBin + " -l " + d + "/huge.stzp > " + d + "/list 2> " + d + "/err");
    const std::string list = slurp(d + "/list"), err = slurp(d + "/err");
    INFO(list << err);
    // Either the record is refused as damaged, or the total is not a wrapped sum.
    if (list.find("damaged member record") == std::string::npos) {
        CHECK(rc == 0);
        CHECK(list.find("16.00 EiB ->") != std::string::npos);  // the saturated sum
        CHECK(err.find("more than 16 EiB") != std::string::npos);
    } else {
        CHECK(rc == 1);
    }
    CHECK(list.find(" 999 B ->") == std::string::npos);  // 1000 + (2^64-1), wrapped
}

TEST_CASE("[.temp-dir-probe] makes two temp folders and says where", "[.temp-dir-probe]") {
    const std::string a = temp_dir("hf-probe"), b = temp_dir("hf-probe2");
    write_file(b + "/f", stz::Bytes(10, 1));
    std::printf("probe-dir=%s\nprobe-dir=%s\n", a.c_str(), b.c_str());
}

TEST_CASE("hostile files: the test suite's temporary folders go when a test process ends", "[hostile][tests]") {
    const std::string d = temp_dir("hf-cleanup");
    // Another process of this binary runs the probe above, then exits: its folders must be gone.
    REQUIRE(sh("/proc/" + std::to_string(::getpid()) + "/exe '[.temp-dir-probe]' > " + d + "/where 2>/dev/null") == 0);
    std::vector<std::string> dirs;
    const std::string out = slurp(d + "/where");
    for (size_t at = 0; (at = out.find("probe-dir=", at)) != std::string::npos;) {
        at += 10;
        dirs.push_back(out.substr(at, out.find('\n', at) - at));
    }
    REQUIRE(dirs.size() == 2);
    for (const auto& p : dirs) {
        INFO(p);
        CHECK(p.find("/statezip-test-hf-probe") != std::string::npos);
        CHECK_FALSE(exists(p));
    }
}

TEST_CASE("hostile files: an output that is a link to a regular file is written through the link", "[hostile][cli]") {
    const std::string d = temp_dir("hf-out-link");
    write_turns(d);
    write_file(d + "/real.stz", stz::Bytes{'o', 'l', 'd'});
    sh("ln -s real.stz " + d + "/out-link");
    const struct stat link_before = lstat_of(d + "/out-link");
    // Compression, decompression and pack: the link stays a link, the file behind it is replaced.
    CHECK(sh(kBin + " -q -f -o " + d + "/out-link " + d + "/turn1.bin") == 0);
    CHECK(same_node(lstat_of(d + "/out-link"), link_before));
    CHECK(sh(kBin + " -q -t " + d + "/real.stz") == 0);
    sh("ln -s turn-back.bin " + d + "/back-link && : > " + d + "/turn-back.bin");
    const struct stat back_before = lstat_of(d + "/back-link");
    CHECK(sh(kBin + " -q -d -f -o " + d + "/back-link " + d + "/real.stz") == 0);
    CHECK(same_node(lstat_of(d + "/back-link"), back_before));
    CHECK((read_file(d + "/turn-back.bin") == read_file(d + "/turn1.bin")));
    CHECK(sh("cd " + d + " && " + kBin + " -q pack -f -o out-link turn1.bin turn2.bin") == 0);
    CHECK(same_node(lstat_of(d + "/out-link"), link_before));
    CHECK(sh(kBin + " -l " + d + "/real.stz | grep -q turn2.bin") == 0);  // the set, behind the link
    CHECK(leftover_temp_files(d) == 0);
}
