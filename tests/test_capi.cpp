// The C API (include/statezip.h): round trips, the same bytes as the CLI, error codes and
// details, streaming through callbacks, bad input through both decoders.
#include <catch2/catch.hpp>

#include <filesystem>
#include <thread>

#include "spool.hpp"
#include "statezip.h"
#include "synth.hpp"
#include "test_util.hpp"

using namespace stztest;
namespace fs = std::filesystem;

namespace {

const std::string kBin = STATEZIP_BIN;
const std::string kData = STATEZIP_TEST_DATA;

stz_params params_for(int preset, int threads = 0, const char* codec = nullptr) {
    stz_params p;
    stz_params_init(&p);
    p.preset = preset;
    p.threads = threads;
    p.codec = codec;
    return p;
}

stz::Bytes api_compress(const stz::Bytes& in, const stz_params* p) {
    stz::Bytes out(stz_compress_bound(in.size()));
    size_t n = 0;
    const int rc = stz_compress(in.data(), in.size(), out.data(), out.size(), &n, p);
    INFO(stz_last_error_detail());
    REQUIRE(rc == STZ_OK);
    out.resize(n);
    return out;
}

stz::Bytes api_decompress(const stz::Bytes& in) {
    uint64_t size = 0;
    REQUIRE(stz_decompressed_size(in.data(), in.size(), &size) == STZ_OK);
    stz::Bytes out(size);
    size_t n = 0;
    const int rc = stz_decompress(in.data(), in.size(), out.data(), out.size(), &n);
    INFO(stz_last_error_detail());
    REQUIRE(rc == STZ_OK);
    REQUIRE(n == size);
    return out;
}

stz::Bytes synth_file(const std::string& flavour, uint32_t cells, uint64_t seed) {
    stzsynth::Spec s;
    s.flavour = flavour;
    s.cells = cells;
    s.seed = seed;
    stz::MemorySink sink;
    stzsynth::write_state(s, sink);
    return sink.out;
}

// Callback contexts: a buffer read in pieces of at most `step` bytes, a growing buffer.
struct Reader {
    const stz::Bytes* data;
    size_t pos = 0, step = 1000;
    long long fail_at = -1;  // return -1 once this many bytes were read
};
long long read_cb(void* ctx, void* buf, size_t n) {
    auto* r = static_cast<Reader*>(ctx);
    if (r->fail_at >= 0 && r->pos >= size_t(r->fail_at)) return -1;
    n = std::min({n, r->step, r->data->size() - r->pos});
    if (n) std::memcpy(buf, r->data->data() + r->pos, n);
    r->pos += n;
    return static_cast<long long>(n);
}
struct Writer {
    stz::Bytes out;
    size_t limit = SIZE_MAX;  // fail once the output would pass it
};
int write_cb(void* ctx, const void* buf, size_t n) {
    auto* w = static_cast<Writer*>(ctx);
    if (w->out.size() + n > w->limit) return 1;
    w->out.insert(w->out.end(), static_cast<const uint8_t*>(buf), static_cast<const uint8_t*>(buf) + n);
    return 0;
}

int stream_decompress(const stz::Bytes& in, stz::Bytes& out, size_t step = 4096) {
    Reader r{&in};
    r.step = step;
    Writer w;
    const int rc = stz_decompress_stream(read_cb, &r, write_cb, &w, 2);
    out = std::move(w.out);
    return rc;
}

}  // namespace

TEST_CASE("capi: version and params", "[capi]") {
    CHECK(std::string(stz_version_string()) == STATEZIP_VERSION_STRING);
    CHECK(STATEZIP_VERSION_NUMBER == STATEZIP_VERSION_MAJOR * 10000 + STATEZIP_VERSION_MINOR * 100 + STATEZIP_VERSION_PATCH);
    stz_params p;
    std::memset(&p, 0xff, sizeof p);
    stz_params_init(&p);
    CHECK(p.struct_size == sizeof p);
    CHECK(p.preset == STZ_PRESET_DEFAULT);
    CHECK(p.threads == 0);
    CHECK(p.codec == nullptr);
    CHECK(p.lossy == nullptr);
    CHECK(std::string(stz_error_message(STZ_ERROR_DST_TOO_SMALL)) == "destination buffer too small");
    CHECK(std::string(stz_error_message(-1000)) == "unknown error code");
}

