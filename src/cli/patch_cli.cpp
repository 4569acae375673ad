#include "patch_cli.hpp"

#include <sys/stat.h>

#include "file_io.hpp"
#include "related/patch.hpp"

namespace stzcli {

std::shared_ptr<FileSource> open_reference(const std::string& path) {
    if (path.empty()) return nullptr;
    if (path == "-") throw stz::Error("--patch-from needs a file, not standard input (it is read more than once)");
    return std::make_shared<FileSource>(path);
}

namespace {
bool is_reference(const std::string& path, const struct stat& ref) {
    struct stat st;
    return path != "-" && !path.empty() && ::stat(path.c_str(), &st) == 0 && same_file(st, ref);
}
}  // namespace

std::string reference_clash(const Options& o, const struct stat& ref,
                            const std::function<std::string(const std::string&)>& output_of) {
    const std::string ref_name = "the --patch-from reference " + o.patch_from;
    struct stat out;
    if (::fstat(1, &out) == 0 && S_ISREG(out.st_mode) && same_file(out, ref))
        return "standard output is " + ref_name + "; writing there would change it";
    const bool removes = o.remove_input && (o.mode == Mode::Compress || o.mode == Mode::Decompress);
    for (const auto& in : o.files) {
        if (removes && is_reference(in, ref))
            return in + ": is " + ref_name + "; --rm would remove it, and every output made against it needs it";
        if (const std::string target = output_of(in); is_reference(target, ref))
            return in + ": its output " + target + " is " + ref_name + "; choose another output";
    }
    return "";
}

stz::CompressResult compress_with_reference(stz::InputSource& in, stz::InputSource& ref, const std::string& ref_name,
                                            stz::OutputSink& out, const stz::CompressOptions& opt, std::string& detail) {
    stz::PatchResult p = stz::compress_patch(in, ref, ref_name, out, opt);
    detail = std::to_string(p.shared_cells) + " of " + std::to_string(p.file_cells) + " KV cells and " +
             std::to_string(p.shared_token_bytes / 4) + " tokens taken from the reference";
    if (p.predicted_tokens) detail += ", " + std::to_string(p.predicted_tokens) + " tokens predicted from their cells";
    stz::CompressResult r = std::move(p.stored);
    r.original_bytes = p.original_bytes;
    r.compressed_bytes = p.compressed_bytes;
    return r;
}


}  // namespace stzcli
