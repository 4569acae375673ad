// The CLI side of --lossy (src/lib/lossy/lossy.hpp): flag checks and the lines it prints.
#pragma once
#include <string>

#include "engine/engine.hpp"

namespace stzcli {

// --lossy=SPEC for compression; refuses it with -d/-t/-l, and with --rm unless --force (the
// input would be the only exact copy). Throws stz::Error with the message for the user.
stz::LossySpec lossy_from_flags(const std::string& spec, bool compressing, bool remove_input, bool force);
// After compressing: one line with the mode and the error per K/V group (and why anything
// was left exact).
void print_lossy_summary(const std::string& file, const stz::CompressResult& r, int verbosity);
// After decompressing a lossy .stz: a one-line note (on a terminal, or with -v).
void print_lossy_decompress_note(const std::string& file, const stz::ContainerHeader& h, int verbosity);

}  // namespace stzcli