TEST_CASE("capi: synthetic files of every flavour round-trip for every preset", "[capi]") {
    for (const auto& flavour : stzsynth::flavours())
        for (int preset : {STZ_PRESET_FAST, STZ_PRESET_DEFAULT, STZ_PRESET_MAX}) {
            INFO(flavour << " preset " << preset);
            const stz::Bytes in = synth_file(flavour, 60, 7);
            const stz_params p = params_for(preset);
            const stz::Bytes z = api_compress(in, &p);
            CHECK(z.size() <= stz_compress_bound(in.size()));
            CHECK(api_decompress(z) == in);
            stz::Bytes streamed;
            CHECK(stream_decompress(z, streamed, 777) == STZ_OK);
            CHECK(streamed == in);
        }
    // NULL params = the default preset; empty input; random bytes within the bound.
    const stz::Bytes in = synth_file("seq3", 40, 3);
    const stz_params d = params_for(STZ_PRESET_DEFAULT, 1);
    CHECK(api_compress(in, nullptr) == api_compress(in, &d));
    for (size_t n : {size_t(0), size_t(1), size_t(100), size_t(70000)}) {
        const stz::Bytes r = random_bytes(n, n + 1);
        const stz::Bytes z = api_compress(r, nullptr);
        CHECK(z.size() <= stz_compress_bound(n));
        CHECK(api_decompress(z) == r);
    }
}

