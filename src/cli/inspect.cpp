// statezip inspect: the sections of a state file (or of the file inside a .stz).
#include <cstdio>
#include <map>

#include "commands.hpp"
#include "file_io.hpp"
#include "report/inspect.hpp"
#include "report.hpp"
#include "report/stats.hpp"

namespace stzcli {

using namespace stz;

namespace {

void print_table(const std::string& file, const ParsedFile& pf, uint64_t size, const std::vector<ByteStats>* stats,
                 const std::vector<uint64_t>* stored, const std::vector<HeaderProperty>* props = nullptr,
                 const InspectPatch* patch = nullptr) {
    const std::string format = format_line(pf.format, pf.version ? int64_t(*pf.version) : -1, pf.detail);
    if (patch) {  // the sections below are the stored stream's
        std::printf("%s: --patch-from file: rebuilds %s given the reference %s\n", printable(file).c_str(),
                    human_bytes(size).c_str(), printable(patch->reference.describe()).c_str());
        std::printf("  stored stream: %s, %s\n", format.c_str(), human_bytes(patch->stored_stream_bytes).c_str());
    } else {
        std::printf("%s: %s, %s\n", printable(file).c_str(), format.c_str(), human_bytes(size).c_str());
    }
    std::string facts;
    auto fact = [&](const char* k, const std::optional<uint64_t>& v) {
        if (v) facts += std::string(facts.empty() ? "" : ", ") + k + " " + std::to_string(*v);
    };
    if (!pf.arch.empty()) facts = "arch " + pf.arch;
    fact("tokens", pf.n_tokens);
    fact("cells", pf.n_cells);
    fact("layers", pf.n_layer);
    fact("n_ctx", pf.n_ctx);
    fact("n_embd", pf.n_embd);
    if (!facts.empty()) std::printf("  %s\n", printable(facts).c_str());
    if (!pf.note.empty()) std::printf("  note: %s\n", printable(pf.note).c_str());
    if (props)
        for (const auto& p : *props)
            std::printf("  %s: %s%s\n", printable(p.key).c_str(), printable(p.value).c_str(), p.required ? " (needed to decode)" : "");
    std::printf("  %-24s %12s %12s  %-6s %-26s %7s %7s %7s\n", "section", "offset", "bytes", "type", "shape",
                stats ? "zero%" : "stored", stats ? "H0 b/B" : "ratio", stats ? "ch b/el" : "");
    std::map<std::string, std::pair<uint64_t, uint64_t>> totals;
    for (size_t i = 0; i < pf.sections.size(); ++i) {
        const Section& s = pf.sections[i];
        auto& t = totals[section_kind_name(s.kind)];
        t.first += s.size;
        if (stored) t.second += (*stored)[i];
        if (stats) {
            const auto& st = (*stats)[i];
            std::printf("  %-24s %12llu %12llu  %-6s %-26s %7.2f %7.3f %7s\n", printable(s.name).c_str(), (unsigned long long)s.offset,
                        (unsigned long long)s.size, printable(s.type_string()).c_str(), printable(s.shape_string()).c_str(),
                        100 * st.zero_fraction,
                        st.entropy_bits, st.channel_bound ? fixed(st.channel_bound, 2).c_str() : "");
        } else {
            uint64_t k = (*stored)[i];
            std::printf("  %-24s %12llu %12llu  %-6s %-26s %7llu %7.3f\n", printable(s.name).c_str(), (unsigned long long)s.offset,
                        (unsigned long long)s.size, printable(s.type_string()).c_str(), printable(s.shape_string()).c_str(),
                        (unsigned long long)k,
                        k ? double(s.size) / k : 0.0);
        }
    }
    std::printf("  totals by kind:");
    for (auto& [k, v] : totals) {
        std::printf(" %s %s", printable(k).c_str(), human_bytes(v.first).c_str());
        if (stored) std::printf(" (stored %s)", human_bytes(v.second).c_str());
        std::printf(";");
    }
    std::printf("\n");
}

}  // namespace

int run_inspect(const std::vector<std::string>& files, bool json, const ParseHints& hints) {
    int rc = 0;
    const bool array = json && files.size() > 1;  // one file: a single JSON object
    if (array) std::printf("[\n");
    for (size_t fi = 0; fi < files.size(); ++fi) {
        const std::string& f = files[fi];
        try {
            FileSource src(f);
            InspectReport r = inspect_input(src, hints);  // inspect.hpp: shared with the C API
            if (json) std::printf("%s%s\n", inspect_json(f, r).c_str(), fi + 1 == files.size() ? "" : ",");
            else print_table(f, r.parsed, r.bytes, r.is_stz ? nullptr : &r.stats, r.is_stz ? &r.stored : nullptr,
                             r.is_stz ? &r.properties : nullptr, r.patch ? &*r.patch : nullptr);
        } catch (const std::exception& e) {
            print_error(f, e.what());
            rc = 1;
        }
    }
    if (array) std::printf("]\n");
    return rc;
}

}  // namespace stzcli
