// stz-gen: writes synthetic llama.cpp state files of any flavour and size (spec-conformant
// layout, realistic float K/V), for tests and for the large-file benchmarks.
//   stz-gen FLAVOUR OUT [--size BYTES] [--cells N] [--layers N] [--embd N] [--ctx N]
//           [--type f16|bf16|f32|q8_0|q4_0|q4_1|q5_0|q5_1|iq4_nl] [--fa] [--streams N] [--seed N]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../src/cli/file_io.hpp"
#include "synth.hpp"

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: stz-gen FLAVOUR OUT [--size BYTES] [--cells N] [--layers N] [--embd N] [--ctx N] "
                             "[--type T] [--fa] [--streams N] [--seed N]\nflavours:");
        for (auto& f : stzsynth::flavours()) std::fprintf(stderr, " %s", f.c_str());
        std::fprintf(stderr, "\n");
        return 2;
    }
    stzsynth::Spec s;
    s.flavour = argv[1];
    std::string out = argv[2];
    uint64_t size = 0;
    try {
        for (int i = 3; i < argc; ++i) {
            std::string a = argv[i];
            auto val = [&]() -> std::string {
                if (i + 1 >= argc) throw stz::Error(a + " needs a value");
                return argv[++i];
            };
            if (a == "--size") size = std::stoull(val());
            else if (a == "--cells") s.cells = std::stoul(val());
            else if (a == "--layers") s.n_layer = std::stoul(val());
            else if (a == "--embd") s.n_embd = std::stoul(val());
            else if (a == "--ctx") s.n_ctx = std::stoul(val());
            else if (a == "--streams") s.n_stream = std::stoul(val());
            else if (a == "--seed") s.seed = std::stoull(val());
            else if (a == "--fa") s.v_trans = false;
            else if (a == "--type") {
                auto t = stz::elem_type_from_name(val());
                if (!t) throw stz::Error("unknown type");
                s.k_type = s.v_type = *t;
                if (s.v_trans && elem_type_info(*t).block_elems > 1) s.v_trans = false;  // quantized V needs FA
            } else throw stz::Error("unknown option " + a);
        }
        if (size) s.cells = stzsynth::cells_for_size(s, size);
        if (s.cells > s.n_ctx && s.flavour.rfind("legacy", 0) == 0) s.n_ctx = s.cells;
        if (out == "-") {
            stzcli::FdSink sink(1, "(stdout)");
            stzsynth::write_state(s, sink);
            sink.flush();
        } else {
            stzcli::AtomicFile f(out, true, 0644);
            stzsynth::write_state(s, f);
            f.commit();
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "stz-gen: %s\n", e.what());
        return 1;
    }
    return 0;
}
