// Hashing speed of the cell core (src/lib/related/cells.hpp) vs in-process zstd:3 on the same bytes.
// Build and run (bench/PATCH.md): see the command there.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <zstd.h>
#include "related/cells.hpp"
#include "formats/detect.hpp"
#include "synth.hpp"
using namespace stz;
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static void run(const char* label, const Bytes& b) {
    MemorySource src(b);
    ParsedFile pf = parse_state_file(src, {});
    auto groups = find_cell_groups(pf);
    uint64_t kv = 0; for (auto& g : groups) kv += g.n_cells * g.cell_bytes;
    double best = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
        double t = now();
        for (auto& g : groups) { auto h = hash_cells(src, g); if (h.empty()) std::abort(); }
        best = std::min(best, now() - t);
    }
    Bytes out(ZSTD_compressBound(b.size()));
    double zbest = 1e9;
    for (int rep = 0; rep < 3; ++rep) { double t = now(); ZSTD_compress(out.data(), out.size(), b.data(), b.size(), 3); zbest = std::min(zbest, now() - t); }
    bool tr = false; for (auto& g : groups) for (auto& p : g.parts) tr |= p.transposed;
    std::printf("%s: %zu groups, %.1f MB of cells (%s V), hash %.0f MB/s, zstd:3 %.0f MB/s -> %.1fx zstd:3\n", label, groups.size(), kv / 1e6,
                tr ? "transposed" : "row-major", kv / best / 1e6, b.size() / zbest / 1e6, (kv / best) / (b.size() / zbest));
}
int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) { std::ifstream f(argv[i], std::ios::binary); Bytes b((std::istreambuf_iterator<char>(f)), {}); run(argv[i], b); }
    for (bool vt : {true, false}) {
        stzsynth::Spec s; s.flavour = "session9"; s.n_layer = 16; s.n_embd = 1024; s.v_trans = vt; s.cells = 3000;
        MemorySink sink; stzsynth::write_state(s, sink);
        run(vt ? "synth 16x1024 f16 v_trans" : "synth 16x1024 f16 row V", sink.out);
    }
}
