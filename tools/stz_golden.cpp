// What tools/make_golden.sh asks of the library:
//   stz-golden codecs      the codec registry (codecs.def), one line per codec:
//                          "id<TAB>name<TAB>specs", the specs being the codec's own sample_specs()
//   stz-golden used FILE   the codec ids the chunk stages of a .stz name, one line, ascending
//   stz-golden hash FILE   XXH3-64 of the file (16 hex digits), the hash MANIFEST.tsv records
//   stz-golden related FILE OUT CELL TOKEN
//                          OUT: FILE as an earlier save of another turn, for --patch-from: the
//                          KV cells from CELL on changed, and token TOKEN (-1: none) changed, so
//                          a patch of FILE shares the cells before CELL and, past TOKEN, predicts
//                          the tokens REF lacks from their cells
//   stz-golden predictable FILE OUT REF
//                          OUT: FILE with token i = 7i mod 13 and each layer-0 V cell that of the
//                          first position of its token; REF: OUT with other tokens. A patch of
//                          OUT given REF predicts its tokens from their cells (map version 2).
// Golden files are written from the registry, so a codec added to it is pinned without editing
// the script.
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "related/cells.hpp"
#include "container/container.hpp"
#include "formats/detect.hpp"

namespace {

int list_registry() {
    for (const stz::Codec* c : stz::all_codecs()) {
        std::printf("%u\t%.*s\t", unsigned(c->id()), int(c->name().size()), c->name().data());
        const auto specs = c->sample_specs();
        for (size_t i = 0; i < specs.size(); ++i) std::printf("%s%s", i ? " " : "", specs[i].c_str());
        std::printf("\n");
    }
    return 0;
}

stz::Bytes read_all(const char* path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw stz::Error("cannot open the file");
    return stz::Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

int print_hash(const char* path) {
    std::printf("%016llx\n", static_cast<unsigned long long>(stz::hash64(read_all(path))));
    return 0;
}

void write_all(const char* path, const stz::Bytes& b) {
    std::ofstream o(path, std::ios::binary);
    o.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    if (!o.flush()) throw stz::Error("cannot write " + std::string(path));
}

int write_related(const char* path, const char* out_path, uint64_t first_changed, long long token) {
    stz::Bytes file = read_all(path);
    const stz::Bytes original = file;
    stz::MemorySource src(original);
    const stz::ParsedFile parsed = stz::parse_state_file(src, {});
    const std::vector<stz::CellGroup> groups = stz::find_cell_groups(parsed);
    if (groups.empty()) throw stz::Error("no KV cells");
    for (const auto& g : groups) {
        stz::Bytes cell(g.cell_bytes);
        for (uint64_t c = first_changed; c < g.n_cells; ++c) {
            stz::read_cells(src, g, c, 1, cell.data());
            uint64_t at = 0;
            for (const auto& p : g.parts)
                for (uint64_t ch = 0; ch < p.channels; ++ch, at += p.piece_bytes)
                    for (uint64_t i = 0; i < p.piece_bytes; ++i) file[p.piece_offset(c, ch) + i] = cell[at + i] ^ 0x5a;
        }
    }
    if (token >= 0) {
        const stz::Section* tokens = nullptr;
        for (const auto& sec : parsed.sections)
            if (sec.name == "tokens") tokens = &sec;
        if (!tokens || uint64_t(token) * 4 + 4 > tokens->size) throw stz::Error("no token " + std::to_string(token));
        file[tokens->offset + uint64_t(token) * 4] ^= 0x01;
    }
    write_all(out_path, file);
    return 0;
}

int write_predictable(const char* path, const char* out_path, const char* ref_path) {
    stz::Bytes file = read_all(path);
    const stz::Bytes original = file;
    stz::MemorySource src(original);
    const stz::ParsedFile p = stz::parse_state_file(src, {});
    const stz::Section* tokens = nullptr;
    for (const auto& sec : p.sections)
        if (sec.kind == stz::SectionKind::Tokens) tokens = &sec;
    const std::vector<stz::CellGroup> layers = stz::split_parts(stz::find_cell_groups(p));
    const stz::CellGroup* v0 = nullptr;
    for (const auto& g : layers)
        if (!v0 && p.sections[g.parts[0].section].kind == stz::SectionKind::KvValue) v0 = &g;
    if (!tokens || !v0 || tokens->size / 4 < 14) throw stz::Error("no tokens or no V cells");
    stz::Bytes cell(v0->cell_bytes);
    for (uint32_t i = 0; i < tokens->size / 4 && i < v0->n_cells; ++i) {
        stz::store_le<uint32_t>(file.data() + tokens->offset + 4 * i, (7 * i) % 13);
        if (i < 13) continue;
        stz::read_cells(src, *v0, i % 13, 1, cell.data());  // the cell of the first position of this token
        uint64_t at = 0;
        for (const auto& part : v0->parts)
            for (uint64_t ch = 0; ch < part.channels; ++ch, at += part.piece_bytes)
                std::copy_n(cell.data() + at, part.piece_bytes, file.data() + part.piece_offset(i, ch));
    }
    stz::Bytes ref = file;
    for (uint64_t i = 0; i < tokens->size; i += 4) ref[tokens->offset + i] ^= 0x40;
    write_all(out_path, file);
    write_all(ref_path, ref);
    return 0;
}

int list_used(const char* path) {
    const stz::Bytes data = read_all(path);
    stz::MemoryStream s(data);
    stz::ContainerReader r(s);
    std::set<unsigned> ids;
    while (auto c = r.next())
        for (const auto& st : c->pipeline.stages) ids.insert(st.codec->id());
    const char* sep = "";
    for (unsigned id : ids) std::printf("%s%u", sep, id), sep = " ";
    std::printf("\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc == 2 && std::strcmp(argv[1], "codecs") == 0) return list_registry();
        if (argc == 3 && std::strcmp(argv[1], "used") == 0) return list_used(argv[2]);
        if (argc == 3 && std::strcmp(argv[1], "hash") == 0) return print_hash(argv[2]);
        if (argc == 5 && std::strcmp(argv[1], "predictable") == 0) return write_predictable(argv[2], argv[3], argv[4]);
        if (argc == 6 && std::strcmp(argv[1], "related") == 0)
            return write_related(argv[2], argv[3], std::stoull(argv[4]), std::stoll(argv[5]));
        std::fprintf(stderr, "usage: stz-golden codecs | used FILE.stz | hash FILE | related FILE OUT CELL TOKEN | predictable FILE OUT REF\n");
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "stz-golden: %s: %s\n", argc > 2 ? argv[2] : "", e.what());
        return 1;
    }
}
