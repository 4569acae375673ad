// Helpers shared by the tests.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <random>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <vector>

#include "engine/engine.hpp"

namespace stztest {

// Exit code CTest maps to "skipped" (SKIP_RETURN_CODE in tests/CMakeLists.txt).
inline constexpr int kSkipExitCode = 77;

// The folders temp_dir made in this process, removed (with what they hold) when it ends:
// CTest runs one test case per process, so each case cleans up after itself, failed or not.
class TempDirs {
public:
    static TempDirs& instance() {
        static TempDirs dirs;
        return dirs;
    }
    void add(const std::string& d) { dirs_.push_back(d); }
    void remove_all() {
        for (const auto& d : dirs_) {
            std::error_code ec;
            // Tests make read-only folders (permission checks): writable again before removal.
            for (auto it = std::filesystem::recursive_directory_iterator(d, ec);
                 !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
                if (it->is_directory(ec) && !it->is_symlink(ec))
                    std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                                 std::filesystem::perm_options::add, ec);
            std::filesystem::permissions(d, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
            std::filesystem::remove_all(d, ec);
        }
        dirs_.clear();
    }
    ~TempDirs() { remove_all(); }

private:
    std::vector<std::string> dirs_;
};

// Ends this test process as skipped, saying why: a test that needs data or a capability it
// does not have must never report itself passed.
[[noreturn]] inline void skip_test(const std::string& why) {
    std::fprintf(stderr, "SKIPPED: %s\n", why.c_str());
    std::fflush(nullptr);
    TempDirs::instance().remove_all();  // _Exit runs no destructors
    std::_Exit(kSkipExitCode);
}

// The corpus folders of STATEZIP_CORPUS (':' or ';' separated; else the build's default),
// existing ones only.
inline std::vector<std::string> corpus_folders() {
    std::string spec;
    if (const char* e = std::getenv("STATEZIP_CORPUS"); e && *e) spec = e;
    else spec = STATEZIP_CORPUS_DEFAULT;
    std::vector<std::string> out;
    std::string cur;
    for (char c : spec + ":") {
        if (c == ':' || c == ';') {
            if (!cur.empty() && std::filesystem::is_directory(cur)) out.push_back(cur);
            cur.clear();
        } else cur += c;
    }
    return out;
}

inline stz::Bytes random_bytes(size_t n, uint64_t seed) {
    std::mt19937_64 g(seed);
    stz::Bytes b(n);
    for (auto& x : b) x = static_cast<uint8_t>(g());
    return b;
}

inline stz::Bytes read_file(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return stz::Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline void write_file(const std::string& p, const stz::Bytes& b) {
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// A copy of `from` at `to` with the byte at `at` inverted: always a change, whatever the byte
// held (writing a constant changes nothing where the byte already is that constant).
inline void copy_with_byte_inverted(const std::string& from, const std::string& to, size_t at) {
    stz::Bytes b = read_file(from);
    REQUIRE(at < b.size());
    b[at] ^= 0xff;
    write_file(to, b);
}

inline stz::Bytes compress_bytes(const stz::Bytes& in, const stz::CompressOptions& opt = {}) {
    stz::MemorySource src(in);
    stz::MemorySink sink;
    stz::compress_stream(src, sink, opt);
    return sink.out;
}

inline stz::Bytes decompress_bytes(const stz::Bytes& in, unsigned threads = 1) {
    stz::MemoryStream s(in);
    stz::MemorySink sink;
    stz::decompress_stream(s, sink, threads);
    return sink.out;
}

// Decompression as -t runs it (RecordCheck::BeforeDecode: every damaged byte is named) or as
// -d does (OnFailure: a chunk's record checksum only when it fails to decode as written).
inline stz::Bytes decompress_bytes(const stz::Bytes& in, stz::RecordCheck when) {
    stz::MemoryStream s(in);
    stz::MemorySink sink;
    stz::DecompressOptions opt;
    opt.record_check = when;
    stz::decompress_stream(s, sink, opt);
    return sink.out;
}

// What -d does with a damaged .stz: refuses it, or gives back exactly `original` (a damaged
// byte that decoding does not read, or that leaves every chunk as written, is no error there).
inline bool refused_or_exact(const stz::Bytes& damaged, const stz::Bytes& original) {
    try {
        return decompress_bytes(damaged, stz::RecordCheck::OnFailure) == original;
    } catch (const stz::Error&) {
        return true;
    }
}

// f16 bit patterns whose exponent depends on the channel (as K/V values do), random mantissas.
inline stz::Bytes channel_floats16(size_t rows, size_t cols, uint64_t seed) {
    std::mt19937_64 g(seed);
    stz::Bytes b;
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < cols; ++c) {
            unsigned e = 10 + c % 5 + (g() % 4 == 0 ? g() % 3 : 0);
            stz::append_le<uint16_t>(b, static_cast<uint16_t>((g() & 1) << 15 | e << 10 | (g() & 0x3ff)));
        }
    return b;
}

// A many-chunk input (2.9 MB): f16-like rows, a zero run, and random bytes (chunks that store).
inline stz::Bytes many_chunk_input() {
    stz::Bytes in = channel_floats16(2048, 512, 11);  // 2 MiB
    stz::Bytes noise = random_bytes(600000, 12);
    in.resize(in.size() + 300000, 0);
    stz::append_bytes(in, noise);
    return in;
}

// `in` compressed in chunks of 64 KiB: many_chunk_input gives ~45, more than the decoder's
// queue holds for any thread count the tests use.
inline stz::Bytes compress_in_small_chunks(const stz::Bytes& in) {
    stz::CompressOptions opt;
    opt.chunk_bytes = 64u << 10;
    return compress_bytes(in, opt);
}

// `n_f32` f32 values cycling through every special value (±0, ±Inf, NaN, denormals, extremes),
// then the f16 specials, then one odd byte.
inline stz::Bytes float_specials(int n_f32) {
    stz::Bytes f;
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f, 1e-40f, 3.4e38f, 1.0f, -2.5f};
    for (int i = 0; i < n_f32; ++i) stz::append_le<float>(f, specials[i % 11]);
    for (uint16_t h : {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x03ff, 0x3c00}) stz::append_le<uint16_t>(f, h);
    f.push_back(0x5a);  // odd length
    return f;
}

// Runs a shell command (/bin/sh); its exit status, or 128 + signal if a signal ended it.
inline int sh(const std::string& cmd) {
    int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

inline bool exists(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0;
}

inline std::string slurp(const std::string& p) {
    auto b = read_file(p);
    return std::string(b.begin(), b.end());
}

// 1 if `dir` holds a file whose name starts with '.', i.e. a leftover temporary, else 0.
inline int leftover_temp_files(const std::string& dir) {
    return sh("ls -A '" + dir + "' | grep -q '^\\.'") == 0 ? 1 : 0;
}

// A fresh empty directory under TMPDIR for one test, removed when the test process ends.
inline std::string temp_dir(const std::string& name) {
    const char* t = std::getenv("TMPDIR");
    std::string d = std::string(t && *t ? t : "/tmp") + "/statezip-test-" + name + "-" + std::to_string(::getpid());
    std::system(("rm -rf '" + d + "' && mkdir -p '" + d + "'").c_str());
    TempDirs::instance().add(d);
    return d;
}

}  // namespace stztest