TEST_CASE("capi: the same bytes as the CLI for each preset, and each decodes the other's", "[capi]") {
    const std::string dir = temp_dir("capi-cli");
    const std::string src = kData + "/ggsq3.stories260K.f16.fa1.c1024.t322.bin";
    const stz::Bytes in = read_file(src);
    REQUIRE(!in.empty());
    struct Case {
        const char* flag;
        stz_params p;
    };
    const Case cases[] = {{"--fast", params_for(STZ_PRESET_FAST)},
                          {"", params_for(STZ_PRESET_DEFAULT, 1)},
                          {"--max", params_for(STZ_PRESET_MAX, 3)},
                          {"--codec zstd:3", params_for(STZ_PRESET_DEFAULT, 0, "zstd:3")}};
    for (const Case& c : cases) {
        INFO(c.flag);
        const std::string out = dir + "/cli.stz";
        REQUIRE(sh(kBin + " -q -f " + c.flag + " '" + src + "' -o '" + out + "'") == 0);
        const stz::Bytes cli = read_file(out);
        const stz::Bytes api = api_compress(in, &c.p);
        CHECK(cli == api);
        CHECK(api_decompress(cli) == in);
        write_file(dir + "/api.stz", api);
        REQUIRE(sh(kBin + " -q -f -d '" + dir + "/api.stz' -o '" + dir + "/back.bin'") == 0);
        CHECK(read_file(dir + "/back.bin") == in);
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("capi: stz_inspect_json is the object inspect --json prints", "[capi]") {
    const std::string dir = temp_dir("capi-inspect");
    const std::string src = kData + "/ggsq3.stories260K-hd32.q8_0.fa1.c1024.t322.bin";
    const stz::Bytes in = read_file(src);
    const stz::Bytes z = api_compress(in, nullptr);
    write_file(dir + "/f.stz", z);
    for (const auto& [path, bytes] : {std::pair{src, in}, std::pair{dir + "/f.stz", z}}) {
        REQUIRE(sh(kBin + " inspect --json '" + path + "' > '" + dir + "/cli.json'") == 0);
        std::string cli = slurp(dir + "/cli.json");
        const std::string quoted = "\"" + path + "\"";
        REQUIRE(cli.find(quoted) != std::string::npos);
        cli.replace(cli.find(quoted), quoted.size(), "\"-\"");
        char* json = nullptr;
        REQUIRE(stz_inspect_json(bytes.data(), bytes.size(), &json) == STZ_OK);
        CHECK(std::string(json) + "\n" == cli);
        stz_free(json);
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("capi: a too-small destination has its own code, for both directions", "[capi]") {
    const stz::Bytes in = synth_file("session9", 50, 2);
    const stz::Bytes z = api_compress(in, nullptr);
    stz::Bytes buf(z.size() - 1);
    size_t n = 1;
    CHECK(stz_compress(in.data(), in.size(), buf.data(), buf.size(), &n, nullptr) == STZ_ERROR_DST_TOO_SMALL);
    CHECK(n == 0);
    CHECK(std::string(stz_last_error_detail()).find("too small") != std::string::npos);
    stz::Bytes raw(in.size() - 1);
    CHECK(stz_decompress(z.data(), z.size(), raw.data(), raw.size(), &n) == STZ_ERROR_DST_TOO_SMALL);
    CHECK(stz_decompress(z.data(), z.size(), nullptr, 0, &n) == STZ_ERROR_DST_TOO_SMALL);
    // The header alone tells the size.
    uint64_t size = 0;
    CHECK(stz_decompressed_size(z.data(), std::min<size_t>(z.size(), 4096), &size) == STZ_OK);
    CHECK(size == in.size());
    // The detail names the size the file needs.
    CHECK(stz_decompress(z.data(), z.size(), raw.data(), raw.size(), &n) == STZ_ERROR_DST_TOO_SMALL);
    CHECK(std::string(stz_last_error_detail()).find(std::to_string(in.size())) != std::string::npos);
    CHECK(n == 0);
}

TEST_CASE("capi: a damaged file is reported as damaged, whatever the destination's size", "[capi]") {
    const stz::Bytes in = synth_file("session9", 50, 2);
    const stz::Bytes z = api_compress(in, nullptr);
    stz::Bytes small(in.size() / 2), enough(in.size() + 4096);
    std::mt19937_64 g(5);
    int damaged = 0;
    for (size_t at = 0; at < std::min<size_t>(z.size(), 64); ++at) {  // the header and the first record
        stz::Bytes f = z;
        f[at] ^= static_cast<uint8_t>(1u << (g() % 8));
        size_t n = 0;
        const int full = stz_decompress(f.data(), f.size(), enough.data(), enough.size(), &n);
        if (full == STZ_OK) continue;  // a flip the format does not depend on
        ++damaged;
        CHECK(full == STZ_ERROR_CORRUPT);
        // Whatever that flip did to the sizes, a short buffer does not hide the damage: neither
        // one the first chunk already overflows, before its check, nor one a later chunk does.
        CHECK(stz_decompress(f.data(), f.size(), small.data(), 4, &n) == STZ_ERROR_CORRUPT);
        CHECK(stz_decompress(f.data(), f.size(), small.data(), small.size(), &n) == STZ_ERROR_CORRUPT);
        CHECK(n == 0);
    }
    CHECK(damaged > 32);
}

TEST_CASE("capi: bad parameters are refused with a detail, before any work", "[capi]") {
    const stz::Bytes in = synth_file("seq3", 20, 1);
    stz::Bytes out(stz_compress_bound(in.size()));
    size_t n = 0;
    stz_params p = params_for(7);
    CHECK(stz_compress(in.data(), in.size(), out.data(), out.size(), &n, &p) == STZ_ERROR_PARAMETER);
    CHECK(std::string(stz_last_error_detail()).find("preset") != std::string::npos);
    p = params_for(STZ_PRESET_DEFAULT, 0, "nosuchcodec:3");
    CHECK(stz_compress(in.data(), in.size(), out.data(), out.size(), &n, &p) == STZ_ERROR_PARAMETER);
    CHECK(std::string(stz_last_error_detail()).find("nosuchcodec") != std::string::npos);
    p = params_for(STZ_PRESET_DEFAULT, -2);
    CHECK(stz_compress(in.data(), in.size(), out.data(), out.size(), &n, &p) == STZ_ERROR_PARAMETER);
    p = params_for(STZ_PRESET_DEFAULT);
    p.struct_size = 8;
    CHECK(stz_compress(in.data(), in.size(), out.data(), out.size(), &n, &p) == STZ_ERROR_PARAMETER);
    CHECK(stz_compress(nullptr, 10, out.data(), out.size(), &n, nullptr) == STZ_ERROR_PARAMETER);
    CHECK(stz_compress(in.data(), in.size(), out.data(), out.size(), nullptr, nullptr) == STZ_ERROR_PARAMETER);
    CHECK(stz_decompress(nullptr, 10, out.data(), out.size(), &n) == STZ_ERROR_PARAMETER);
    CHECK(stz_compress_stream(nullptr, nullptr, write_cb, nullptr, nullptr) == STZ_ERROR_PARAMETER);
    CHECK(stz_decompress_stream(read_cb, nullptr, write_cb, nullptr, -1) == STZ_ERROR_PARAMETER);
    // A success clears the detail.
    CHECK(stz_compress(in.data(), in.size(), out.data(), out.size(), &n, nullptr) == STZ_OK);
    CHECK(std::string(stz_last_error_detail()).empty());
}

TEST_CASE("capi: streaming compression writes the bytes stz_compress writes, and callback errors are reported", "[capi]") {
    const stz::Bytes in = synth_file("session10", 200, 5);
    const stz_params p = params_for(STZ_PRESET_FAST, 2);
    Reader r{&in};
    r.step = 333;
    Writer w;
    REQUIRE(stz_compress_stream(read_cb, &r, write_cb, &w, &p) == STZ_OK);
    CHECK(w.out == api_compress(in, &p));

    Reader bad{&in};
    bad.fail_at = 5000;
    Writer w2;
    CHECK(stz_compress_stream(read_cb, &bad, write_cb, &w2, &p) == STZ_ERROR_READ);
    CHECK(std::string(stz_last_error_detail()).find("offset 5") != std::string::npos);
    Reader r3{&in};
    Writer full;
    full.limit = 100;
    CHECK(stz_compress_stream(read_cb, &r3, write_cb, &full, &p) == STZ_ERROR_WRITE);

    const stz::Bytes z = w.out;
    Reader r4{&z};
    r4.fail_at = 200;
    Writer w4;
    CHECK(stz_decompress_stream(read_cb, &r4, write_cb, &w4, 1) == STZ_ERROR_READ);
    Reader r5{&z};
    Writer w5;
    w5.limit = 10;
    CHECK(stz_decompress_stream(read_cb, &r5, write_cb, &w5, 1) == STZ_ERROR_WRITE);
}

TEST_CASE("capi: the streaming input spools to a temporary file past its memory limit", "[capi]") {
    const stz::Bytes in = random_bytes(5u << 20, 9);
    Reader r{&in};
    r.step = 70000;
    stzcapi::SpooledInput spooled([&](uint8_t* b, size_t n) { return size_t(read_cb(&r, b, n)); }, 2u << 20);
    CHECK(spooled.spooled());
    REQUIRE(spooled.size() == in.size());
    for (uint64_t off : {uint64_t(0), uint64_t(1), uint64_t(3u << 20), uint64_t(in.size() - 10)}) {
        stz::Bytes got(10);
        spooled.read_at(off, got.data(), got.size());
        CHECK(std::equal(got.begin(), got.end(), in.begin() + off));
    }
    stz::Bytes past(11);
    CHECK_THROWS(spooled.read_at(in.size() - 10, past.data(), past.size()));
    Reader small{&in};
    stzcapi::SpooledInput mem([&](uint8_t* b, size_t n) { return size_t(read_cb(&small, b, n)); }, 64u << 20);
    CHECK(!mem.spooled());
    CHECK(mem.size() == in.size());
}

TEST_CASE("capi: garbage, truncations and bit flips never crash either decoder", "[capi]") {
    const stz::Bytes in = synth_file("seq3", 80, 4);
    const stz::Bytes z = api_compress(in, nullptr);
    std::vector<stz::Bytes> bad;
    for (size_t cut : {size_t(0), size_t(1), size_t(8), size_t(20), z.size() / 3, z.size() / 2, z.size() - 1})
        bad.emplace_back(z.begin(), z.begin() + cut);
    std::mt19937_64 g(11);
    for (int i = 0; i < 150; ++i) {
        stz::Bytes f = z;
        f[g() % f.size()] ^= static_cast<uint8_t>(1u << (g() % 8));
        bad.push_back(std::move(f));
    }
    for (size_t n : {size_t(1), size_t(64), size_t(5000)}) bad.push_back(random_bytes(n, n));
    stz::Bytes magic_then_garbage = random_bytes(3000, 1);
    std::copy_n(z.begin(), 16, magic_then_garbage.begin());
    bad.push_back(magic_then_garbage);
    stz::Bytes out(in.size());
    for (const auto& b : bad) {
        size_t n = 0;
        const int rc = stz_decompress(b.data(), b.size(), out.data(), out.size(), &n);
        if (rc == STZ_OK) {  // a flip the format does not depend on must still give the original
            CHECK(n == in.size());
            CHECK(out == in);
        } else {
            CHECK(rc < 0);
            CHECK(std::string(stz_last_error_detail()).size() > 0);
        }
        stz::Bytes streamed;
        const int rs = stream_decompress(b, streamed, 1 + b.size() % 4000);
        if (rs == STZ_OK) CHECK(streamed == in);
        else CHECK((rs == STZ_ERROR_CORRUPT || rs == STZ_ERROR_GENERIC));
        uint64_t size = 0;
        (void)stz_decompressed_size(b.data(), b.size(), &size);
        char* json = nullptr;
        if (stz_inspect_json(b.data(), b.size(), &json) == STZ_OK) stz_free(json);
    }
    // Truncations and garbage are always refused, with an offset in the detail.
    size_t n = 0;
    CHECK(stz_decompress(z.data(), z.size() - 1, out.data(), out.size(), &n) == STZ_ERROR_CORRUPT);
    CHECK(std::string(stz_last_error_detail()).find("offset") != std::string::npos);
    CHECK(stz_decompress(bad.back().data(), bad.back().size(), out.data(), out.size(), &n) != STZ_OK);
}

TEST_CASE("capi: calls on several threads at once, each with its own error detail", "[capi]") {
    const stz::Bytes in = synth_file("seq2", 100, 6);
    const stz::Bytes expected = api_compress(in, nullptr);
    std::vector<int> ok(4, 0);
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([&, t] {
            stz::Bytes out(stz_compress_bound(in.size()));
            size_t n = 0;
            bool good = true;
            for (int i = 0; i < 3; ++i) {
                good &= stz_compress(in.data(), in.size(), out.data(), out.size(), &n, nullptr) == STZ_OK;
                good &= n == expected.size() && std::equal(expected.begin(), expected.end(), out.begin());
                const uint8_t junk[4] = {1, 2, 3, 4};
                good &= stz_decompress(junk, t, out.data(), out.size(), &n) != STZ_OK;  // t bytes of junk
                good &= std::string(stz_last_error_detail()).size() > 0;
            }
            ok[t] = good;
        });
    for (auto& t : ts) t.join();
    CHECK(ok == std::vector<int>(4, 1));
    CHECK(std::string(stz_last_error_detail()).empty());  // this thread failed nothing
}

TEST_CASE("capi: every corpus file round-trips through the C API", "[capi][corpus]") {
    const std::vector<std::string> dirs = corpus_folders();
    if (dirs.empty()) skip_test("no corpus folder (set STATEZIP_CORPUS=../shared/corpus:../shared/corpus-legacy)");
    size_t files = 0;
    for (const auto& d : dirs)
        for (const auto& e : fs::recursive_directory_iterator(d)) {
            if (!e.is_regular_file() || e.path().extension() != ".bin") continue;
            INFO(e.path().string());
            const stz::Bytes in = read_file(e.path().string());
            const stz::Bytes z = api_compress(in, nullptr);
            CHECK(api_decompress(z) == in);
            ++files;
        }
    if (files == 0) skip_test("the corpus folders hold no .bin file");
}

TEST_CASE("capi: related states given a reference (--patch-from in memory)", "[capi][patch]") {
    // REF: the file with its last 20 cells changed (a conversation that went another way).
    stz::Bytes file = synth_file("session9", 120, 3), ref = file;
    for (size_t i = file.size() - 4000; i < file.size(); i += 7) ref[i] ^= 0x21;
    stz_params p = params_for(STZ_PRESET_DEFAULT, 1);
    stz::Bytes z(stz_compress_bound(file.size()));
    size_t n = 0;
    REQUIRE(stz_compress_ref(file.data(), file.size(), ref.data(), ref.size(), "turn1.bin", z.data(), z.size(), &n, &p) ==
            STZ_OK);
    z.resize(n);
    CHECK(z.size() * 3 < api_compress(file, &p).size());
    uint64_t size = 0;
    REQUIRE(stz_decompressed_size(z.data(), z.size(), &size) == STZ_OK);
    CHECK(size == file.size());  // the size it rebuilds, not the stored stream's
    stz::Bytes back(size);
    REQUIRE(stz_decompress_ref(z.data(), z.size(), ref.data(), ref.size(), back.data(), back.size(), &n) == STZ_OK);
    CHECK(n == file.size());
    CHECK(back == file);
    // Without the reference, or with another one: refused, naming the one it needs.
    CHECK(stz_decompress(z.data(), z.size(), back.data(), back.size(), &n) == STZ_ERROR_REFERENCE);
    CHECK(std::string(stz_last_error_detail()).find("turn1.bin") != std::string::npos);
    CHECK(stz_decompress_ref(z.data(), z.size(), file.data(), file.size(), back.data(), back.size(), &n) == STZ_ERROR_REFERENCE);
    CHECK(std::string(stz_error_message(STZ_ERROR_REFERENCE)).find("reference") != std::string::npos);
    // Too small a destination says how much is needed; an ordinary .stz decodes with any ref.
    CHECK(stz_compress_ref(file.data(), file.size(), ref.data(), ref.size(), nullptr, z.data(), 10, &n, &p) ==
          STZ_ERROR_DST_TOO_SMALL);
    CHECK(std::string(stz_last_error_detail()).find("needed") != std::string::npos);
    const stz::Bytes plain = api_compress(file, &p);
    REQUIRE(stz_decompress_ref(plain.data(), plain.size(), ref.data(), ref.size(), back.data(), back.size(), &n) == STZ_OK);
    CHECK(back == file);
    CHECK(stz_compress_ref(file.data(), file.size(), nullptr, 5, nullptr, z.data(), z.size(), &n, &p) == STZ_ERROR_PARAMETER);
}

TEST_CASE("capi: stz_params of the first layout stay accepted, and the first init never writes past them", "[capi]") {
    // A caller built against the first layout: its four fields, then memory that is not the struct's.
    struct alignas(stz_params) Old {
        unsigned char bytes[STZ_PARAMS_SIZE_V1];
        unsigned char canary[16];
    } old;
    std::memset(&old, 0xab, sizeof old);
    void (*init_v1)(stz_params*) = &(stz_params_init);  // the exported first function, not the macro
    init_v1(reinterpret_cast<stz_params*>(&old));
    for (unsigned char c : old.canary) REQUIRE(c == 0xab);
    stz_params as_old;
    std::memcpy(&as_old, old.bytes, STZ_PARAMS_SIZE_V1);
    CHECK(as_old.struct_size == STZ_PARAMS_SIZE_V1);
    CHECK(as_old.preset == STZ_PRESET_DEFAULT);
    CHECK(as_old.codec == nullptr);
    // Compressing with the old struct gives what the current one gives for the same fields.
    const stz::Bytes in = synth_file("seq3", 40, 5);
    stz::Bytes out(stz_compress_bound(in.size()));
    size_t n = 0;
    reinterpret_cast<stz_params*>(&old)->preset = STZ_PRESET_FAST;
    REQUIRE(stz_compress(in.data(), in.size(), out.data(), out.size(), &n, reinterpret_cast<stz_params*>(&old)) == STZ_OK);
    out.resize(n);
    const stz_params now = params_for(STZ_PRESET_FAST);
    CHECK(now.struct_size == sizeof(stz_params));
    CHECK(now.lossy == nullptr);
    CHECK(out == api_compress(in, &now));
    // An unknown size is refused by every call.
    stz_params bad;
    stz_params_init_size(&bad, sizeof bad + 8);
    CHECK(bad.struct_size == 0);
    CHECK(stz_compress(in.data(), in.size(), out.data(), out.size(), &n, &bad) == STZ_ERROR_PARAMETER);
}

TEST_CASE("capi: a lossy mode through stz_params gives the CLI's --lossy bytes", "[capi][lossy]") {
    stzsynth::Spec s;
    s.flavour = "seq3";
    s.cells = 60;
    s.k_type = s.v_type = stz::ElemType::F32;
    s.v_trans = false;  // flash attention's layout: V rows round too
    stz::MemorySink sink;
    stzsynth::write_state(s, sink);
    const stz::Bytes& in = sink.out;
    const std::string dir = temp_dir("capi-lossy");
    write_file(dir + "/in.bin", in);
    stz_params p = params_for(STZ_PRESET_FAST, 1);
    p.lossy = "f16-exact";
    const stz::Bytes api = api_compress(in, &p);
    REQUIRE(sh(kBin + " -q -f --fast --lossy=f16-exact '" + dir + "/in.bin' -o '" + dir + "/cli.stz'") == 0);
    CHECK(read_file(dir + "/cli.stz") == api);
    const stz::Bytes back = api_decompress(api);
    CHECK(back.size() == in.size());
    CHECK(back != in);  // rounded
    p.lossy = nullptr;
    CHECK(api_compress(in, &p).size() > api.size());
    // A bad spec, and a lossy mode with a reference, are refused with a detail.
    stz::Bytes out(stz_compress_bound(in.size()));
    size_t n = 0;
    p.lossy = "f8-maybe";
    CHECK(stz_compress(in.data(), in.size(), out.data(), out.size(), &n, &p) == STZ_ERROR_PARAMETER);
    CHECK(std::string(stz_last_error_detail()).find("lossy") != std::string::npos);
    p.lossy = "f16-exact";
    CHECK(stz_compress_ref(in.data(), in.size(), in.data(), in.size(), nullptr, out.data(), out.size(), &n, &p) ==
          STZ_ERROR_PARAMETER);
    CHECK(std::string(stz_last_error_detail()).find("stz_compress_ref") != std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST_CASE("capi: decompression with a thread count, plain and with a reference", "[capi][patch]") {
    stz::Bytes file = synth_file("session9", 120, 4), ref = file;
    for (size_t i = file.size() - 3000; i < file.size(); i += 5) ref[i] ^= 0x11;
    const stz_params p = params_for(STZ_PRESET_DEFAULT, 2);
    const stz::Bytes plain = api_compress(file, &p);
    stz::Bytes z(stz_compress_bound(file.size()));
    size_t n = 0;
    REQUIRE(stz_compress_ref(file.data(), file.size(), ref.data(), ref.size(), "r", z.data(), z.size(), &n, &p) == STZ_OK);
    z.resize(n);
    for (int threads : {1, 2, 0}) {
        INFO("threads " << threads);
        stz::Bytes back(file.size());
        REQUIRE(stz_decompress_threads(plain.data(), plain.size(), back.data(), back.size(), &n, threads) == STZ_OK);
        CHECK((n == file.size() && back == file));
        std::fill(back.begin(), back.end(), 0);
        REQUIRE(stz_decompress_ref_threads(z.data(), z.size(), ref.data(), ref.size(), back.data(), back.size(), &n,
                                           threads) == STZ_OK);
        CHECK((n == file.size() && back == file));
    }
    stz::Bytes back(file.size());
    CHECK(stz_decompress_threads(plain.data(), plain.size(), back.data(), back.size(), &n, -1) == STZ_ERROR_PARAMETER);
    CHECK(stz_decompress_ref_threads(z.data(), z.size(), ref.data(), ref.size(), back.data(), back.size(), &n, -3) ==
          STZ_ERROR_PARAMETER);
    CHECK(stz_decompress_threads(z.data(), z.size(), back.data(), back.size(), &n, 1) == STZ_ERROR_REFERENCE);
}
