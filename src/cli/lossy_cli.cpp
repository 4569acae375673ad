#include "lossy_cli.hpp"

#include <cstdio>

#include "file_io.hpp"
#include "report.hpp"

namespace stzcli {

stz::LossySpec lossy_from_flags(const std::string& spec, bool compressing, bool remove_input, bool force) {
    if (spec.empty()) return {};
    if (!compressing) throw stz::Error("--lossy applies to compression only");
    stz::LossySpec s = stz::parse_lossy_spec(spec);
    if (remove_input && !force)
        throw stz::Error("--lossy with --rm would remove the only exact copy of each input; add --force to do it anyway");
    return s;
}

void print_lossy_summary(const std::string& file, const stz::CompressResult& r, int verbosity) {
    if (verbosity < 1 || !r.lossy) return;
    std::fprintf(stderr, "%s : lossy %s\n", file.c_str(), printable(r.lossy->summary()).c_str());
}

void print_lossy_decompress_note(const std::string& file, const stz::ContainerHeader& h, int verbosity) {
    const stz::HeaderProperty* p = h.property(stz::kLossyProperty);
    if (!p || verbosity < 1 || (verbosity < 2 && !is_terminal(2))) return;
    // One line, whatever a crafted header holds (the value may be 64 KiB): -l shows it all.
    std::string value = printable(p->value);
    if (value.size() > 300) value = value.substr(0, 300) + "...";
    std::fprintf(stderr, "statezip: %s: note: lossy file, K/V values were rounded when compressed (%s)\n",
                 file.c_str(), value.c_str());
}

}  // namespace stzcli
