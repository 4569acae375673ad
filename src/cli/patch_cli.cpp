#include "patch_cli.hpp"

#include "file_io.hpp"
#include "patch.hpp"

namespace stzcli {

std::shared_ptr<stz::InputSource> open_reference(const std::string& path) {
    if (path.empty()) return nullptr;
    if (path == "-") throw stz::Error("--patch-from needs a file, not standard input (it is read more than once)");
    return std::make_shared<FileSource>(path);
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
